#include "prelude.h"
#include "emu_kernel.h"
#include <random>
// args: B H KVH Sq Skv causal window splits
static u32 enc(int fmt, float v) {
    if (fmt == FMT_BF16) return f32_to_bf16(v);
    if (fmt == FMT_F16) return f32_to_f16(v);
    // e4m3 nearest by search
    int best = 0; float bd = 1e30f;
    for (int c = 0; c < 256; ++c) { if ((c & 0x7f) == 0x7f) continue; float d = std::fabs(e4m3_to_f32(c) - v); if (d < bd) { bd = d; best = c; } }
    return best;
}
static float dec(int fmt, u32 b) { return fmt == FMT_BF16 ? bf16_to_f32(b) : fmt == FMT_F16 ? f16_to_f32(b) : e4m3_to_f32(b); }
int main(int argc, char** argv) {
    int B = atoi(argv[1]), H = atoi(argv[2]), KVH = atoi(argv[3]), Sq = atoi(argv[4]), Skv = atoi(argv[5]);
    int causal = atoi(argv[6]), window = atoi(argv[7]), splits = atoi(argv[8]);
    const int D = HEAD_DIM, G = H / KVH, rows = G * Sq;
    const int row_tiles = (rows + ROWS - 1) / ROWS;
    std::mt19937 rng(42); std::normal_distribution<float> nd;
    const int qb = FMT_BYTES(Q_FMT), kb = FMT_BYTES(KV_FMT);
    size_t nq = (size_t)B * H * Sq * D, nkv = (size_t)B * KVH * Skv * D;
    std::vector<unsigned char> q(nq * qb), k(nkv * kb), v(nkv * kb), out(nq * 2, 0xff);
    auto fill = [&](std::vector<unsigned char>& buf, int fmt, size_t n) { for (size_t i = 0; i < n; ++i) { u32 b = enc(fmt, nd(rng)); if (FMT_BYTES(fmt) == 1) buf[i] = b; else ((u16*)buf.data())[i] = b; } };
    fill(q, Q_FMT, nq); fill(k, KV_FMT, nkv); if (!SHARED_KV) fill(v, KV_FMT, nkv);
    const unsigned char* vp = SHARED_KV ? k.data() : v.data();
    std::vector<float> ws_o((size_t)splits * B * H * Sq * D + 1), ws_ml((size_t)splits * SLICES * B * H * Sq * 2 + 1);
    std::vector<u32> counters((size_t)B * KVH * row_tiles * SLICES, 0);
    // shared memory as attention.rs sizes it
    size_t main_b = 2 * ((size_t)ROWS * QK_STRIDE + KV_TILES * (K_TILE + V_TILE)) + (KV_STAGED ? 2 * (RAW_K + RAW_V) : 0);
    size_t epi = 4 * ((size_t)WK * ROWS * DV_SLICE + WK * ROWS * 2), comb = 4 * (size_t)splits * ROWS;
    size_t smem = std::max(main_b, std::max(epi, comb));
    gridDim = {(unsigned)(row_tiles * SLICES * splits), (unsigned)(B * KVH), 1}; blockDim = {THREADS, 1, 1};
    const float scale_log2 = 1.0f / std::sqrt((float)D) * 1.4426950408889634f;
    for (int run = 0; run < 2; ++run)
    for (unsigned by = 0; by < gridDim.y; ++by) for (unsigned bx = 0; bx < gridDim.x; ++bx) {
        Block blk; blk.block = std::make_unique<std::barrier<>>(THREADS);
        for (int w = 0; w < WARPS; ++w) blk.warp.push_back(std::make_unique<std::barrier<>>(32));
        blk.xch.assign(WARPS * 32 * 16, 0); blk.smem.assign(smem, 0xcd); g_block = &blk;
        std::vector<std::thread> th;
        for (int tid = 0; tid < THREADS; ++tid) th.emplace_back([&, tid] {
            threadIdx = {(unsigned)tid, 0, 0}; blockIdx = {bx, by, 0};
            attention_mma(q.data(), k.data(), vp, ws_o.data(), ws_ml.data(), counters.data(), out.data(), H, KVH, Sq, Skv,
                          causal, window, scale_log2, 1.0f, splits, row_tiles);
        });
        for (auto& t : th) t.join();
    }
    for (u32 c : counters) if (c) { printf("FAIL counters not reset\n"); return 1; }
    double num = 0, den = 0; size_t nan = 0;
    for (int b = 0; b < B; ++b) for (int h = 0; h < H; ++h) for (int i = 0; i < Sq; ++i) {
        int kh = h / G, pos = Skv - Sq + i;
        std::vector<double> s(Skv, -INFINITY); double mx = -INFINITY;
        for (int j = 0; j < Skv; ++j) {
            bool ok = !causal || (j <= pos && (window <= 0 || j > pos - window));
            if (!ok) continue;
            double acc = 0;
            for (int d = 0; d < D; ++d) {
                size_t qi = (((size_t)b * H + h) * Sq + i) * D + d, ki = (((size_t)b * KVH + kh) * Skv + j) * D + d;
                acc += (double)dec(Q_FMT, qb == 1 ? q[qi] : ((u16*)q.data())[qi]) * dec(KV_FMT, kb == 1 ? k[ki] : ((u16*)k.data())[ki]);
            }
            s[j] = acc / std::sqrt((double)D); mx = std::max(mx, s[j]);
        }
        double l = 0; for (int j = 0; j < Skv; ++j) { s[j] = std::exp(s[j] - mx); l += s[j]; }
        for (int d = 0; d < D; ++d) {
            double o = 0;
            for (int j = 0; j < Skv; ++j) if (s[j] > 0) { size_t vi = (((size_t)b * KVH + kh) * Skv + j) * D + d; o += s[j] * dec(KV_FMT, kb == 1 ? vp[vi] : ((const u16*)vp)[vi]); }
            o /= l;
            size_t oi = (((size_t)b * H + h) * Sq + i) * D + d;
            float got = dec(O_FMT, ((u16*)out.data())[oi]);
            if (std::isnan(got)) ++nan;
            num += (got - o) * (got - o); den += o * o;
        }
    }
    double rel = std::sqrt(num / den);
    printf("%s rel_err=%.2e nan=%zu splits=%d row_tiles=%d smem=%zu\n", (rel < 1e-2 && nan == 0) ? "PASS" : "FAIL", rel, nan, splits, row_tiles, smem);
    return rel < 1e-2 && nan == 0 ? 0 : 1;
}
