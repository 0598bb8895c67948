// CPU emulation of the CUDA subset attention.cu uses: one std::thread per CUDA thread, std::barrier for warp
// collectives and __syncthreads. Fragment layouts follow the PTX ISA (validated on an H200 by attention v1).
#include <barrier>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <vector>
#include <thread>
#include <atomic>
#include <algorithm>
#include <functional>
#include <memory>
#include <cstdio>
using std::min; using std::max;
struct dim3e { unsigned x = 0, y = 0, z = 0; };
thread_local dim3e threadIdx, blockIdx;
dim3e gridDim, blockDim;
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
// Per block: barriers and the warp exchange area.
struct Block {
    std::unique_ptr<std::barrier<>> block;
    std::vector<std::unique_ptr<std::barrier<>>> warp;
    // per warp: 32 lanes × 16 words of exchange
    std::vector<uint64_t> xch;
    std::vector<unsigned char> smem;
};
Block* g_block;
inline int lane_id() { return threadIdx.x & 31; }
inline int warp_id() { return threadIdx.x >> 5; }
inline void warp_sync() { g_block->warp[warp_id()]->arrive_and_wait(); }
inline uint64_t* xch(int lane) { return &g_block->xch[(warp_id() * 32 + lane) * 16]; }
inline void __syncthreads() { g_block->block->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline float __shfl_xor_sync(unsigned, float v, int o) {
    xch(lane_id())[0] = __float_as_uint(v); warp_sync();
    float r = __uint_as_float((unsigned)xch(lane_id() ^ o)[0]); warp_sync(); return r;
}
inline float2 __ldcg(const float2* p) { return *p; }
typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long long u64;
// f16 / bf16 bit conversions (round to nearest even).
inline float f16_to_f32(u16 h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
inline u16 f32_to_f16(float f) { _Float16 x = (_Float16)f; u16 h; memcpy(&h, &x, 2); return h; }
inline float bf16_to_f32(u16 b) { return __uint_as_float((u32)b << 16); }
inline u16 f32_to_bf16(float f) { u32 u = __float_as_uint(f); if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40); return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }
inline float e4m3_to_f32(u32 b) { int s = (b >> 7) & 1, e = (b >> 3) & 15, m = b & 7; float v = e ? std::ldexp(1.0f + m / 8.0f, e - 7) : std::ldexp(m / 8.0f, -6); return s ? -v : v; }
