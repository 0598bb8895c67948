// Seeded inputs generated on the device (inputs.rs), compiled after kernels.cu (its f2h stores FP16 with
// half::f16::from_f32's round to nearest even). Value i of a stream is the host's protocol::normal_at bit for
// bit: the same integer mixing, then the same two IEEE f32 roundings (__int2float_rn, and __fmul_rn, which is
// never contracted into an FMA); each is stored with the rounding of its format's host encoder (buffers.rs
// Elem::encode).

// splitmix64's output function and Weyl increment.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
#define SEEDED_GAMMA 0x9E3779B97F4A7C15ull

// normal_at(seed, i) with key = mix64(seed + gamma): Irwin-Hall of four 24-bit uniforms, centred, times
// sqrt(3) / 2^25 (NORMAL_SCALE_BITS).
__device__ __forceinline__ float seeded_normal(unsigned long long key, unsigned long long i) {
    const unsigned long long h1 = mix64(key + (2 * i + 1) * SEEDED_GAMMA);
    const unsigned long long h2 = mix64(key + (2 * i + 2) * SEEDED_GAMMA);
    const unsigned long long mask = (1ull << 24) - 1;
    const unsigned long long sum = (h1 >> 40) + (h1 & mask) + (h2 >> 40) + (h2 & mask);
    const int centred = (int)(2 * sum) - (int)(4 * mask);
    return __fmul_rn(__int2float_rn(centred), __uint_as_float(0x335db3d7u));
}

// half::bf16::from_f32: round to nearest even, NaN kept quiet.
__device__ __forceinline__ unsigned short seeded_bf16(float v) {
    const unsigned int u = __float_as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// float8 0.7's convert_to_fp8 with SatFinite (its port of cuda_fp8.hpp's __nv_cvt_double_to_fp8) on the value
// widened to double (exact): round to nearest even; beyond the largest finite value saturate to it (E4M3 448,
// E5M2 57344); NaN becomes 0x7F (E4M3) or 0x7E | its top mantissa bits (E5M2); below half the smallest
// subnormal, zero. The sign is kept in every case.
__device__ unsigned char seeded_fp8(float v, bool e4m3) {
    const unsigned long long x = (unsigned long long)__double_as_longlong((double)v);
    const unsigned int sig_bits = e4m3 ? 4u : 3u;
    const unsigned int mantissa_mask = e4m3 ? 0x7u : 0x3u;
    const unsigned long long min_denorm_o2 = e4m3 ? 0x3F50000000000000ull : 0x3EE0000000000000ull;
    const unsigned long long overflow = e4m3 ? 0x407D000000000000ull : 0x40EE000000000000ull - 1;
    const unsigned long long min_norm = e4m3 ? 0x3F90000000000000ull : 0x3F10000000000000ull;
    const unsigned long long half_ulp = 1ull << (53 - sig_bits - 1);
    const unsigned int sign = (unsigned int)(x >> 63) << 7;
    const unsigned int exp = ((unsigned int)(x >> 52) & 0x7FFu) - 1023u + (e4m3 ? 7u : 15u);
    const unsigned int mantissa = (unsigned int)(x >> (53 - sig_bits)) & mantissa_mask;
    const unsigned long long absx = x & 0x7FFFFFFFFFFFFFFFull;
    unsigned int res;
    if (absx <= min_denorm_o2) {
        res = 0;
    } else if (absx > 0x7FF0000000000000ull) {
        res = e4m3 ? 0x7Fu : (0x7Eu | mantissa);
    } else if (absx > overflow) {
        res = e4m3 ? 0x7Eu : 0x7Bu;
    } else if (absx >= min_norm) {
        res = (exp << (sig_bits - 1)) | mantissa;
        const unsigned long long round = x & ((half_ulp << 1) - 1);
        if (round > half_ulp || (round == half_ulp && (mantissa & 1u))) res += 1;
    } else {
        const unsigned int shift = (1u - exp) & 0xFFu;
        res = (mantissa | (1u << (sig_bits - 1))) >> shift;
        const unsigned long long round = (x | (1ull << 52)) & ((half_ulp << (shift + 1)) - 1);
        if (round > (half_ulp << shift) || (round == (half_ulp << shift) && (res & 1u))) res += 1;
    }
    return (unsigned char)((res & 0xFFu) | sign);
}

// Rust's f32::round (half away from zero) of t, then clamped to [lo, hi]; NaN gives 0 (Rust's `as`).
__device__ __forceinline__ int seeded_round_clamp(float t, float lo, float hi) {
    if (t != t) return 0;
    float r = truncf(t);
    const float frac = __fsub_rn(t, r);
    if (frac >= 0.5f) r = __fadd_rn(r, 1.0f);
    else if (frac <= -0.5f) r = __fsub_rn(r, 1.0f);
    return (int)fminf(fmaxf(r, lo), hi);
}

// Formats of seeded_fill (inputs.rs `Fill`): one element per item, except INT4 (eight per 32-bit item).
#define FILL_F32 0
#define FILL_F16 1
#define FILL_BF16 2
#define FILL_E4M3 3
#define FILL_E5M2 4
#define FILL_I8 5
#define FILL_INT4 6

// out[item] for item < n, grid-stride: the values of the stream `key` stored in `format`. INT4 (the W4A16
// weights): value j of a word is round(v * 3) within [-8, 7], offset binary in bits 4j..4j+3.
extern "C" __global__ void seeded_fill(void* __restrict__ out, unsigned long long n, unsigned long long key,
                                       int format) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        switch (format) {
        case FILL_F32: ((float*)out)[i] = seeded_normal(key, i); break;
        case FILL_F16: ((unsigned short*)out)[i] = f2h(seeded_normal(key, i)); break;
        case FILL_BF16: ((unsigned short*)out)[i] = seeded_bf16(seeded_normal(key, i)); break;
        case FILL_E4M3: ((unsigned char*)out)[i] = seeded_fp8(seeded_normal(key, i), true); break;
        case FILL_E5M2: ((unsigned char*)out)[i] = seeded_fp8(seeded_normal(key, i), false); break;
        case FILL_I8: {
            const float t = __fmul_rn(seeded_normal(key, i), 32.0f);
            ((signed char*)out)[i] = (signed char)seeded_round_clamp(t, -127.0f, 127.0f);
            break;
        }
        case FILL_INT4: {
            unsigned int word = 0;
            for (unsigned int j = 0; j < 8; ++j) {
                const float t = __fmul_rn(seeded_normal(key, 8 * i + j), 3.0f);
                word |= (unsigned int)(seeded_round_clamp(t, -8.0f, 7.0f) + 8) << (4 * j);
            }
            ((unsigned int*)out)[i] = word;
            break;
        }
        }
    }
}
