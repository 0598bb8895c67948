//! Element formats of the cuBLASLt path and host/device buffers in them (encode, upload, download, read
//! back one element for the reference check).

use std::sync::Arc;

use cudarc::cublaslt::sys as lt_sys;
use cudarc::driver::sys as drv_sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};

use super::cuda_err;
use crate::backend::BackendError;

/// Element formats the cuBLASLt path moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Elem {
    F32,
    F16,
    Bf16,
    E4M3,
    E5M2,
    I8,
    I32,
    /// E2M1 packed two per byte.
    E2M1,
}

/// A host buffer in one of the formats.
pub(super) enum HostBuf {
    F32(Vec<f32>),
    F16(Vec<half::f16>),
    Bf16(Vec<half::bf16>),
    U8(Vec<u8>, Elem),
    I8(Vec<i8>),
    I32(Vec<i32>),
}

/// A device buffer in one of the formats.
pub(super) enum DeviceBuf {
    F32(CudaSlice<f32>),
    F16(CudaSlice<half::f16>),
    Bf16(CudaSlice<half::bf16>),
    U8(CudaSlice<u8>, Elem),
    I8(CudaSlice<i8>),
    I32(CudaSlice<i32>),
}

fn e2m1_decode(code: u8) -> f32 {
    const MAG: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let m = MAG[usize::from(code & 7)];
    if code & 8 != 0 { -m } else { m }
}

fn e2m1_encode(v: f32) -> u8 {
    (0u8..16)
        .min_by(|&a, &b| (e2m1_decode(a) - v).abs().total_cmp(&(e2m1_decode(b) - v).abs()))
        .unwrap_or(2)
}

/// An INT8 input: `v · 32` rounded half away from zero, within ±127.
fn i8_of(v: f32) -> i8 {
    (v * 32.0).round().clamp(-127.0, 127.0) as i8
}

impl Elem {
    pub(super) fn cuda_type(self) -> lt_sys::cudaDataType {
        use lt_sys::cudaDataType_t as T;
        match self {
            Elem::F32 => T::CUDA_R_32F,
            Elem::F16 => T::CUDA_R_16F,
            Elem::Bf16 => T::CUDA_R_16BF,
            Elem::E4M3 => T::CUDA_R_8F_E4M3,
            Elem::E5M2 => T::CUDA_R_8F_E5M2,
            Elem::I8 => T::CUDA_R_8I,
            Elem::I32 => T::CUDA_R_32I,
            Elem::E2M1 => T::CUDA_R_4F_E2M1,
        }
    }

    pub(super) fn encode(self, values: &[f32]) -> HostBuf {
        match self {
            Elem::F32 | Elem::I32 => HostBuf::F32(values.to_vec()),
            Elem::F16 => HostBuf::F16(values.iter().map(|&v| half::f16::from_f32(v)).collect()),
            Elem::Bf16 => HostBuf::Bf16(values.iter().map(|&v| half::bf16::from_f32(v)).collect()),
            Elem::E4M3 => HostBuf::U8(
                values
                    .iter()
                    .map(|&v| float8::F8E4M3::from_f32(v).to_bits())
                    .collect(),
                self,
            ),
            Elem::E5M2 => HostBuf::U8(
                values
                    .iter()
                    .map(|&v| float8::F8E5M2::from_f32(v).to_bits())
                    .collect(),
                self,
            ),
            Elem::I8 => HostBuf::I8(values.iter().map(|&v| i8_of(v)).collect()),
            Elem::E2M1 => HostBuf::U8(
                values
                    .chunks(2)
                    .map(|c| e2m1_encode(c[0]) | (c.get(1).map_or(0, |&v| e2m1_encode(v)) << 4))
                    .collect(),
                self,
            ),
        }
    }

    /// The value `v` is stored as by [`Elem::encode`], read back as [`HostBuf::get`] reads it.
    pub(super) fn stored(self, v: f32) -> f64 {
        match self {
            Elem::F32 | Elem::I32 => f64::from(v),
            Elem::F16 => f64::from(half::f16::from_f32(v).to_f32()),
            Elem::Bf16 => f64::from(half::bf16::from_f32(v).to_f32()),
            Elem::E4M3 => f64::from(float8::F8E4M3::from_f32(v).to_f32()),
            Elem::E5M2 => f64::from(float8::F8E5M2::from_f32(v).to_f32()),
            Elem::I8 => f64::from(i8_of(v)),
            Elem::E2M1 => f64::from(e2m1_decode(e2m1_encode(v))),
        }
    }

    pub(super) fn zeros(self, stream: &Arc<CudaStream>, n: usize) -> Result<DeviceBuf, BackendError> {
        let e = |e| cuda_err("alloc", e);
        Ok(match self {
            Elem::F32 => DeviceBuf::F32(stream.alloc_zeros(n).map_err(e)?),
            Elem::F16 => DeviceBuf::F16(stream.alloc_zeros(n).map_err(e)?),
            Elem::Bf16 => DeviceBuf::Bf16(stream.alloc_zeros(n).map_err(e)?),
            Elem::I32 => DeviceBuf::I32(stream.alloc_zeros(n).map_err(e)?),
            Elem::I8 => DeviceBuf::I8(stream.alloc_zeros(n).map_err(e)?),
            Elem::E4M3 | Elem::E5M2 => DeviceBuf::U8(stream.alloc_zeros(n).map_err(e)?, self),
            Elem::E2M1 => DeviceBuf::U8(stream.alloc_zeros(n.div_ceil(2)).map_err(e)?, self),
        })
    }
}

impl HostBuf {
    pub(super) fn get(&self, idx: usize) -> f64 {
        match self {
            HostBuf::F32(v) => f64::from(v[idx]),
            HostBuf::F16(v) => f64::from(v[idx].to_f32()),
            HostBuf::Bf16(v) => f64::from(v[idx].to_f32()),
            HostBuf::I8(v) => f64::from(v[idx]),
            HostBuf::I32(v) => f64::from(v[idx]),
            HostBuf::U8(v, Elem::E4M3) => f64::from(float8::F8E4M3::from_bits(v[idx]).to_f32()),
            HostBuf::U8(v, Elem::E5M2) => f64::from(float8::F8E5M2::from_bits(v[idx]).to_f32()),
            HostBuf::U8(v, _) => f64::from(e2m1_decode((v[idx / 2] >> (4 * (idx % 2))) & 0xF)),
        }
    }

    pub(super) fn upload(&self, stream: &Arc<CudaStream>) -> Result<DeviceBuf, BackendError> {
        let e = |e| cuda_err("upload", e);
        Ok(match self {
            HostBuf::F32(v) => DeviceBuf::F32(stream.clone_htod(v).map_err(e)?),
            HostBuf::F16(v) => DeviceBuf::F16(stream.clone_htod(v).map_err(e)?),
            HostBuf::Bf16(v) => DeviceBuf::Bf16(stream.clone_htod(v).map_err(e)?),
            HostBuf::I8(v) => DeviceBuf::I8(stream.clone_htod(v).map_err(e)?),
            HostBuf::I32(v) => DeviceBuf::I32(stream.clone_htod(v).map_err(e)?),
            HostBuf::U8(v, elem) => DeviceBuf::U8(stream.clone_htod(v).map_err(e)?, *elem),
        })
    }
}

/// Anything held until a pointer's use is enqueued (cudarc's `SyncOnDrop` guards).
pub(super) trait Held {}
impl<T> Held for T {}
pub(super) type PtrGuard<'a> = Box<dyn Held + 'a>;

/// `$body` with `$s` bound to the slice `$buf` holds, whatever its element type (one arm per variant).
macro_rules! with_slice {
    ($buf:expr, $s:ident => $body:expr) => {
        match $buf {
            DeviceBuf::F32($s) => $body,
            DeviceBuf::F16($s) => $body,
            DeviceBuf::Bf16($s) => $body,
            DeviceBuf::U8($s, _) => $body,
            DeviceBuf::I8($s) => $body,
            DeviceBuf::I32($s) => $body,
        }
    };
}

impl DeviceBuf {
    pub(super) fn ptr<'a>(&'a self, stream: &'a Arc<CudaStream>) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
        with_slice!(self, s => {
            let (p, g) = s.device_ptr(stream);
            let g: PtrGuard<'a> = Box::new(g);
            (p, g)
        })
    }

    pub(super) fn ptr_mut<'a>(
        &'a mut self,
        stream: &'a Arc<CudaStream>,
    ) -> (drv_sys::CUdeviceptr, PtrGuard<'a>) {
        with_slice!(self, s => {
            let (p, g) = s.device_ptr_mut(stream);
            let g: PtrGuard<'a> = Box::new(g);
            (p, g)
        })
    }

    pub(super) fn download(&self, stream: &Arc<CudaStream>) -> Result<HostBuf, BackendError> {
        let e = |e| cuda_err("download", e);
        Ok(match self {
            DeviceBuf::F32(s) => HostBuf::F32(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::F16(s) => HostBuf::F16(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::Bf16(s) => HostBuf::Bf16(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::U8(s, elem) => HostBuf::U8(stream.clone_dtoh(s).map_err(e)?, *elem),
            DeviceBuf::I8(s) => HostBuf::I8(stream.clone_dtoh(s).map_err(e)?),
            DeviceBuf::I32(s) => HostBuf::I32(stream.clone_dtoh(s).map_err(e)?),
        })
    }
}
