//! The device: the chosen backend behind the one-measurement-at-a-time lock ([`Device`], whose
//! [`DeviceGuard`] proves the lock is held), the request bounds and memory-fit checks made before any
//! allocation, and a `catch_unwind` net so no backend panic reaches a client.
//!
//! The lock holds across processes too ([`Device::with_lock`]): an OS file lock in the data directory, one
//! file per device (`device-<id>.lock`, the GPU's UUID on CUDA), so two servers (or a server and a CLI run)
//! on one machine take turns on a GPU instead of measuring at once and both getting wrong numbers. The holder
//! writes its pid and the time it took the device into the file; a refused caller names it.

use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use roofline_core::wire::DeviceInfo;
use roofline_core::{GemmShape, Operator, Precision};

use crate::backend::select::panic_message;
use crate::backend::{
    Backend, BackendError, MatmulSpec, Measured, MeasuredBandwidth, StepTiming, step_matmul,
};
use crate::protocol::unix_now;

/// The backend plus the one-measurement-at-a-time lock.
pub struct Device {
    backend: Arc<dyn Backend>,
    lock: Mutex<()>,
    /// The cross-process lock file, when there is one.
    shared: Option<SharedLock>,
}

/// The file whose OS lock is the device's across processes.
struct SharedLock {
    file: File,
    path: PathBuf,
}

/// Proof that the caller holds the device (and its file lock, when it has one).
pub struct DeviceGuard<'a> {
    device: &'a Device,
    _guard: MutexGuard<'a, ()>,
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        if let Some(shared) = &self.device.shared
            && let Err(e) = shared.file.unlock()
        {
            tracing::error!(path = %shared.path.display(), error = %e, "could not release the device lock");
        }
    }
}

/// The lock file of the device `device_id` in `dir`: `device-<id>.lock`, the id reduced to letters, digits,
/// `.`, `_` and `-`.
#[must_use]
pub fn lock_path(dir: &Path, device_id: &str) -> PathBuf {
    let id: String = device_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("device-{id}.lock"))
}

impl SharedLock {
    /// Writes this process's pid and the time into the locked file, for whoever is refused to read.
    fn claim(&self) {
        let mut file = &self.file;
        let holder = format!("pid {} since Unix time {:.0}", std::process::id(), unix_now());
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(holder.as_bytes()));
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), error = %e, "could not name this process in the lock");
        }
    }

    /// The busy error naming the process that holds the lock (as it wrote itself into the file).
    fn held_elsewhere(&self, device_id: &str) -> BackendError {
        let mut holder = String::new();
        let _ = File::open(&self.path).and_then(|f| f.take(256).read_to_string(&mut holder));
        let holder = holder.trim();
        let since = holder
            .rsplit(' ')
            .next()
            .and_then(|t| t.parse::<f64>().ok())
            .map_or_else(String::new, |t| {
                format!(", for {:.0} s", (unix_now() - t).max(0.0))
            });
        let who = if holder.is_empty() {
            "another process".to_owned()
        } else {
            format!("another process ({holder}{since})")
        };
        BackendError::BusyElsewhere(format!(
            "the device ({device_id}) is measuring for {who}; retry later"
        ))
    }
}

impl Device {
    /// Wraps a backend; the lock is this process's only.
    #[must_use]
    pub fn new(backend: Arc<dyn Backend>) -> Device {
        Device {
            backend,
            lock: Mutex::new(()),
            shared: None,
        }
    }

    /// Wraps a backend whose lock also holds across processes: the OS lock of `dir`/[`lock_path`] (created
    /// with `dir` if needed), keyed by [`Backend::device_id`].
    ///
    /// # Errors
    /// The IO error when the directory or the file cannot be created.
    pub fn with_lock(backend: Arc<dyn Backend>, dir: &Path) -> std::io::Result<Device> {
        std::fs::create_dir_all(dir)?;
        let path = lock_path(dir, &backend.device_id());
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        Ok(Device {
            backend,
            lock: Mutex::new(()),
            shared: Some(SharedLock { file, path }),
        })
    }

    /// The backend (for descriptions; measuring goes through a guard).
    #[must_use]
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// Takes the device now or fails: [`BackendError::Busy`] when this process measures,
    /// [`BackendError::BusyElsewhere`] (naming the pid and since when) when another one does.
    ///
    /// # Errors
    /// [`BackendError::Busy`], [`BackendError::BusyElsewhere`].
    pub fn try_acquire(&self) -> Result<DeviceGuard<'_>, BackendError> {
        let guard = match self.lock.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(BackendError::Busy),
        };
        if let Some(shared) = &self.shared {
            match shared.file.try_lock() {
                Ok(()) => shared.claim(),
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(shared.held_elsewhere(&self.backend.device_id()));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(BackendError::Unavailable(format!(
                        "cannot lock {}: {e}",
                        shared.path.display()
                    )));
                }
            }
        }
        Ok(DeviceGuard {
            device: self,
            _guard: guard,
        })
    }

    /// Waits for the device (for another process's measurement too, logging who holds it).
    pub fn acquire(&self) -> DeviceGuard<'_> {
        let guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(shared) = &self.shared {
            let locked = match shared.file.try_lock() {
                Ok(()) => Ok(()),
                Err(std::fs::TryLockError::WouldBlock) => {
                    let waiting = shared.held_elsewhere(&self.backend.device_id());
                    tracing::info!(reason = %waiting, "waiting for the device");
                    shared.file.lock()
                }
                Err(std::fs::TryLockError::Error(e)) => Err(e),
            };
            match locked {
                Ok(()) => shared.claim(),
                Err(e) => {
                    tracing::error!(path = %shared.path.display(), error = %e, "could not lock the device");
                }
            }
        }
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
                "{what}{} {} needs {:.1} MB of buffers, more than the {:.1} MB available to the {} backend",
                spec.shape,
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
    /// Measures one operator of a model step: a GEMM, GEMV or batched GEMM (MoE experts) through
    /// [`Backend::measure_matmul`] at its compute precision (weights in the same format; weight-only GEMMs
    /// are `unsupported` here; the model's own dimensions may exceed [`crate::backend::MAX_MEASURE_DIM`]),
    /// anything else through [`Backend::measure_operator`]. Memory is checked first and panics are caught.
    /// The measured operator keeps the step's operator name.
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
    pub fn calibration_shape(&self, precision: Precision) -> GemmShape {
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
    fn the_device_lock_holds_across_open_files_and_names_its_holder() {
        // Two opens of one lock file conflict as two processes would (an OS lock per open file).
        let dir = tempfile::tempdir().unwrap();
        let fake = || Arc::new(FakeBackend::new(std::time::Duration::ZERO));
        let (ours, theirs) = (
            Device::with_lock(fake(), dir.path()).unwrap(),
            Device::with_lock(fake(), dir.path()).unwrap(),
        );
        assert_eq!(
            lock_path(dir.path(), &fake().device_id()),
            dir.path().join("device-fake-Fake_Device__tests_.lock")
        );
        let held = ours.try_acquire().unwrap();
        let Err(BackendError::BusyElsewhere(message)) = theirs.try_acquire() else {
            panic!("the second holder got the device");
        };
        assert!(
            message.contains(&format!("pid {} since Unix time", std::process::id())),
            "{message}"
        );
        assert_eq!(
            BackendError::BusyElsewhere(message).code(),
            roofline_core::wire::ErrorCode::Busy
        );
        drop(held);
        drop(theirs.try_acquire().unwrap());
        // This process's own second measurement is the in-process busy.
        let _held = ours.try_acquire().unwrap();
        assert_eq!(ours.try_acquire().err(), Some(BackendError::Busy));
    }

    #[test]
    fn panics_become_errors() {
        let r: Result<(), BackendError> = guarded(|| panic!("boom"));
        assert_eq!(r, Err(BackendError::Panicked("boom".into())));
    }
}
