// NVRTC kernels of the model-step operators (see step_ops.rs), compiled at run time; included with
// `include_str!`. Every kernel exists in three element formats (suffix _f32, _bf16, _f16): operands are stored
// in the format and all arithmetic is FP32. A row (or a flat tensor) whose element count is a multiple of the
// pack width moves in 16-byte packs (4 FP32 or 8 16-bit elements per load or store); any other width falls
// back to one element per access. Arguments are always the inputs, the output, then the scalars.

struct bf16_t { unsigned short bits; };
struct f16_t { unsigned short bits; };

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(bf16_t v) { return __uint_as_float(((unsigned int)v.bits) << 16); }
__device__ __forceinline__ float to_f32(f16_t v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
    return f;
}

template <typename T> __device__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
// Round to nearest even, NaN kept quiet (the rule of the host's half::bf16::from_f32).
template <> __device__ __forceinline__ bf16_t from_f32<bf16_t>(float v) {
    const unsigned int u = __float_as_uint(v);
    bf16_t r;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        r.bits = (unsigned short)((u >> 16) | 0x40u);
    } else {
        r.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    return r;
}
template <> __device__ __forceinline__ f16_t from_f32<f16_t>(float v) {
    f16_t r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
    return r;
}

// Elements of T in one 16-byte pack.
template <typename T> struct PackWidth { enum { N = 16 / sizeof(T) }; };
template <typename T> union Pack {
    uint4 raw;
    T elem[16 / sizeof(T)];
};

__device__ __forceinline__ float neg_inf() { return __uint_as_float(0xff800000u); }
__device__ __forceinline__ int min_int(int a, int b) { return a < b ? a : b; }

// Chunk c of W elements starting at base + c·W, as FP32: one 16-byte load when W is the pack width (base
// 16-byte aligned), else W element loads.
template <typename T, int W>
__device__ __forceinline__ void load_chunk(const T* base, size_t c, float* v) {
    if (W == PackWidth<T>::N) {
        Pack<T> p;
        p.raw = reinterpret_cast<const uint4*>(base)[c];
#pragma unroll
        for (int j = 0; j < W; ++j) v[j] = to_f32(p.elem[j]);
    } else {
#pragma unroll
        for (int j = 0; j < W; ++j) v[j] = to_f32(base[c * W + j]);
    }
}

template <typename T, int W>
__device__ __forceinline__ void store_chunk(T* base, size_t c, const float* v) {
    if (W == PackWidth<T>::N) {
        Pack<T> p;
#pragma unroll
        for (int j = 0; j < W; ++j) p.elem[j] = from_f32<T>(v[j]);
        reinterpret_cast<uint4*>(base)[c] = p.raw;
    } else {
#pragma unroll
        for (int j = 0; j < W; ++j) base[c * W + j] = from_f32<T>(v[j]);
    }
}

template <typename T, int W>
__device__ __forceinline__ void copy_chunk(const T* src, T* dst, size_t c) {
    if (W == PackWidth<T>::N) {
        reinterpret_cast<uint4*>(dst)[c] = reinterpret_cast<const uint4*>(src)[c];
    } else {
#pragma unroll
        for (int j = 0; j < W; ++j) dst[c * W + j] = src[c * W + j];
    }
}

template <bool MAX> __device__ __forceinline__ float combine(float a, float b) { return MAX ? fmaxf(a, b) : a + b; }

template <bool MAX> __device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = combine<MAX>(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// Sum or maximum over the block, returned to every thread. Every thread of the block calls it; blockDim.x is
// a multiple of 32 and at most 1024.
template <bool MAX> __device__ float block_reduce(float v) {
    __shared__ float partial[32];
    __shared__ float total;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce<MAX>(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int n_warps = blockDim.x >> 5;
        float w = lane < n_warps ? partial[lane] : (MAX ? neg_inf() : 0.0f);
        w = warp_reduce<MAX>(w);
        if (lane == 0) total = w;
    }
    __syncthreads();
    const float result = total;
    __syncthreads();  // The next reduction may overwrite partial and total.
    return result;
}

// The sum (or maximum) of f(x) over a row of `chunks` chunks of W elements, block_reduce'd: every thread of
// the block calls it, thread t taking chunks t, t + blockDim.x, …
template <bool MAX, typename T, int W, typename F>
__device__ __forceinline__ float row_reduce(const T* row, int chunks, F f) {
    float acc = MAX ? neg_inf() : 0.0f;
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
        float v[W];
        load_chunk<T, W>(row, c, v);
#pragma unroll
        for (int j = 0; j < W; ++j) acc = combine<MAX>(acc, f(v[j]));
    }
    return block_reduce<MAX>(acc);
}

// RMSNorm, one block per row: the first pass sums squares over 16-byte loads and reduces over the block, the
// second re-reads the row (now in L1/L2) and writes x / rms · γ, so DRAM sees one read and one write of x.
template <typename T, int W>
__device__ void rms_norm_row(const T* __restrict__ x, const T* __restrict__ gamma, T* __restrict__ out, int width,
                             float eps) {
    const size_t base = (size_t)blockIdx.x * width;
    const int chunks = width / W;
    const float sum_sq = row_reduce<false, T, W>(x + base, chunks, [](float v) { return v * v; });
    const float inv = 1.0f / sqrtf(sum_sq / (float)width + eps);
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
        float v[W], g[W];
        load_chunk<T, W>(x + base, c, v);
        load_chunk<T, W>(gamma, c, g);
#pragma unroll
        for (int j = 0; j < W; ++j) v[j] = v[j] * inv * g[j];
        store_chunk<T, W>(out + base, c, v);
    }
}

// LayerNorm, one block per row: mean, then the centred variance, then (x − mean) / std · γ + β; the second and
// third passes re-read the row from L1/L2.
template <typename T, int W>
__device__ void layer_norm_row(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                               T* __restrict__ out, int width, float eps) {
    const size_t base = (size_t)blockIdx.x * width;
    const int chunks = width / W;
    const float mean = row_reduce<false, T, W>(x + base, chunks, [](float v) { return v; }) / (float)width;
    const float sum_sq =
        row_reduce<false, T, W>(x + base, chunks, [mean](float v) { return (v - mean) * (v - mean); });
    const float inv = 1.0f / sqrtf(sum_sq / (float)width + eps);
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
        float v[W], g[W], b[W];
        load_chunk<T, W>(x + base, c, v);
        load_chunk<T, W>(gamma, c, g);
        load_chunk<T, W>(beta, c, b);
#pragma unroll
        for (int j = 0; j < W; ++j) v[j] = (v[j] - mean) * inv * g[j] + b[j];
        store_chunk<T, W>(out + base, c, v);
    }
}

// Softmax, one block per row: the maximum, the sum of exponentials, then the normalized exponentials; the
// second and third passes re-read the row from L1/L2.
template <typename T, int W>
__device__ void softmax_row(const T* __restrict__ x, T* __restrict__ out, int width) {
    const size_t base = (size_t)blockIdx.x * width;
    const int chunks = width / W;
    const float max_v = row_reduce<true, T, W>(x + base, chunks, [](float v) { return v; });
    const float inv = 1.0f / row_reduce<false, T, W>(x + base, chunks, [max_v](float v) { return expf(v - max_v); });
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
        float v[W];
        load_chunk<T, W>(x + base, c, v);
#pragma unroll
        for (int j = 0; j < W; ++j) v[j] = expf(v[j] - max_v) * inv;
        store_chunk<T, W>(out + base, c, v);
    }
}

// Embedding gather, one block per gathered row: the table row ids[row] is copied in 16-byte packs.
template <typename T, int W>
__device__ void gather_row(const T* __restrict__ table, const int* __restrict__ ids, T* __restrict__ out, int width) {
    const T* src = table + (size_t)ids[blockIdx.x] * width;
    T* dst = out + (size_t)blockIdx.x * width;
    for (int c = threadIdx.x; c < width / W; c += blockDim.x) copy_chunk<T, W>(src, dst, c);
}

struct SiluMulOp {
    __device__ float operator()(float gate, float up) const { return gate / (1.0f + expf(-gate)) * up; }
};
struct GeluOp {
    // GELU, tanh approximation; the second operand is unused.
    __device__ float operator()(float x, float) const {
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    }
};
struct AddOp {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// out = Op(a, b) over n elements: a grid-stride loop over 16-byte packs, so consecutive threads touch
// consecutive packs (coalesced). b may be null (one input).
template <typename Op, typename T, int W>
__device__ void map_chunks(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, size_t n) {
    Op op;
    const size_t chunks = n / W;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (size_t)gridDim.x * blockDim.x) {
        float x[W], y[W];
        load_chunk<T, W>(a, c, x);
        if (b != nullptr) {
            load_chunk<T, W>(b, c, y);
        } else {
#pragma unroll
            for (int j = 0; j < W; ++j) y[j] = 0.0f;
        }
#pragma unroll
        for (int j = 0; j < W; ++j) x[j] = op(x[j], y[j]);
        store_chunk<T, W>(out, c, x);
    }
}

template <typename Op, typename T>
__device__ void map(const T* a, const T* b, T* out, size_t n) {
    if (n % PackWidth<T>::N == 0) {
        map_chunks<Op, T, PackWidth<T>::N>(a, b, out, n);
    } else {
        map_chunks<Op, T, 1>(a, b, out, n);
    }
}

// RoPE over rows of `width` elements, pairs (2i, 2i + 1) rotated by angle i; cos_sin holds cos then sin,
// width / 2 FP32 values each (cached: every row reads them). Grid-stride over 16-byte packs; a pack holds
// whole pairs of one row because the pack width is even and divides `width`.
template <typename T, int W>
__device__ void rope_chunks(const T* __restrict__ x, const float* __restrict__ cos_sin, T* __restrict__ out, int width,
                            size_t n) {
    const int half = width / 2;
    const size_t chunks = n / W;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (size_t)gridDim.x * blockDim.x) {
        float v[W], o[W];
        load_chunk<T, W>(x, c, v);
        const int col0 = (int)((c * W) % (size_t)width);
#pragma unroll
        for (int j = 0; j < W; j += 2) {
            const int i = (col0 + j) / 2;
            const float cs = cos_sin[i], sn = cos_sin[half + i];
            o[j] = v[j] * cs - v[j + 1] * sn;
            o[j + 1] = v[j] * sn + v[j + 1] * cs;
        }
        store_chunk<T, W>(out, c, o);
    }
}

// RoPE for widths the pack does not divide: one output element per thread, reading its pair partner; the
// last element of an odd width is copied.
template <typename T>
__device__ void rope_elements(const T* __restrict__ x, const float* __restrict__ cos_sin, T* __restrict__ out,
                              int width, size_t n) {
    const int half = width / 2;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += (size_t)gridDim.x * blockDim.x) {
        const int col = (int)(idx % (size_t)width);
        const int i = col / 2;
        float o;
        if (col >= 2 * half) {
            o = to_f32(x[idx]);
        } else if (col % 2 == 0) {
            o = to_f32(x[idx]) * cos_sin[i] - to_f32(x[idx + 1]) * cos_sin[half + i];
        } else {
            o = to_f32(x[idx - 1]) * cos_sin[half + i] + to_f32(x[idx]) * cos_sin[i];
        }
        out[idx] = from_f32<T>(o);
    }
}

// KV-cache write: a grid-stride copy of 16-byte packs (the new tokens' K and V into the cache).
template <typename T, int W>
__device__ void copy_chunks(const T* __restrict__ src, T* __restrict__ dst, size_t n) {
    const size_t chunks = n / W;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (size_t)gridDim.x * blockDim.x) {
        copy_chunk<T, W>(src, dst, c);
    }
}

// KV-cache read: a grid-stride stream of 16-byte loads summed per block (partial[blockIdx.x]), so the loads
// cannot be dropped and the host can check the total.
template <typename T, int W>
__device__ void read_chunks(const T* __restrict__ cache, float* __restrict__ partial, size_t n) {
    const size_t chunks = n / W;
    float sum = 0.0f;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (size_t)gridDim.x * blockDim.x) {
        float v[W];
        load_chunk<T, W>(cache, c, v);
#pragma unroll
        for (int j = 0; j < W; ++j) sum += v[j];
    }
    sum = block_reduce<false>(sum);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Threads of an attention block, and the head dimensions each accumulates (so head_dim <= 1024).
#define ATTENTION_THREADS 128
#define ATTENTION_DIMS_PER_THREAD 8

// Fused attention over a contiguous KV cache, one block per (sequence, query head, query): Q [B, H, Sq, d],
// K and V [B, kv_heads, Skv, d] (query head h reads KV head h / (H / kv_heads)), O [B, H, Sq, d]. The block
// walks its keys lo..hi (causal mask and sliding window) in tiles of `tile` keys: the whole block stages the
// K and V tile (contiguous in memory) into shared memory with 16-byte loads, each warp scores keys of the
// tile (lanes split the head dimension, then a warp sum), and every thread keeps the online-softmax state and
// the P·V accumulators of its own head dimensions. Shared memory: head_dim + 2·tile·head_dim + tile floats.
template <typename T, int W>
__device__ void attention_row(const T* __restrict__ q, const T* k, const T* v, T* __restrict__ out, int heads,
                              int kv_heads, int query_len, int kv_len, int head_dim, int causal, int window,
                              float scale, int tile) {
    extern __shared__ float smem[];
    float* qs = smem;
    float* ks = qs + head_dim;
    float* vs = ks + tile * head_dim;
    float* scores = vs + tile * head_dim;
    const int row = blockIdx.x;
    const int i = row % query_len;
    const int head = (row / query_len) % heads;
    const int seq = row / query_len / heads;
    const int kv_head = head / (heads / kv_heads);
    const size_t q_off = (size_t)row * head_dim;
    const size_t kv_off = ((size_t)seq * kv_heads + kv_head) * (size_t)kv_len * head_dim;
    // Query i is at position kv_len − query_len + i; with the mask it sees keys up to its position, and with
    // a window only the last `window` of them.
    int lo = 0, hi = kv_len;
    if (causal) {
        const int position = kv_len - query_len + i;
        hi = position + 1;
        if (window > 0 && position + 1 > window) lo = position + 1 - window;
    }
    for (int e = threadIdx.x; e < head_dim; e += blockDim.x) qs[e] = to_f32(q[q_off + e]);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, n_warps = blockDim.x >> 5;
    float m = neg_inf(), l = 0.0f;
    float acc[ATTENTION_DIMS_PER_THREAD];
#pragma unroll
    for (int t = 0; t < ATTENTION_DIMS_PER_THREAD; ++t) acc[t] = 0.0f;
    for (int t0 = lo; t0 < hi; t0 += tile) {
        const int tk = min_int(tile, hi - t0);
        const T* k_tile = k + kv_off + (size_t)t0 * head_dim;
        const T* v_tile = v + kv_off + (size_t)t0 * head_dim;
        const int chunks = tk * head_dim / W;
        for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
            float kv[W];
            load_chunk<T, W>(k_tile, c, kv);
#pragma unroll
            for (int j = 0; j < W; ++j) ks[c * W + j] = kv[j];
            load_chunk<T, W>(v_tile, c, kv);
#pragma unroll
            for (int j = 0; j < W; ++j) vs[c * W + j] = kv[j];
        }
        __syncthreads();
        for (int jj = warp; jj < tk; jj += n_warps) {
            float s = 0.0f;
            for (int e = lane; e < head_dim; e += 32) s += qs[e] * ks[jj * head_dim + e];
            s = warp_reduce<false>(s);
            if (lane == 0) scores[jj] = s * scale;
        }
        __syncthreads();
        float tile_max = neg_inf();
        for (int jj = 0; jj < tk; ++jj) tile_max = fmaxf(tile_max, scores[jj]);
        const float m_new = fmaxf(m, tile_max);
        // exp(−inf) = 0 on the first tile: the empty state contributes nothing.
        const float correction = expf(m - m_new);
        l *= correction;
#pragma unroll
        for (int t = 0; t < ATTENTION_DIMS_PER_THREAD; ++t) acc[t] *= correction;
        for (int jj = 0; jj < tk; ++jj) {
            const float p = expf(scores[jj] - m_new);
            l += p;
#pragma unroll
            for (int t = 0; t < ATTENTION_DIMS_PER_THREAD; ++t) {
                const int e = threadIdx.x + t * blockDim.x;
                if (e < head_dim) acc[t] += p * vs[jj * head_dim + e];
            }
        }
        m = m_new;
        __syncthreads();  // The next tile overwrites ks, vs and scores.
    }
#pragma unroll
    for (int t = 0; t < ATTENTION_DIMS_PER_THREAD; ++t) {
        const int e = threadIdx.x + t * blockDim.x;
        if (e < head_dim) out[q_off + e] = from_f32<T>(acc[t] / l);
    }
}

// The entry points of one element format: each picks the 16-byte-pack body when the pack width divides the
// row (or tensor), else the element body. Block sizes never exceed the launch bounds (step_ops.rs).
#define STEP_KERNELS(T, S)                                                                                         \
    extern "C" __global__ void __launch_bounds__(1024)                                                             \
        rms_norm_##S(const T* x, const T* gamma, T* out, int width, float eps) {                                   \
        if (width % PackWidth<T>::N == 0) rms_norm_row<T, PackWidth<T>::N>(x, gamma, out, width, eps);             \
        else rms_norm_row<T, 1>(x, gamma, out, width, eps);                                                        \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(1024)                                                             \
        layer_norm_##S(const T* x, const T* gamma, const T* beta, T* out, int width, float eps) {                  \
        if (width % PackWidth<T>::N == 0) layer_norm_row<T, PackWidth<T>::N>(x, gamma, beta, out, width, eps);     \
        else layer_norm_row<T, 1>(x, gamma, beta, out, width, eps);                                                \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(1024) softmax_##S(const T* x, T* out, int width) {                \
        if (width % PackWidth<T>::N == 0) softmax_row<T, PackWidth<T>::N>(x, out, width);                          \
        else softmax_row<T, 1>(x, out, width);                                                                     \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(1024) gather_##S(const T* table, const int* ids, T* out, int width) { \
        if (width % PackWidth<T>::N == 0) gather_row<T, PackWidth<T>::N>(table, ids, out, width);                  \
        else gather_row<T, 1>(table, ids, out, width);                                                             \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        silu_mul_##S(const T* gate, const T* up, T* out, unsigned long long n) {                                   \
        map<SiluMulOp, T>(gate, up, out, n);                                                                       \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) gelu_##S(const T* x, T* out, unsigned long long n) {         \
        map<GeluOp, T>(x, nullptr, out, n);                                                                        \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        residual_add_##S(const T* a, const T* b, T* out, unsigned long long n) {                                   \
        map<AddOp, T>(a, b, out, n);                                                                               \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        rope_##S(const T* x, const float* cos_sin, T* out, int width, unsigned long long n) {                      \
        if (width % PackWidth<T>::N == 0) rope_chunks<T, PackWidth<T>::N>(x, cos_sin, out, width, n);              \
        else rope_elements<T>(x, cos_sin, out, width, n);                                                          \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) copy_##S(const T* src, T* out, unsigned long long n) {       \
        if (n % PackWidth<T>::N == 0) copy_chunks<T, PackWidth<T>::N>(src, out, n);                                \
        else copy_chunks<T, 1>(src, out, n);                                                                       \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) kv_read_##S(const T* cache, float* partial, unsigned long long n) { \
        if (n % PackWidth<T>::N == 0) read_chunks<T, PackWidth<T>::N>(cache, partial, n);                          \
        else read_chunks<T, 1>(cache, partial, n);                                                                 \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(ATTENTION_THREADS)                                                \
        attention_##S(const T* q, const T* k, const T* v, T* out, int heads, int kv_heads, int query_len,          \
                      int kv_len, int head_dim, int causal, int window, float scale, int tile) {                   \
        if (head_dim % PackWidth<T>::N == 0)                                                                       \
            attention_row<T, PackWidth<T>::N>(q, k, v, out, heads, kv_heads, query_len, kv_len, head_dim, causal,  \
                                              window, scale, tile);                                                \
        else                                                                                                       \
            attention_row<T, 1>(q, k, v, out, heads, kv_heads, query_len, kv_len, head_dim, causal, window, scale, \
                                tile);                                                                             \
    }

STEP_KERNELS(float, f32)
STEP_KERNELS(bf16_t, bf16)
STEP_KERNELS(f16_t, f16)
