//! The device: the chosen backend behind the one-measurement-at-a-time lock ([`Device`], whose
//! [`DeviceGuard`] proves the lock is held), the request bounds and memory-fit checks made before any
//! allocation, and a `catch_unwind` net so no backend panic reaches a client.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use roofline_core::wire::DeviceInfo;
use roofline_core::{Operator, Precision};

use crate::backend::select::panic_message;
use crate::backend::{
    Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, StepTiming, step_matmul,
};

/// The backend plus the one-measurement-at-a-time lock.
pub struct Device {
    backend: Arc<dyn Backend>,
    lock: Mutex<()>,
}

/// Proof that the caller holds the device.
pub struct DeviceGuard<'a> {
    device: &'a Device,
    _guard: MutexGuard<'a, ()>,
}

impl Device {
    /// Wraps a backend.
    #[must_use]
    pub fn new(backend: Arc<dyn Backend>) -> Device {
        Device {
            backend,
            lock: Mutex::new(()),
        }
    }

    /// The backend (for descriptions; measuring goes through a guard).
    #[must_use]
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// Takes the device now or fails with [`BackendError::Busy`].
    ///
    /// # Errors
    /// [`BackendError::Busy`].
    pub fn try_acquire(&self) -> Result<DeviceGuard<'_>, BackendError> {
        match self.lock.try_lock() {
            Ok(guard) => Ok(DeviceGuard {
                device: self,
                _guard: guard,
            }),
            Err(TryLockError::Poisoned(p)) => Ok(DeviceGuard {
                device: self,
                _guard: p.into_inner(),
            }),
            Err(TryLockError::WouldBlock) => Err(BackendError::Busy),
        }
    }

    /// Waits for the device.
    pub fn acquire(&self) -> DeviceGuard<'_> {
        let guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        DeviceGuard {
            device: self,
            _guard: guard,
        }
    }

    /// Refuses a spec that is out of bounds or whose buffers exceed the memory budget, before any allocation.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] or [`BackendError::TooLarge`].
    pub fn check_fits(&self, spec: &MatmulSpec) -> Result<(), BackendError> {
        spec.check_bounds()?;
        self.check_matmul_memory(spec, "")
    }

    /// Checks only that the buffers of `spec` fit the memory budget (a model's own shapes, e.g. a
    /// 128,256-token vocabulary, may exceed the request bounds); `what` prefixes the message.
    ///
    /// # Errors
    /// [`BackendError::TooLarge`].
    fn check_matmul_memory(&self, spec: &MatmulSpec, what: &str) -> Result<(), BackendError> {
        let needed = self.backend.required_bytes(spec);
        let budget = self.backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "{what}{}x{}x{} {} needs {:.1} MB of buffers, more than the {:.1} MB available to the {} backend",
                spec.m,
                spec.n,
                spec.k,
                spec.precision,
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                self.backend.kind()
            )));
        }
        Ok(())
    }

    /// Refuses a non-GEMM operator whose buffers exceed the memory budget, before any allocation.
    ///
    /// # Errors
    /// [`BackendError::TooLarge`].
    pub fn check_operator_fits(&self, op: &Operator) -> Result<(), BackendError> {
        let needed = self.backend.required_operator_bytes(op);
        let budget = self.backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "{} {} needs {:.1} MB of buffers, more than the {:.1} MB available to the {} backend",
                op.name,
                op.shape,
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                self.backend.kind()
            )));
        }
        Ok(())
    }
}

impl DeviceGuard<'_> {
    /// Measures one operator of a model step: a GEMM or GEMV through [`Backend::measure_matmul`] at its
    /// compute precision (weights in the same format; batched and weight-only GEMMs are `unsupported` here;
    /// the model's own dimensions may exceed [`crate::backend::MAX_MEASURE_DIM`]), anything else through
    /// [`Backend::measure_operator`]. Memory is checked first and panics are caught. The measured operator
    /// keeps the step's operator name.
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_operator(&self, op: &Operator) -> Result<Measured, BackendError> {
        single_device(op)?;
        if let Some(spec) = step_matmul(op)? {
            // A model's own shapes may exceed the request bounds: only the memory budget applies here.
            self.device.check_matmul_memory(&spec, &format!("{} ", op.name))?;
            let mut measured = guarded(|| self.device.backend.measure_matmul(&spec))?;
            measured.op.name.clone_from(&op.name);
            return Ok(measured);
        }
        self.device.check_operator_fits(op)?;
        guarded(|| self.device.backend.measure_operator(op))
    }

    /// Times a whole step end to end ([`Backend::measure_step`]): `ops` are its distinct operators,
    /// `schedule` its launch order as indices into `ops`. The buffers of every operator, held at once, are
    /// checked against the memory budget first; panics are caught.
    ///
    /// # Errors
    /// [`BackendError::InvalidInput`] for an empty launch order or an index outside `ops`;
    /// [`BackendError::Unsupported`] for a collective or an operator [`step_matmul`] refuses; [`BackendError::TooLarge`]; the backend's errors.
    pub fn measure_step(&self, ops: &[Operator], schedule: &[usize]) -> Result<StepTiming, BackendError> {
        if schedule.is_empty() {
            return Err(BackendError::InvalidInput(
                "a step needs at least one launch".into(),
            ));
        }
        if let Some(index) = schedule.iter().find(|&&i| i >= ops.len()) {
            return Err(BackendError::InvalidInput(format!(
                "launch order names operator {index} of {}",
                ops.len()
            )));
        }
        let backend = &self.device.backend;
        let mut needed = 0u64;
        for op in ops {
            single_device(op)?;
            let bytes = match step_matmul(op)? {
                Some(spec) => backend.required_bytes(&spec),
                None => backend.required_operator_bytes(op),
            };
            needed = needed.saturating_add(bytes);
        }
        let budget = backend.memory_budget_bytes();
        if needed > budget {
            return Err(BackendError::TooLarge(format!(
                "the whole step holds {:.1} MB of buffers at once, more than the {:.1} MB available to the {} \
                 backend",
                needed as f64 / 1e6,
                budget as f64 / 1e6,
                backend.kind()
            )));
        }
        guarded(|| backend.measure_step(ops, schedule))
    }

    /// Measures one matmul (bounds and memory checked first; panics caught).
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_matmul(&self, spec: &MatmulSpec) -> Result<Measured, BackendError> {
        self.device.check_fits(spec)?;
        guarded(|| self.device.backend.measure_matmul(spec))
    }

    /// The device's description (name, architecture, memory, matched catalog key, …).
    #[must_use]
    pub fn device_info(&self) -> DeviceInfo {
        self.device.backend.device_info()
    }

    /// Precisions the backend measures natively.
    #[must_use]
    pub fn measurable(&self) -> Vec<Precision> {
        self.device.backend.measurable()
    }

    /// A compute-bound shape for calibrating `precision`.
    #[must_use]
    pub fn calibration_shape(&self, precision: Precision) -> (u64, u64, u64) {
        self.device.backend.calibration_shape(precision)
    }

    /// Measures bandwidth (panics caught).
    ///
    /// # Errors
    /// [`BackendError`].
    pub fn measure_bandwidth(&self) -> Result<MeasuredBandwidth, BackendError> {
        guarded(|| self.device.backend.measure_bandwidth())
    }
}

fn guarded<T>(f: impl FnOnce() -> Result<T, BackendError>) -> Result<T, BackendError> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(BackendError::Panicked(panic_message(panic.as_ref()))))
}

/// Refuses a collective: one device cannot run it.
fn single_device(op: &Operator) -> Result<(), BackendError> {
    if op.kind == roofline_core::OpKind::Collective {
        return Err(BackendError::Unsupported(format!(
            "{}: a collective needs more than one device",
            op.name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::FakeBackend;

    #[test]
    fn a_step_launch_order_must_name_its_operators() {
        let device = Device::new(Arc::new(FakeBackend::new(std::time::Duration::ZERO)));
        let guard = device.acquire();
        let gemv = Operator::matmul(1, 64, 64, Precision::Fp32.into()).unwrap();
        let refused = |ops: &[Operator], order: &[usize]| {
            matches!(guard.measure_step(ops, order), Err(BackendError::InvalidInput(_)))
        };
        assert!(refused(std::slice::from_ref(&gemv), &[]));
        assert!(refused(std::slice::from_ref(&gemv), &[0, 1]));
        // Three launches of one 64×64 FP32 GEMV on the fake: 3 × (max(8192 FLOP / 100 TFLOP/s, 16,896 B /
        // 1 TB/s) + 2 µs gap) = 3 × (16.896 ns + 2 µs).
        let timing = guard.measure_step(&[gemv], &[0, 0, 0]).unwrap();
        assert_eq!(timing.kernels, 3);
        assert!((timing.measurement.median_s - 3.0 * (16.896e-9 + 2e-6)).abs() < 1e-15);
    }

    #[test]
    fn panics_become_errors() {
        let r: Result<(), BackendError> = guarded(|| panic!("boom"));
        assert_eq!(r, Err(BackendError::Panicked("boom".into())));
    }
}
