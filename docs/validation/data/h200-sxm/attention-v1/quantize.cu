// NVRTC kernels of run-time quantization in a model step (quantize.rs), compiled for the device's architecture
// (the FP8 conversions need sm_89): the absolute maximum of a tensor (a dynamic per-tensor scale), per-tensor
// quantization with that scale, per-row quantization (a scale per token or per group of `group` elements
// computed in the kernel), and the FP8 KV-cache write (a static per-tensor scale). Sources in BF16, FP16 or
// FP32, targets E4M3, E5M2 or INT8; scales are FP32. Engine kernels they stand for: vLLM
// csrc/quantization/w8a8/fp8/common.cu (segmented_max_reduction, scaled_fp8_quant_kernel,
// dynamic_per_token_scaled_fp8_quant), per_token_group_quant_fp8, and reshape_and_cache's FP8 path.

typedef unsigned short u16;
typedef unsigned int u32;

__device__ __forceinline__ float half_to_float(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

struct Bf16 { typedef u16 T; static __device__ float get(u16 v) { return __uint_as_float((u32)v << 16); } };
struct F16 { typedef u16 T; static __device__ float get(u16 v) { return half_to_float(v); } };
struct F32 { typedef float T; static __device__ float get(float v) { return v; } };

// Targets: the largest finite value and the conversion of two values (saturating, round to nearest even;
// INT8 rounds to nearest even and saturates to ±127).
struct E4M3 {
    static constexpr float MAX = 448.0f;
    static __device__ u16 pair(float lo, float hi) {
        u16 r;
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
        return r;
    }
};
struct E5M2 {
    static constexpr float MAX = 57344.0f;
    static __device__ u16 pair(float lo, float hi) {
        u16 r;
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
        return r;
    }
};
struct I8 {
    static constexpr float MAX = 127.0f;
    static __device__ unsigned char one(float v) {
        int r;
        asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(r) : "f"(v));
        return (unsigned char)r;
    }
    static __device__ u16 pair(float lo, float hi) { return (u16)(one(lo) | ((u32)one(hi) << 8)); }
};

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// |x| maximum over n elements → scale[0] = max / D::MAX, merged with atomicMax on the bits (non-negative floats
// order as unsigned integers; the scale buffer starts at 0 and the same input always gives the same value).
template <typename S, typename D>
__device__ void abs_max(const typename S::T* __restrict__ x, float* __restrict__ scale, unsigned long long n) {
    float m = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        m = fmaxf(m, fabsf(S::get(x[i])));
    }
    __shared__ float partial[32];
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
        m = warp_max(threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) atomicMax((u32*)scale, __float_as_uint(m * (1.0f / D::MAX)));
    }
}

// y = x / scale[0] over n elements (n even), two per thread step.
template <typename S, typename D>
__device__ void quantize_tensor(const typename S::T* __restrict__ x, const float* __restrict__ scale,
                                u16* __restrict__ y, unsigned long long n) {
    const float inv = 1.0f / scale[0];
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n / 2;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = D::pair(S::get(x[2 * i]) * inv, S::get(x[2 * i + 1]) * inv);
    }
}

// One warp per group of `group` elements (even): its |x| maximum gives scales[g] = max / D::MAX, then the group
// is quantized with it.
template <typename S, typename D>
__device__ void quantize_rows(const typename S::T* __restrict__ x, u16* __restrict__ y, float* __restrict__ scales,
                              unsigned long long groups, int group) {
    const int lane = threadIdx.x & 31;
    const unsigned long long warps = (unsigned long long)gridDim.x * (blockDim.x >> 5);
    for (unsigned long long g = (unsigned long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); g < groups;
         g += warps) {
        const typename S::T* row = x + g * group;
        float m = 0.0f;
        for (int i = lane; i < group; i += 32) m = fmaxf(m, fabsf(S::get(row[i])));
        m = warp_max(m);
        const float scale = m * (1.0f / D::MAX);
        const float inv = m > 0.0f ? 1.0f / scale : 0.0f;
        for (int i = lane; i < group / 2; i += 32) {
            y[g * (group / 2) + i] = D::pair(S::get(row[2 * i]) * inv, S::get(row[2 * i + 1]) * inv);
        }
        if (lane == 0) scales[g] = scale;
    }
}

// KV-cache write into an 8-bit cache: cache = x · inv_scale over n elements (n even).
template <typename S, typename D>
__device__ void kv_write(const typename S::T* __restrict__ x, u16* __restrict__ cache, unsigned long long n,
                         float inv_scale) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n / 2;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        cache[i] = D::pair(S::get(x[2 * i]) * inv_scale, S::get(x[2 * i + 1]) * inv_scale);
    }
}

#define QUANTIZE_KERNELS(S, D, NAME)                                                                            \
    extern "C" __global__ void __launch_bounds__(256)                                                            \
        abs_max_##NAME(const S::T* x, float* scale, unsigned long long n) {                                      \
        abs_max<S, D>(x, scale, n);                                                                              \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256)                                                            \
        quantize_tensor_##NAME(const S::T* x, const float* scale, u16* y, unsigned long long n) {                \
        quantize_tensor<S, D>(x, scale, y, n);                                                                   \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256)                                                            \
        quantize_rows_##NAME(const S::T* x, u16* y, float* scales, unsigned long long groups, int group) {       \
        quantize_rows<S, D>(x, y, scales, groups, group);                                                        \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(256)                                                            \
        kv_write_##NAME(const S::T* x, u16* cache, unsigned long long n, float inv_scale) {                      \
        kv_write<S, D>(x, cache, n, inv_scale);                                                                  \
    }

QUANTIZE_KERNELS(Bf16, E4M3, bf16_e4m3)
QUANTIZE_KERNELS(F16, E4M3, f16_e4m3)
QUANTIZE_KERNELS(F32, E4M3, f32_e4m3)
QUANTIZE_KERNELS(Bf16, E5M2, bf16_e5m2)
QUANTIZE_KERNELS(F16, E5M2, f16_e5m2)
QUANTIZE_KERNELS(F32, E5M2, f32_e5m2)
QUANTIZE_KERNELS(Bf16, I8, bf16_i8)
QUANTIZE_KERNELS(F16, I8, f16_i8)
QUANTIZE_KERNELS(F32, I8, f32_i8)
