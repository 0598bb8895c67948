// NVRTC kernels of the CUDA backend, compiled at run time (see nvrtc.rs); included with `include_str!`.

__device__ __forceinline__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }

// y[N] = dequant(W[N,K]) . x[K]; W packed 8 signed int4 per u32 (offset binary, q - 8), FP16 scale per 128.
// A warp per row; each lane loads 16 bytes (32 weights) per step, so a warp moves 512 contiguous bytes.
// K is a multiple of 128.
extern "C" __global__ void w4a16_gemv(const uint4* __restrict__ w, const unsigned short* __restrict__ scales,
                                      const uint4* __restrict__ x, unsigned short* __restrict__ y,
                                      int n, int k) {
    int row = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    int lane = threadIdx.x & 31;
    if (row >= n) return;
    const uint4* wrow = w + (size_t)row * (k / 32);
    const unsigned short* srow = scales + (size_t)row * (k / 128);
    float acc = 0.0f;
    #pragma unroll 4
    for (int v = lane; v < k / 32; v += 32) {
        uint4 p = __ldg(wrow + v);
        unsigned int words[4] = {p.x, p.y, p.z, p.w};
        float part = 0.0f;
        #pragma unroll
        for (int q = 0; q < 4; ++q) {
            uint4 xx = __ldg(x + v * 4 + q);
            unsigned int xs[4] = {xx.x, xx.y, xx.z, xx.w};
            #pragma unroll
            for (int j = 0; j < 8; ++j) {
                unsigned short h = (unsigned short)(xs[j >> 1] >> (16 * (j & 1)));
                part += (float)((int)((words[q] >> (4 * j)) & 0xFu) - 8) * h2f(h);
            }
        }
        acc += h2f(srow[v >> 2]) * part;
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[row] = f2h(acc);
}

// dst = src: each block copies 4 x 256 16-byte values (16 KiB), each thread four of them, all loads issued
// before the stores. One block per tile rather than a grid-stride loop (as PyTorch's elementwise copy).
extern "C" __global__ void copy_f4(const float4* __restrict__ src, float4* __restrict__ dst, unsigned long long n) {
    unsigned long long base = (unsigned long long)blockIdx.x * (4 * blockDim.x) + threadIdx.x;
    float4 v[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned long long i = base + (unsigned long long)j * blockDim.x;
        if (i < n) v[j] = src[i];
    }
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned long long i = base + (unsigned long long)j * blockDim.x;
        if (i < n) dst[i] = v[j];
    }
}

// L2 flush by reading: evicts every line (dirty ones are written back now, outside the timed region) and
// leaves L2 full of clean lines, so the timed kernel pays no write-back. `sink` is written only if the
// all-zero buffer sums to 1, i.e. never; the condition keeps the loads alive.
extern "C" __global__ void flush_read(const float4* __restrict__ buf, unsigned long long n, float* sink) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float4 v = buf[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1.0f) *sink = acc;
}
