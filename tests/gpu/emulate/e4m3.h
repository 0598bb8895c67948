inline u32 e4m3x2_to_mma(u32 two) {
    return pack2<MMA_FMT>(e4m3_to_f32(two & 0xff), e4m3_to_f32((two >> 8) & 0xff));
}
