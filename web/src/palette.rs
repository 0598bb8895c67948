//! Colours: one per precision (the original page's palette for the formats it knew) and the pin colours.

use roofline_core::Precision;

/// An sRGB colour.
pub type Rgb = (u8, u8, u8);

/// The colour of a precision's ceiling and points.
#[must_use]
pub const fn precision_rgb(p: Precision) -> Rgb {
    match p {
        Precision::Fp16 => (0xf9, 0x73, 0x16),
        Precision::Bf16 => (0xfb, 0x92, 0x3c),
        Precision::Fp8E4M3 => (0x22, 0xc5, 0x5e),
        Precision::Fp8E5M2 => (0x16, 0xa3, 0x4a),
        Precision::Nvfp4 => (0xa8, 0x55, 0xf7),
        Precision::Int8 => (0x06, 0xb6, 0xd4),
        Precision::Int4 => (0x3b, 0x82, 0xf6),
        Precision::Mxfp4 => (0xec, 0x48, 0x99),
        Precision::Tf32 => (0xea, 0xb3, 0x08),
        Precision::Fp32 => (0x94, 0xa3, 0xb8),
        Precision::Fp64 => (0x78, 0x71, 0x6c),
        Precision::Mxfp8E4M3 => (0x84, 0xcc, 0x16),
        Precision::Mxfp8E5M2 => (0x4d, 0x7c, 0x0f),
        Precision::Mxfp6E3M2 => (0xf4, 0x3f, 0x5e),
        Precision::Mxfp6E2M3 => (0xe1, 0x1d, 0x48),
        Precision::Mxint8 => (0x0e, 0x74, 0x90),
        Precision::Int4G128 => (0x60, 0xa5, 0xfa),
        Precision::Int4G128Zp => (0x1d, 0x4e, 0xd8),
        Precision::Nf4 => (0xd9, 0x46, 0xef),
        Precision::Nf4Dq => (0xc0, 0x26, 0xd3),
        Precision::Int2 => (0xa1, 0x62, 0x07),
        _ => (0x64, 0x74, 0x8b),
    }
}

/// Colours of pinned scenarios, in pin order.
pub const PIN_RGB: [Rgb; 4] = [
    (0xfb, 0xbf, 0x24),
    (0x34, 0xd3, 0x99),
    (0xc0, 0x84, 0xfc),
    (0xfb, 0x71, 0x85),
];

/// `#rrggbb` for CSS.
#[must_use]
pub fn css(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}
