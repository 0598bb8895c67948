// Fused attention on the tensor cores (mma.sync m16n8k16, FP32 accumulators), FlashAttention-2 style, compiled
// by NVRTC once per configuration (attention.rs) with these macros:
//   HEAD_DIM  QK head dim (a multiple of 16);   DV_SLICE  output columns per block (divides HEAD_DIM);
//   BLOCK_N   keys per tile;  WR × WK warps: WR row groups of MT·16 query rows, WK warps splitting each tile's keys;
//   Q_FMT, KV_FMT, O_FMT  0 = BF16, 1 = FP16, 2 = FP8 E4M3;  SHARED_KV  1 when V is K (MLA's latent).
// Layouts: Q and O [B, H, Sq, d], K and V [B, KVH, Skv, d]. A block serves one (sequence, KV head): its rows are
// the (query, head-of-group) pairs r = i·G + hh (GQA packed), so every query head of a group shares one K/V
// tile. Keys stream through shared memory with cp.async, two stages deep; FP8 tiles are converted once in shared
// memory. A (sequence, KV head) may be split over `splits` blocks along the keys (FlashDecoding): each writes its
// FP32 partial output and (max, sum) to a workspace, and the last to finish combines them. docs/validation/attention.md.

#define FMT_BF16 0
#define FMT_F16 1
#define FMT_E4M3 2

// The tensor-core operand format: BF16 when Q is BF16, else FP16 (FP16 and FP8 inputs).
#if Q_FMT == FMT_BF16
#define MMA_FMT FMT_BF16
#define MMA_T "bf16"
#else
#define MMA_FMT FMT_F16
#define MMA_T "f16"
#endif

#define WARPS (WR * WK)
#define THREADS (32 * WARPS)
#define ROWS (16 * MT * WR)
// Keys of a tile each of the WK key warps scores.
#define KN (BLOCK_N / WK)
// Shared-memory row strides, in 16-bit elements: 8 elements of padding keep ldmatrix free of bank conflicts.
#define QK_STRIDE (HEAD_DIM + 8)
#define V_STRIDE (DV_SLICE + 8)
#define SLICES (HEAD_DIM / DV_SLICE)
#define FMT_BYTES(f) ((f) == FMT_E4M3 ? 1 : 2)
// Q fragments stay in registers when they are few.
#define Q_IN_REGS (HEAD_DIM <= 128 && MT == 1)

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
// V_STRIDE, none with SHARED_KV)] in the MMA format, then with FP8 two stages of [K, V] as stored (bytes). The
// epilogue reuses it from the start. attention.rs computes the same total.
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

// cp.async of BLOCK_N rows of `bytes` each (a multiple of 16) from `src` (row stride `src_stride` bytes) to `dst`
// (row stride `dst_stride` bytes); rows t0 + r ≥ end are zero-filled. When the threads divide a row's chunks,
// each thread keeps one column and steps over rows (no division per copy).
template <int BYTES>
__device__ __forceinline__ void copy_rows(unsigned char* dst, int dst_stride, const unsigned char* src, size_t src_stride,
                                          int t0, int end) {
    const int chunks = BYTES / 16;
    if (THREADS % chunks == 0) {
        const int col = threadIdx.x % chunks, step = THREADS / chunks;
#pragma unroll 4
        for (int r = threadIdx.x / chunks; r < BLOCK_N; r += step) {
            const bool valid = t0 + r < end;
            cp_async16(dst + r * dst_stride + col * 16, src + (valid ? (size_t)(t0 + r) * src_stride : 0) + col * 16,
                       valid);
        }
    } else {
        for (int c = threadIdx.x; c < BLOCK_N * chunks; c += THREADS) {
            const int r = c / chunks, col = c % chunks;
            const bool valid = t0 + r < end;
            cp_async16(dst + r * dst_stride + col * 16, src + (valid ? (size_t)(t0 + r) * src_stride : 0) + col * 16,
                       valid);
        }
    }
}

// Issues the copies of keys [t0, t0 + BLOCK_N): K's HEAD_DIM columns and V's DV_SLICE columns from `v_col`.
__device__ __forceinline__ void load_tile(const Smem& s, int stage, const unsigned char* k, const unsigned char* v,
                                          int t0, int end, int v_col) {
    const int kb = FMT_BYTES(KV_FMT);
    const size_t row_bytes = (size_t)HEAD_DIM * kb;
    if (KV_STAGED) {
        copy_rows<HEAD_DIM>(s.raw_k(stage), HEAD_DIM, k, row_bytes, t0, end);
        if (!SHARED_KV) copy_rows<DV_SLICE>(s.raw_v(stage), DV_SLICE, v + v_col, row_bytes, t0, end);
    } else {
        copy_rows<HEAD_DIM * 2>((unsigned char*)s.k(stage), QK_STRIDE * 2, k, row_bytes, t0, end);
        if (!SHARED_KV) copy_rows<DV_SLICE * 2>((unsigned char*)s.v(stage), V_STRIDE * 2, v + v_col * 2, row_bytes, t0, end);
    }
}

// Two E4M3 bytes (low byte first) as a pair in the MMA format.
__device__ __forceinline__ u32 e4m3x2_to_mma(u32 two) {
    u32 h;
#if __CUDA_ARCH__ >= 890
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"((u16)two));
#else
    h = (((two & 0x7fu) << 7) | ((two & 0x80u) << 8) | ((two & 0x7f00u) << 15) | ((two & 0x8000u) << 16));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(h) : "r"(0x5c005c00u));  // × 256 (see decode)
#endif
    if (MMA_FMT == FMT_F16) return h;
    return pack2<FMT_BF16>(half_to_float((u16)h), half_to_float((u16)(h >> 16)));
}

// FP8 rows (`bytes` per row, stride `bytes`) → MMA-format rows (stride `stride` elements), 4 elements per step.
template <int BYTES> __device__ __forceinline__ void convert_rows(u16* dst, int stride, const unsigned char* src) {
    for (int c = threadIdx.x; c < BLOCK_N * BYTES / 4; c += THREADS) {
        const int r = c / (BYTES / 4), col = (c % (BYTES / 4)) * 4;
        const u32 w = *(const u32*)(src + r * BYTES + col);
        u32* d = (u32*)(dst + r * stride + col);
        d[0] = e4m3x2_to_mma(w & 0xffffu);
        d[1] = e4m3x2_to_mma(w >> 16);
    }
}

// The block's query rows into shared memory in the MMA format (rows past the last are zeros).
__device__ __forceinline__ void load_q(const Smem& s, const unsigned char* q, int r0, int rows, int group, int heads,
                                       int query_len, int b, int kv_head) {
    for (int c = threadIdx.x; c < ROWS * HEAD_DIM / 2; c += THREADS) {
        const int row = c / (HEAD_DIM / 2), col = (c % (HEAD_DIM / 2)) * 2;
        const int r = r0 + row;
        u32 pair = 0;
        if (r < rows) {
            const int i = r / group, h = kv_head * group + r % group;
            const size_t e = ((size_t)(b * heads + h) * query_len + i) * HEAD_DIM + col;
            if (Q_FMT == FMT_E4M3) {
                pair = e4m3x2_to_mma(*(const u16*)(q + e));
            } else {
                pair = *(const u32*)(q + e * 2);  // Already the MMA format.
            }
        }
        *(u32*)(s.q() + row * QK_STRIDE + col) = pair;
    }
}

// The global row ((b·H + head)·Sq + i) of block row r (r < rows).
__device__ __forceinline__ int global_row(int r, int b, int heads, int kv_head, int group, int query_len) {
    return (b * heads + kv_head * group + r % group) * query_len + r / group;
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
    const int wr = warp / WK, wk = warp % WK;

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

    // This warp's rows: m-tile mt holds block rows wr·MT·16 + mt·16 + (g, g + 8); their positions for the mask.
    const int warp_row = wr * MT * 16;
    int pos[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        pos[mt][0] = kv_len - query_len + (r0 + warp_row + mt * 16 + g) / group;
        pos[mt][1] = kv_len - query_len + (r0 + warp_row + mt * 16 + g + 8) / group;
    }
    const u16* q_lane = s.q() + (warp_row + (lane & 15)) * QK_STRIDE + (lane >> 4) * 8;
    u32 qf[Q_IN_REGS ? HEAD_DIM / 16 : 1][4];
    if (Q_IN_REGS) {
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk) ldmatrix_x4(qf[Q_IN_REGS ? kk : 0], q_lane + kk * 16);
    }

    float o[MT][DV_SLICE / 8][4];
    float m[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int n = 0; n < DV_SLICE / 8; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.0f;
        m[mt][0] = m[mt][1] = neg_inf();
        l[mt][0] = l[mt][1] = 0.0f;
    }

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
            convert_rows<HEAD_DIM>(s.k(0), QK_STRIDE, s.raw_k(it & 1));
            if (!SHARED_KV) convert_rows<DV_SLICE>(s.v(0), V_STRIDE, s.raw_v(it & 1));
            __syncthreads();
        }
        // This warp's KN keys of the tile.
        const int kt0 = t0 + wk * KN;
        const u16* ks = s.k(it & 1) + wk * KN * QK_STRIDE;
        const int v_stride = SHARED_KV ? QK_STRIDE : V_STRIDE;
        const u16* vs = (SHARED_KV ? s.k(it & 1) + v_col : s.v(it & 1)) + wk * KN * v_stride;

        // S = Q·Kᵀ for the warp's MT·16 rows × KN keys.
        float sc[MT][KN / 8][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int n = 0; n < KN / 8; ++n) sc[mt][n][0] = sc[mt][n][1] = sc[mt][n][2] = sc[mt][n][3] = 0.0f;
        const u16* k_lane = ks + ((lane >> 4) * 8 + (lane & 7)) * QK_STRIDE + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk) {
            u32 a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if (Q_IN_REGS) {
                    const int qk = Q_IN_REGS ? kk : 0;
                    a[mt][0] = qf[qk][0]; a[mt][1] = qf[qk][1]; a[mt][2] = qf[qk][2]; a[mt][3] = qf[qk][3];
                } else {
                    ldmatrix_x4(a[mt], q_lane + mt * 16 * QK_STRIDE + kk * 16);
                }
            }
#pragma unroll
            for (int np = 0; np < KN / 16; ++np) {
                u32 bk[4];
                ldmatrix_x4(bk, k_lane + np * 16 * QK_STRIDE + kk * 16);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma(sc[mt][2 * np], a[mt], bk[0], bk[1]);
                    mma(sc[mt][2 * np + 1], a[mt], bk[2], bk[3]);
                }
            }
        }

        // Mask only tiles that some row cannot see whole (uniform over the block).
        const bool full = t0 + BLOCK_N <= end && (!causal || t0 + BLOCK_N - 1 <= pos_first) &&
                          (!causal || window <= 0 || t0 > pos_last - window);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int n = 0; n < KN / 8; ++n) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    float x = sc[mt][n][e] * scale_log2;
                    if (!full) {
                        const int key = kt0 + n * 8 + 2 * t + (e & 1), p = pos[mt][e >> 1];
                        const bool ok = key < end && (!causal || (key <= p && (window <= 0 || key > p - window)));
                        if (!ok) x = neg_inf();
                    }
                    sc[mt][n][e] = x;
                }
            }
        }

        // Online softmax (base 2) per row, reduced over the 4 lanes of a row.
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float mx = neg_inf();
#pragma unroll
                for (int n = 0; n < KN / 8; ++n) mx = fmaxf(mx, fmaxf(sc[mt][n][2 * h], sc[mt][n][2 * h + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float m_new = fmaxf(m[mt][h], mx);
                const float m_use = m_new == neg_inf() ? 0.0f : m_new;
                const float corr = fast_exp2(m[mt][h] - m_use);
                float sum = 0.0f;
#pragma unroll
                for (int n = 0; n < KN / 8; ++n) {
                    sc[mt][n][2 * h] = fast_exp2(sc[mt][n][2 * h] - m_use);
                    sc[mt][n][2 * h + 1] = fast_exp2(sc[mt][n][2 * h + 1] - m_use);
                    sum += sc[mt][n][2 * h] + sc[mt][n][2 * h + 1];
                }
                l[mt][h] = l[mt][h] * corr + sum;
                m[mt][h] = m_new;
#pragma unroll
                for (int n = 0; n < DV_SLICE / 8; ++n) {
                    o[mt][n][2 * h] *= corr;
                    o[mt][n][2 * h + 1] *= corr;
                }
            }
        }

        // O += P·V: P's accumulator layout is the A operand's, 16 keys (two 8-key tiles) per step.
        const u16* v_lane = vs + ((lane & 7) + ((lane >> 3) & 1) * 8) * v_stride + (lane >> 4) * 8;
#pragma unroll
        for (int kk = 0; kk < KN / 16; ++kk) {
            u32 a[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                a[mt][0] = pack2<MMA_FMT>(sc[mt][2 * kk][0], sc[mt][2 * kk][1]);
                a[mt][1] = pack2<MMA_FMT>(sc[mt][2 * kk][2], sc[mt][2 * kk][3]);
                a[mt][2] = pack2<MMA_FMT>(sc[mt][2 * kk + 1][0], sc[mt][2 * kk + 1][1]);
                a[mt][3] = pack2<MMA_FMT>(sc[mt][2 * kk + 1][2], sc[mt][2 * kk + 1][3]);
            }
#pragma unroll
            for (int dp = 0; dp < DV_SLICE / 16; ++dp) {
                u32 bv[4];
                ldmatrix_x4_trans(bv, v_lane + kk * 16 * v_stride + dp * 16);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma(o[mt][2 * dp], a[mt], bv[0], bv[1]);
                    mma(o[mt][2 * dp + 1], a[mt], bv[2], bv[3]);
                }
            }
        }
        __syncthreads();  // The next iteration's copies overwrite this stage.
    }

    // Epilogue in shared memory (the tiles are free now): each warp's unnormalized rows and (max, sum), per key
    // warp; then each thread merges the key warps of some (row, column pair).
    float* eo = (float*)smem_raw;                       // [WK][ROWS][DV_SLICE]
    float* eml = eo + WK * ROWS * DV_SLICE;             // [WK][ROWS][2]
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float lsum = l[mt][h];
            lsum += __shfl_xor_sync(0xffffffffu, lsum, 1);
            lsum += __shfl_xor_sync(0xffffffffu, lsum, 2);
            const int row = warp_row + mt * 16 + g + 8 * h;
            float* dst = eo + (wk * ROWS + row) * DV_SLICE;
#pragma unroll
            for (int n = 0; n < DV_SLICE / 8; ++n) {
                *(float2*)(dst + n * 8 + 2 * t) = make_float2(o[mt][n][2 * h], o[mt][n][2 * h + 1]);
            }
            if (t == 0) {
                eml[(wk * ROWS + row) * 2] = m[mt][h];
                eml[(wk * ROWS + row) * 2 + 1] = lsum;
            }
        }
    }
    __syncthreads();
    const int block_rows = last_row - r0 + 1;
    const int total_rows = (int)(gridDim.y / kv_heads) * heads * query_len;
    for (int c = threadIdx.x; c < block_rows * DV_SLICE / 2; c += THREADS) {
        const int row = c / (DV_SLICE / 2), col = (c % (DV_SLICE / 2)) * 2;
        float mx = neg_inf();
#pragma unroll
        for (int w = 0; w < WK; ++w) mx = fmaxf(mx, eml[(w * ROWS + row) * 2]);
        const float m_use = mx == neg_inf() ? 0.0f : mx;
        float sum = 0.0f, acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll
        for (int w = 0; w < WK; ++w) {
            const float wt = fast_exp2(eml[(w * ROWS + row) * 2] - m_use);
            sum += wt * eml[(w * ROWS + row) * 2 + 1];
            const float2 p = *(const float2*)(eo + (w * ROWS + row) * DV_SLICE + col);
            acc0 += wt * p.x;
            acc1 += wt * p.y;
        }
        const int gr = global_row(r0 + row, b, heads, kv_head, group, query_len);
        if (splits == 1) {
            const float inv = out_scale / sum;
            *(u32*)(out + ((size_t)gr * HEAD_DIM + v_col + col) * 2) = pack2<O_FMT>(acc0 * inv, acc1 * inv);
        } else {
            *(float2*)(ws_o + ((size_t)split * total_rows + gr) * HEAD_DIM + v_col + col) = make_float2(acc0, acc1);
            if (col == 0) {
                float* ml = ws_ml + (((size_t)split * SLICES + slice) * total_rows + gr) * 2;
                ml[0] = mx;
                ml[1] = sum;
            }
        }
    }
    if (splits == 1) return;

    // The last split block of this (row tile, slice) combines every split's partial rows.
    __threadfence();
    __syncthreads();
    __shared__ int is_last;
    const int counter = (blockIdx.y * row_tiles + tile) * SLICES + slice;
    if (threadIdx.x == 0) is_last = atomicAdd(counters + counter, 1u) == (u32)(splits - 1);
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    // Per (split, row): the weight 2^(m_s − M) / L of the split's partial sum, in shared memory.
    float* wts = (float*)smem_raw;  // [splits][ROWS]
    for (int r = threadIdx.x; r < block_rows; r += THREADS) {
        const int gr = global_row(r0 + r, b, heads, kv_head, group, query_len);
        float mx = neg_inf();
        for (int sp = 0; sp < splits; ++sp) {
            const float ms = ld_cg(ws_ml + (((size_t)sp * SLICES + slice) * total_rows + gr) * 2);
            wts[sp * ROWS + r] = ms;
            mx = fmaxf(mx, ms);
        }
        float sum = 0.0f;
        for (int sp = 0; sp < splits; ++sp) {
            const float wt = fast_exp2(wts[sp * ROWS + r] - mx);
            wts[sp * ROWS + r] = wt;
            sum += wt * ld_cg(ws_ml + (((size_t)sp * SLICES + slice) * total_rows + gr) * 2 + 1);
        }
        const float inv = out_scale / sum;
        for (int sp = 0; sp < splits; ++sp) wts[sp * ROWS + r] *= inv;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < block_rows * DV_SLICE / 2; c += THREADS) {
        const int row = c / (DV_SLICE / 2), col = v_col + (c % (DV_SLICE / 2)) * 2;
        const int gr = global_row(r0 + row, b, heads, kv_head, group, query_len);
        const float* part = ws_o + (size_t)gr * HEAD_DIM + col;
        float acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll 4
        for (int sp = 0; sp < splits; ++sp) {
            const float wt = wts[sp * ROWS + row];
            const float2 p = __ldcg((const float2*)(part + (size_t)sp * total_rows * HEAD_DIM));
            acc0 += wt * p.x;
            acc1 += wt * p.y;
        }
        *(u32*)(out + ((size_t)gr * HEAD_DIM + col) * 2) = pack2<O_FMT>(acc0, acc1);
    }
    if (threadIdx.x == 0) counters[counter] = 0;  // Ready for the next launch.
}
