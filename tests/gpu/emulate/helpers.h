// Emulated replacements of attention.cu's asm helpers (the region from neg_inf to the tile macros, and e4m3x2_to_mma).
inline float neg_inf() { return __uint_as_float(0xff800000u); }
inline float fast_exp2(float x) { return std::exp2(x); }
inline float half_to_float(u16 h) { return f16_to_f32(h); }
template <int F> inline float decode(u32 bits) {
    if (F == FMT_BF16) return bf16_to_f32((u16)bits);
    if (F == FMT_F16) return f16_to_f32((u16)bits);
    return e4m3_to_f32(bits & 0xff);
}
template <int F> inline u32 pack2(float lo, float hi) {
    if (F == FMT_BF16) return (u32)f32_to_bf16(lo) | ((u32)f32_to_bf16(hi) << 16);
    return (u32)f32_to_f16(lo) | ((u32)f32_to_f16(hi) << 16);
}
inline void cp_async16(void* dst, const void* src, bool valid) {
    if (valid) memcpy(dst, src, 16); else memset(dst, 0, 16);
}
inline void cp_async_commit() {}
template <int N> inline void cp_async_wait() {}
inline float mma_elem(u32 w, int hi) { u16 b = hi ? (u16)(w >> 16) : (u16)w; return MMA_FMT == FMT_BF16 ? bf16_to_f32(b) : f16_to_f32(b); }
// ldmatrix: lane L gives the row address of row L%8 of matrix L/8.
inline void ldmatrix_impl(u32* r, const u16* p, bool trans) {
    const int L = lane_id();
    xch(L)[0] = (uint64_t)(uintptr_t)p; warp_sync();
    const int g = L >> 2, t = L & 3;
    for (int m = 0; m < 4; ++m) {
        u16 lo, hi;
        if (!trans) {
            const u16* row = (const u16*)(uintptr_t)xch(8 * m + g)[0];
            lo = row[2 * t]; hi = row[2 * t + 1];
        } else {
            const u16* r0 = (const u16*)(uintptr_t)xch(8 * m + 2 * t)[0];
            const u16* r1 = (const u16*)(uintptr_t)xch(8 * m + 2 * t + 1)[0];
            lo = r0[g]; hi = r1[g];
        }
        r[m] = (u32)lo | ((u32)hi << 16);
    }
    warp_sync();
}
inline void ldmatrix_x4(u32* r, const u16* p) { ldmatrix_impl(r, p, false); }
inline void ldmatrix_x4_trans(u32* r, const u16* p) { ldmatrix_impl(r, p, true); }
inline void mma(float* c, const u32* a, u32 b0, u32 b1) {
    const int L = lane_id();
    uint64_t* x = xch(L);
    for (int i = 0; i < 4; ++i) x[i] = a[i];
    x[4] = b0; x[5] = b1;
    warp_sync();
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; ++l) {
        const uint64_t* y = xch(l); const int g = l >> 2, t = l & 3;
        A[g][2 * t] = mma_elem(y[0], 0); A[g][2 * t + 1] = mma_elem(y[0], 1);
        A[g + 8][2 * t] = mma_elem(y[1], 0); A[g + 8][2 * t + 1] = mma_elem(y[1], 1);
        A[g][2 * t + 8] = mma_elem(y[2], 0); A[g][2 * t + 9] = mma_elem(y[2], 1);
        A[g + 8][2 * t + 8] = mma_elem(y[3], 0); A[g + 8][2 * t + 9] = mma_elem(y[3], 1);
        B[2 * t][g] = mma_elem(y[4], 0); B[2 * t + 1][g] = mma_elem(y[4], 1);
        B[2 * t + 8][g] = mma_elem(y[5], 0); B[2 * t + 9][g] = mma_elem(y[5], 1);
    }
    warp_sync();
    const int g = L >> 2, t = L & 3;
    const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
    for (int e = 0; e < 4; ++e) {
        float acc = c[e];
        for (int k = 0; k < 16; ++k) acc += A[rows[e]][k] * B[k][cols[e]];
        c[e] = acc;
    }
}
inline float ld_cg(const float* p) { return *(volatile const float*)p; }
