// Fused attention on the tensor cores (mma.sync m16n8k16, FP32 accumulators), FlashAttention-2 style, compiled
// by NVRTC once per configuration (attention.rs) with these macros:
//   HEAD_DIM  QK head dim (a multiple of 16);  DV_SLICE  output columns per block (divides HEAD_DIM);
//   BLOCK_N   keys per tile (16, 32 or 64);    WARPS     warps per block, 16 query rows each;
//   Q_FMT, KV_FMT, O_FMT  0 = BF16, 1 = FP16, 2 = FP8 E4M3;  SHARED_KV  1 when V is K (MLA's latent).
// Layouts: Q and O [B, H, Sq, d], K and V [B, KVH, Skv, d]. A block serves one (sequence, KV head): its rows are
// the (query, head-of-group) pairs r = i·G + hh (GQA packed), so every query head of a group shares one K/V
// tile. Keys stream through shared memory with cp.async, two stages deep; FP8 tiles are converted once in
// shared memory. A (sequence, KV head) may be split over `splits` blocks along the keys (FlashDecoding): each
// writes its FP32 partial output and (max, sum) to a workspace, and the last to finish combines them.
// Design notes: docs/validation/attention.md.

#define FMT_BF16 0
#define FMT_F16 1
#define FMT_E4M3 2

// The tensor-core operand format: BF16 when Q is BF16, else FP16 (FP16 and FP8 inputs).
#if Q_FMT == FMT_BF16
#define MMA_BF16 1
#define MMA_T "bf16"
#else
#define MMA_BF16 0
#define MMA_T "f16"
#endif

#define ROWS (16 * WARPS)
#define THREADS (32 * WARPS)
// Shared-memory row strides, in 16-bit elements: 8 elements of padding keep ldmatrix free of bank conflicts.
#define QK_STRIDE (HEAD_DIM + 8)
#define V_STRIDE (DV_SLICE + 8)
#define SLICES (HEAD_DIM / DV_SLICE)
// Bytes per element of a format.
#define FMT_BYTES(f) ((f) == FMT_E4M3 ? 1 : 2)

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ float neg_inf() { return __uint_as_float(0xff800000u); }

// 2^x (MUFU.EX2; 2^−∞ = 0).
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float half_to_float(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// One stored element of format F (its bits) as FP32. E4M3 goes through FP16: the E4M3 bits shifted into an FP16's
// exponent and mantissa give the value times 2^-8 (subnormals included), so one multiply by 256 restores it.
template <int F> __device__ __forceinline__ float decode(u32 bits) {
    if (F == FMT_BF16) return __uint_as_float(bits << 16);
    if (F == FMT_F16) return half_to_float((u16)bits);
    const u16 h = (u16)(((bits & 0x7fu) << 7) | ((bits & 0x80u) << 8));
    return half_to_float(h) * 256.0f;
}

// Two FP32 values as a packed pair of format F (BF16 or FP16), round to nearest even; `lo` is the element with
// the lower index.
template <int F> __device__ __forceinline__ u32 pack2(float lo, float hi) {
    u32 r;
    if (F == FMT_BF16) {
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    } else {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    }
    return r;
}

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u64 a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (u32)a;
}

// 16 bytes global → shared without registers; `valid` false fills zeros (nothing is read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(u32* r, const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(u32* r, const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

// c (16×8, FP32) += a (16×16, row) · b (16×8, col).
__device__ __forceinline__ void mma(float* c, const u32* a, u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_T "." MMA_T ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float ld_cg(const float* p) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}

// Where the stored tiles go: straight into the MMA tiles, or into FP8 staging converted once per tile.
#define KV_STAGED (KV_FMT == FMT_E4M3)
#define KV_TILES (KV_STAGED ? 1 : 2)
// Shared memory, in order: Q (ROWS × QK_STRIDE), KV_TILES × [K tile (BLOCK_N × QK_STRIDE), V tile (BLOCK_N ×
// V_STRIDE, none with SHARED_KV)] in the MMA format, then with FP8 two stages of [K, V] as stored (bytes).
// attention.rs computes the same total.
#define K_TILE (BLOCK_N * QK_STRIDE)
#define V_TILE (SHARED_KV ? 0 : BLOCK_N * V_STRIDE)
#define RAW_K (BLOCK_N * HEAD_DIM)
#define RAW_V (SHARED_KV ? 0 : BLOCK_N * DV_SLICE)

// Stage pointers are computed, not kept in an indexed array (which would live in local memory).
struct Smem {
    u16* base;
    __device__ u16* q() const { return base; }
    __device__ u16* k(int stage) const {
        return base + ROWS * QK_STRIDE + (KV_STAGED ? 0 : stage) * (K_TILE + V_TILE);
    }
    __device__ u16* v(int stage) const { return k(stage) + K_TILE; }
    __device__ unsigned char* raw_k(int stage) const {
        return (unsigned char*)(base + ROWS * QK_STRIDE + KV_TILES * (K_TILE + V_TILE)) + stage * (RAW_K + RAW_V);
    }
    __device__ unsigned char* raw_v(int stage) const { return raw_k(stage) + RAW_K; }
};

// Issues the cp.async copies of keys [t0, t0 + BLOCK_N) (those ≥ end read as zeros): K's HEAD_DIM columns and
// V's DV_SLICE columns from `v_col`.
__device__ __forceinline__ void load_tile(const Smem& s, int stage, const unsigned char* k, const unsigned char* v,
                                          int t0, int end, int v_col) {
    const int kb = FMT_BYTES(KV_FMT);
    const int k_chunks = HEAD_DIM * kb / 16, v_chunks = DV_SLICE * kb / 16;
    for (int c = threadIdx.x; c < BLOCK_N * k_chunks; c += THREADS) {
        const int row = c / k_chunks, col = c % k_chunks;
        const bool valid = t0 + row < end;
        const unsigned char* src = k + (size_t)(valid ? t0 + row : 0) * HEAD_DIM * kb + col * 16;
        void* dst = KV_STAGED ? (void*)(s.raw_k(stage) + row * HEAD_DIM + col * 16)
                              : (void*)(s.k(stage) + row * QK_STRIDE + col * 8);
        cp_async16(dst, src, valid);
    }
    if (!SHARED_KV) {
        for (int c = threadIdx.x; c < BLOCK_N * v_chunks; c += THREADS) {
            const int row = c / v_chunks, col = c % v_chunks;
            const bool valid = t0 + row < end;
            const unsigned char* src =
                v + ((size_t)(valid ? t0 + row : 0) * HEAD_DIM + v_col) * kb + col * 16;
            void* dst = KV_STAGED ? (void*)(s.raw_v(stage) + row * DV_SLICE + col * 16)
                                  : (void*)(s.v(stage) + row * V_STRIDE + col * 8);
            cp_async16(dst, src, valid);
        }
    }
}

// FP8 staging of `stage` → the MMA-format tiles, four elements per thread step.
__device__ __forceinline__ void convert_tile(const Smem& s, int stage) {
    for (int c = threadIdx.x; c < BLOCK_N * HEAD_DIM / 4; c += THREADS) {
        const int row = c / (HEAD_DIM / 4), col = (c % (HEAD_DIM / 4)) * 4;
        const u32 w = *(const u32*)(s.raw_k(stage) + row * HEAD_DIM + col);
        u32* dst = (u32*)(s.k(0) + row * QK_STRIDE + col);
        dst[0] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(decode<FMT_E4M3>(w & 0xff), decode<FMT_E4M3>((w >> 8) & 0xff));
        dst[1] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(decode<FMT_E4M3>((w >> 16) & 0xff), decode<FMT_E4M3>(w >> 24));
    }
    if (!SHARED_KV) {
        for (int c = threadIdx.x; c < BLOCK_N * DV_SLICE / 4; c += THREADS) {
            const int row = c / (DV_SLICE / 4), col = (c % (DV_SLICE / 4)) * 4;
            const u32 w = *(const u32*)(s.raw_v(stage) + row * DV_SLICE + col);
            u32* dst = (u32*)(s.v(0) + row * V_STRIDE + col);
            dst[0] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(decode<FMT_E4M3>(w & 0xff), decode<FMT_E4M3>((w >> 8) & 0xff));
            dst[1] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(decode<FMT_E4M3>((w >> 16) & 0xff), decode<FMT_E4M3>(w >> 24));
        }
    }
}

// The block's query rows into shared memory in the MMA format (rows past the last are zeros).
__device__ __forceinline__ void load_q(const Smem& s, const unsigned char* q, int r0, int rows, int group, int heads,
                                       int query_len, int b, int kv_head) {
    for (int c = threadIdx.x; c < ROWS * HEAD_DIM / 2; c += THREADS) {
        const int row = c / (HEAD_DIM / 2), col = (c % (HEAD_DIM / 2)) * 2;
        const int r = r0 + row;
        float lo = 0.0f, hi = 0.0f;
        if (r < rows) {
            const int i = r / group, h = kv_head * group + r % group;
            const size_t e = ((size_t)(b * heads + h) * query_len + i) * HEAD_DIM + col;
            if (Q_FMT == FMT_E4M3) {
                lo = decode<Q_FMT>(q[e]);
                hi = decode<Q_FMT>(q[e + 1]);
            } else {
                const u32 w = *(const u32*)(q + e * 2);
                lo = decode<Q_FMT>(w & 0xffffu);
                hi = decode<Q_FMT>(w >> 16);
            }
        }
        *(u32*)(s.q() + row * QK_STRIDE + col) = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(lo, hi);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    attention_mma(const unsigned char* q, const unsigned char* k_all, const unsigned char* v_all, float* ws_o,
                  float* ws_ml, u32* counters, unsigned char* out, int heads, int kv_heads, int query_len,
                  int kv_len, int causal, int window, float scale_log2, float out_scale, int splits,
                  int row_tiles) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const Smem s = {(u16*)smem_raw};
    const int group = heads / kv_heads, rows = group * query_len;
    // Block → (row tile, slice, split); heavy (late, causal) row tiles first.
    int bx = blockIdx.x;
    const int split = bx % splits;
    bx /= splits;
    const int slice = bx % SLICES;
    const int tile = row_tiles - 1 - bx / SLICES;
    const int b = blockIdx.y / kv_heads, kv_head = blockIdx.y % kv_heads;
    const int r0 = tile * ROWS, v_col = slice * DV_SLICE;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;

    // Query i sits at position kv_len − query_len + i; the block's keys span [lo, hi).
    const int last_row = min(r0 + ROWS, rows) - 1;
    const int pos_first = kv_len - query_len + r0 / group, pos_last = kv_len - query_len + last_row / group;
    int lo = 0, hi = kv_len;
    if (causal) {
        hi = pos_last + 1;
        if (window > 0) lo = max(0, pos_first + 1 - window);
    }
    const int chunk = ((hi - lo + splits - 1) / splits + BLOCK_N - 1) / BLOCK_N * BLOCK_N;
    const int start = min(hi, lo + split * chunk), end = min(hi, start + chunk);
    const int n_tiles = (end - start + BLOCK_N - 1) / BLOCK_N;

    const size_t kv_base = (size_t)(b * kv_heads + kv_head) * kv_len * HEAD_DIM * FMT_BYTES(KV_FMT);
    const unsigned char* k = k_all + kv_base;
    const unsigned char* v = (SHARED_KV ? k_all : v_all) + kv_base;

    if (n_tiles > 0) load_tile(s, 0, k, v, start, end, v_col);
    cp_async_commit();
    load_q(s, q, r0, rows, group, heads, query_len, b, kv_head);
    __syncthreads();

    // This thread's rows: g and g + 8 of the warp's 16; their positions for the mask.
    const int my_row = r0 + warp * 16 + g;
    const int pos[2] = {kv_len - query_len + my_row / group, kv_len - query_len + (my_row + 8) / group};

    u32 qf[(HEAD_DIM <= 128) ? HEAD_DIM / 16 : 1][4];
    const u16* q_lane = s.q() + (warp * 16 + (lane & 15)) * QK_STRIDE + (lane >> 4) * 8;
    if (HEAD_DIM <= 128) {
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk) ldmatrix_x4(qf[kk], q_lane + kk * 16);
    }

    float o[DV_SLICE / 8][4];
#pragma unroll
    for (int n = 0; n < DV_SLICE / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.0f, 0.0f};

    for (int it = 0; it < n_tiles; ++it) {
        const int t0 = start + it * BLOCK_N;
        if (it + 1 < n_tiles) {
            load_tile(s, (it + 1) & 1, k, v, t0 + BLOCK_N, end, v_col);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        if (KV_STAGED) {
            convert_tile(s, it & 1);
            __syncthreads();
        }
        const u16* ks = s.k(it & 1);
        const u16* vs = SHARED_KV ? ks + v_col : s.v(it & 1);
        const int v_stride = SHARED_KV ? QK_STRIDE : V_STRIDE;

        // S = Q·Kᵀ for the warp's 16 rows × BLOCK_N keys.
        float sc[BLOCK_N / 8][4];
#pragma unroll
        for (int n = 0; n < BLOCK_N / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0f;
        const u16* k_lane = ks + ((lane >> 4) * 8 + (lane & 7)) * QK_STRIDE + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk) {
            u32 a[4];
            if (HEAD_DIM <= 128) {
                const int qk = HEAD_DIM <= 128 ? kk : 0;
                a[0] = qf[qk][0]; a[1] = qf[qk][1]; a[2] = qf[qk][2]; a[3] = qf[qk][3];
            } else {
                ldmatrix_x4(a, q_lane + kk * 16);
            }
#pragma unroll
            for (int np = 0; np < BLOCK_N / 16; ++np) {
                u32 bk[4];
                ldmatrix_x4(bk, k_lane + np * 16 * QK_STRIDE + kk * 16);
                mma(sc[2 * np], a, bk[0], bk[1]);
                mma(sc[2 * np + 1], a, bk[2], bk[3]);
            }
        }

        // Mask only tiles that some row cannot see whole.
        const bool full = t0 + BLOCK_N <= end && (!causal || t0 + BLOCK_N - 1 <= pos_first) &&
                          (!causal || window <= 0 || t0 > pos_last - window);
#pragma unroll
        for (int n = 0; n < BLOCK_N / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float x = sc[n][e] * scale_log2;
                if (!full) {
                    const int key = t0 + n * 8 + 2 * t + (e & 1), p = pos[e >> 1];
                    const bool ok = key < end && (!causal || (key <= p && (window <= 0 || key > p - window)));
                    if (!ok) x = neg_inf();
                }
                sc[n][e] = x;
            }
        }

        // Online softmax (base 2): rows g (e = 0, 1) and g + 8 (e = 2, 3), reduced over the 4 lanes of a row.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx = neg_inf();
#pragma unroll
            for (int n = 0; n < BLOCK_N / 8; ++n) mx = fmaxf(mx, fmaxf(sc[n][2 * h], sc[n][2 * h + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_new = fmaxf(m[h], mx);
            const float m_use = m_new == neg_inf() ? 0.0f : m_new;
            const float corr = fast_exp2(m[h] - m_use);
            float sum = 0.0f;
#pragma unroll
            for (int n = 0; n < BLOCK_N / 8; ++n) {
                sc[n][2 * h] = fast_exp2(sc[n][2 * h] - m_use);
                sc[n][2 * h + 1] = fast_exp2(sc[n][2 * h + 1] - m_use);
                sum += sc[n][2 * h] + sc[n][2 * h + 1];
            }
            l[h] = l[h] * corr + sum;
            m[h] = m_new;
#pragma unroll
            for (int n = 0; n < DV_SLICE / 8; ++n) {
                o[n][2 * h] *= corr;
                o[n][2 * h + 1] *= corr;
            }
        }

        // O += P·V: P's accumulator layout is the A operand's, 16 keys (two 8-key tiles) per step.
        const u16* v_lane = vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * v_stride + (lane >> 4) * 8;
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
            u32 a[4];
            a[0] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(sc[2 * kk][0], sc[2 * kk][1]);
            a[1] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(sc[2 * kk][2], sc[2 * kk][3]);
            a[2] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(sc[2 * kk + 1][0], sc[2 * kk + 1][1]);
            a[3] = pack2<MMA_BF16 ? FMT_BF16 : FMT_F16>(sc[2 * kk + 1][2], sc[2 * kk + 1][3]);
#pragma unroll
            for (int dp = 0; dp < DV_SLICE / 16; ++dp) {
                u32 bv[4];
                ldmatrix_x4_trans(bv, v_lane + kk * 16 * v_stride + dp * 16);
                mma(o[2 * dp], a, bv[0], bv[1]);
                mma(o[2 * dp + 1], a, bv[2], bv[3]);
            }
        }
        __syncthreads();  // The next iteration's copies overwrite this stage.
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    const int head_dim = HEAD_DIM;
    // Global row index of this thread's rows h = 0, 1 ((b·H + head)·Sq + i), or −1 past the last row.
    int grow[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = my_row + 8 * h;
        grow[h] = r < rows ? (b * heads + kv_head * group + r % group) * query_len + r / group : -1;
    }
    if (splits == 1) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (grow[h] < 0) continue;
            const float inv = out_scale / l[h];
#pragma unroll
            for (int n = 0; n < DV_SLICE / 8; ++n) {
                const size_t e = (size_t)grow[h] * head_dim + v_col + n * 8 + 2 * t;
                *(u32*)(out + e * 2) = pack2<O_FMT>(o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
            }
        }
        return;
    }

    // Split: partial (unnormalized) output and (max, sum) of this split, then the last block of the group
    // combines all splits.
    const int total_rows = (int)(gridDim.y / kv_heads) * heads * query_len;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (grow[h] < 0) continue;
        float* dst = ws_o + ((size_t)split * total_rows + grow[h]) * head_dim + v_col;
#pragma unroll
        for (int n = 0; n < DV_SLICE / 8; ++n) {
            dst[n * 8 + 2 * t] = o[n][2 * h];
            dst[n * 8 + 2 * t + 1] = o[n][2 * h + 1];
        }
        if (t == 0) {
            float* ml = ws_ml + (((size_t)split * SLICES + slice) * total_rows + grow[h]) * 2;
            ml[0] = m[h];
            ml[1] = l[h];
        }
    }
    __threadfence();
    __syncthreads();
    __shared__ int is_last;
    const int counter = (blockIdx.y * row_tiles + tile) * SLICES + slice;
    if (threadIdx.x == 0) is_last = atomicAdd(counters + counter, 1u) == (u32)(splits - 1);
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    const int block_rows = last_row - r0 + 1;
    for (int c = threadIdx.x; c < block_rows * DV_SLICE / 2; c += THREADS) {
        const int r = r0 + c / (DV_SLICE / 2), col = v_col + (c % (DV_SLICE / 2)) * 2;
        const int gr = (b * heads + kv_head * group + r % group) * query_len + r / group;
        float mx = neg_inf();
        for (int sp = 0; sp < splits; ++sp) {
            mx = fmaxf(mx, ld_cg(ws_ml + (((size_t)sp * SLICES + slice) * total_rows + gr) * 2));
        }
        float sum = 0.0f, acc0 = 0.0f, acc1 = 0.0f;
        for (int sp = 0; sp < splits; ++sp) {
            const float* ml = ws_ml + (((size_t)sp * SLICES + slice) * total_rows + gr) * 2;
            const float w = fast_exp2(ld_cg(ml) - mx);
            sum += w * ld_cg(ml + 1);
            const float* part = ws_o + ((size_t)sp * total_rows + gr) * head_dim + col;
            acc0 += w * ld_cg(part);
            acc1 += w * ld_cg(part + 1);
        }
        const float inv = out_scale / sum;
        *(u32*)(out + ((size_t)gr * head_dim + col) * 2) = pack2<O_FMT>(acc0 * inv, acc1 * inv);
    }
    if (threadIdx.x == 0) counters[counter] = 0;  // Ready for the next launch.
}
