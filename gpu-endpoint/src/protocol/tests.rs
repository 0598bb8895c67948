//! Tests of the measurement protocol: statistics, sampling stops, limits, seeded inputs, verification and
//! the wire record.

use super::*;

#[test]
fn quantiles_interpolate_between_ranks() {
    let v = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(quantile_sorted(&v, 0.5), 3.0);
    // rank 0.1·4 = 0.4 → 1 + 0.4·(2 − 1).
    assert!((quantile_sorted(&v, 0.1) - 1.4).abs() < 1e-12);
    assert!((quantile_sorted(&v, 0.9) - 4.6).abs() < 1e-12);
    assert_eq!(quantile_sorted(&[7.0], 0.9), 7.0);
}

#[test]
fn noise_of_a_known_sample() {
    // mean 2, sample variance ((1)+(0)+(1))/2 = 1 → stdev 1 → 50 %.
    assert!((relative_noise(&[1.0, 2.0, 3.0]) - 0.5).abs() < 1e-12);
    assert_eq!(relative_noise(&[4.0]), 0.0);
}

#[test]
fn sampling_stops_on_low_noise_after_min_samples() {
    let policy = SamplingPolicy {
        warmup_runs: 2,
        min_samples: 7,
        max_samples: 50,
        ..SamplingPolicy::cpu()
    };
    let mut calls = 0;
    let stats = sample::<Interrupted>(
        &policy,
        || Ok(()),
        || {
            calls += 1;
            Ok(1e-3)
        },
    )
    .unwrap();
    assert_eq!(stats.samples, 7);
    assert_eq!(calls, 9);
    assert_eq!(stats.median_s, 1e-3);
    assert!(!stats.hit_time_cap);
}

#[test]
fn sampling_respects_max_samples_when_noisy() {
    let policy = SamplingPolicy {
        warmup_runs: 1,
        min_samples: 2,
        max_samples: 20,
        ..SamplingPolicy::cpu()
    };
    let mut i = 0u32;
    let stats = sample::<Interrupted>(
        &policy,
        || Ok(()),
        || {
            i += 1;
            Ok(if i.is_multiple_of(2) { 1.0e-3 } else { 3.0e-3 })
        },
    )
    .unwrap();
    assert_eq!(stats.samples, 20);
}

#[test]
fn parallel_random_inputs_equal_the_single_sequential_stream() {
    // 200 001 values span four chunks and end on half a pair.
    let n = 200_001;
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut sequential = Vec::with_capacity(n);
    while sequential.len() < n {
        let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        let u2: f64 = rng.random::<f64>();
        let (r, theta) = ((-2.0 * u1.ln()).sqrt(), std::f64::consts::TAU * u2);
        sequential.push((r * theta.cos()) as f32);
        sequential.push((r * theta.sin()) as f32);
    }
    sequential.truncate(n);
    assert_eq!(random_normal(9, n), sequential);
}

#[test]
fn random_inputs_are_seeded_and_roughly_standard_normal() {
    let a = random_normal(42, 10_001);
    assert_eq!(a, random_normal(42, 10_001));
    assert_ne!(a, random_normal(43, 10_001));
    assert!(a.iter().all(|x| *x != 0.0));
    let mean = a.iter().map(|&x| f64::from(x)).sum::<f64>() / a.len() as f64;
    let var = a.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum::<f64>() / a.len() as f64;
    assert!(mean.abs() < 0.05, "{mean}");
    assert!((var - 1.0).abs() < 0.1, "{var}");
}

#[test]
fn verification_catches_a_wrong_entry() {
    // A = [[1,2],[3,4]], B = I → C = A.
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let b = [1.0f32, 0.0, 0.0, 1.0];
    assert_eq!(verify_sampled((2, 2, 2), &a, &b, &a, 1e-6, 1).unwrap(), 4);
    let wrong = [1.0f32, 2.0, 3.0, 5.0];
    assert!(verify_sampled((2, 2, 2), &a, &b, &wrong, 1e-6, 1).is_err());
}

#[test]
fn a_batch_checks_its_first_last_and_one_inner_product() {
    let mut seen = Vec::new();
    let checked = verify_products(8, 3, |p| {
        seen.push(p);
        Ok(4)
    });
    assert_eq!(checked, Ok(12));
    assert_eq!((seen.len(), seen[0], seen[2]), (3, 0, 7), "{seen:?}");
    assert!((1..7).contains(&seen[1]), "{seen:?}");
    // Two products: both, once each; one product: itself, its error unwrapped.
    let mut seen = Vec::new();
    verify_products(2, 3, |p| {
        seen.push(p);
        Ok(1)
    })
    .unwrap();
    assert_eq!(seen, [0, 1]);
    assert_eq!(
        verify_products(1, 3, |_| Err(VerifyError::ShortBuffer)),
        Err(VerifyError::ShortBuffer)
    );
    // A failing product of a batch is named.
    let error = verify_products(8, 3, |p| {
        if p == 7 {
            Err(VerifyError::ShortBuffer)
        } else {
            Ok(1)
        }
    })
    .unwrap_err();
    assert_eq!(error.to_string(), "product 7 of 8: buffer shorter than the shape");
}

#[test]
fn sampling_stops_at_the_point_cap_and_on_cancellation() {
    // Noisy 5 ms runs would sample for the policy's 1.5 s; the 50 ms point cap stops them.
    let noisy = |i: &mut u32| {
        *i += 1;
        std::thread::sleep(Duration::from_millis(5));
        Ok(if i.is_multiple_of(2) { 1.0e-3 } else { 3.0e-3 })
    };
    let limits = PointLimits::new(Duration::from_millis(50));
    let start = Instant::now();
    let mut i = 0;
    let result = limits.run(|| sample::<Interrupted>(&SamplingPolicy::cpu(), || Ok(()), || noisy(&mut i)));
    assert_eq!(result, Err(Interrupted::TimeLimit(Duration::from_millis(50))));
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
    // Outside `run` nothing is limited: the policy's 200 samples are taken (1 ms runs: 0.2 s, far under the
    // policy's own 1.5 s cap even on a loaded machine).
    let mut i = 0u32;
    let quick = |i: &mut u32| {
        *i += 1;
        std::thread::sleep(Duration::from_millis(1));
        Ok(if i.is_multiple_of(2) { 1.0e-3 } else { 3.0e-3 })
    };
    let stats = sample::<Interrupted>(&SamplingPolicy::cpu(), || Ok(()), || quick(&mut i)).unwrap();
    assert_eq!(stats.samples, 200);
    // A cancelled flag stops the next check, and every later point before it starts.
    let limits = PointLimits::new(Duration::from_secs(60));
    let canceller = limits.clone();
    let mut i = 0;
    let result = limits.run(|| {
        sample::<Interrupted>(
            &SamplingPolicy::cpu(),
            || Ok(()),
            || {
                canceller.cancel();
                noisy(&mut i)
            },
        )
    });
    assert_eq!(result.unwrap_err(), Interrupted::Cancelled);
    assert_eq!(i, 1);
    assert_eq!(
        limits.run(|| Ok::<_, Interrupted>(())),
        Err(Interrupted::Cancelled)
    );
    // A point that returns after its cap (no sampling loop) is refused; one within it is kept.
    let limits = PointLimits::new(Duration::from_millis(20));
    let slow = limits.run(|| {
        std::thread::sleep(Duration::from_millis(40));
        Ok(1)
    });
    assert_eq!(slow, Err(Interrupted::TimeLimit(Duration::from_millis(20))));
    assert_eq!(limits.run(|| Ok::<_, Interrupted>(2)), Ok(2));
}

#[test]
fn a_clock_warmup_samples_only_after_the_run_times_settle() {
    // A GPU ramping its clocks: runs of 2.0, 1.9, … 1.1 s (10 runs), then 1.0 s steadily. After the
    // policy's 3 warm-up runs alone the samples start at 1.7: the ramp keeps their noise above 1 % through
    // all 1000 samples (√(Σ 0.1²…0.7² / 1000) = 3.7 %) and lifts their mean.
    let ramp = |i: &mut u32| {
        *i += 1;
        Ok::<_, Interrupted>((2.0 - 0.1 * f64::from(*i - 1)).max(1.0))
    };
    let policy = SamplingPolicy::gpu();
    let mut i = 0;
    let cold = sample(&policy, || Ok(()), || ramp(&mut i)).unwrap();
    assert!(
        cold.mean_s > 1.0 && cold.rel_noise > 0.01 && cold.samples == 1000,
        "{cold:?}"
    );
    // With a clock warm-up (no minimum time) the runs go on until the last 10 agree within the policy's
    // 1 %: runs 11–20 are all 1.0, so the first sample is run 21 and every sample is 1.0.
    let warm = PointLimits::default().with_clock_warmup(ClockWarmup {
        min: Duration::ZERO,
        max: Duration::from_secs(60),
    });
    let mut i = 0;
    let stats = warm.run(|| sample(&policy, || Ok(()), || ramp(&mut i))).unwrap();
    assert_eq!((stats.median_s, stats.rel_noise, stats.samples), (1.0, 0.0, 10));
    assert_eq!(i, 20 + 10, "20 warm-up runs, then the 10 samples");
    // Runs that never settle stop warming at `max`.
    let capped = PointLimits::default().with_clock_warmup(ClockWarmup {
        min: Duration::ZERO,
        max: Duration::from_millis(30),
    });
    let mut i = 0u32;
    let start = Instant::now();
    let stats = capped
        .run(|| {
            sample(
                &SamplingPolicy {
                    max_samples: 20,
                    ..policy
                },
                || Ok(()),
                || {
                    i += 1;
                    std::thread::sleep(Duration::from_millis(1));
                    Ok::<_, Interrupted>(if i.is_multiple_of(2) { 1.0 } else { 2.0 })
                },
            )
        })
        .unwrap();
    assert_eq!(stats.samples, 20);
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn every_record_names_the_catalog_device_that_ran_it() {
    let stats = summarize(&[1e-3, 1e-3], false);
    let record = |backend: BackendKind, device_name: &str| {
        let run = RunInfo {
            backend,
            library: "lib".into(),
            kernel: "kernel".into(),
            device_name: device_name.into(),
            versions: Vec::new(),
            flushed: true,
            verified: true,
            padding: None,
        };
        measurement(run, &stats, TelemetrySummary::default())
    };
    let h100 = record(BackendKind::Cuda, "NVIDIA H100 80GB HBM3");
    assert_eq!(h100.device_key.as_deref(), Some("h100_sxm"));
    assert_eq!(
        record(BackendKind::Cuda, "NVIDIA GB10").device_key.as_deref(),
        Some("gb10")
    );
    assert_eq!(record(BackendKind::Cuda, "Some Future GPU").device_key, None);
    assert_eq!(
        record(BackendKind::Cpu, "AMD EPYC H100-lookalike").device_key,
        None
    );
    // The key travels in the JSON, and an older record without it still loads.
    let json = serde_json::to_value(&h100).unwrap();
    assert_eq!(json["device_key"], "h100_sxm");
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("device_key");
    let loaded: Measurement = serde_json::from_value(old).unwrap();
    assert_eq!(loaded.device_key, None);
    assert!(serde_json::to_value(&loaded).unwrap().get("device_key").is_none());
}

#[test]
fn drawn_inputs_stop_within_milliseconds_and_only_where_asked() {
    // Outside any limits, and under limits that never stop it, a stoppable draw is `random_normal`.
    let n = 3 * NORMAL_CHUNK + 5;
    assert_eq!(
        try_random_normal::<Interrupted>(5, n).unwrap(),
        random_normal(5, n)
    );
    let long = PointLimits::new(Duration::from_secs(600));
    assert_eq!(
        long.run(|| try_random_normal::<Interrupted>(5, n)).unwrap(),
        random_normal(5, n)
    );
    // A point past its cap from the start: `random_normal` alone still draws every value (the CUDA
    // backend's host inputs rely on it), a stoppable draw returns the interruption.
    let late = PointLimits::new(Duration::ZERO);
    let mut plain = Vec::new();
    let _ = late.run(|| {
        plain = random_normal(5, n);
        Ok::<_, Interrupted>(())
    });
    assert_eq!(plain, random_normal(5, n));
    let stopped = late.run(|| try_random_normal::<Interrupted>(5, n));
    assert!(matches!(stopped, Err(Interrupted::TimeLimit(_))), "{stopped:?}");
    // Cancelled 50 ms into 2^28 values (1 GiB, seconds of work even in a release build): back within 0.5 s.
    let limits = PointLimits::new(Duration::from_secs(600));
    let cancel = limits.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        cancel.cancel();
        Instant::now()
    });
    let result = limits.run(|| try_random_normal::<Interrupted>(6, 1 << 28));
    let returned = Instant::now();
    let cancelled = canceller.join().unwrap();
    assert_eq!(result.unwrap_err(), Interrupted::Cancelled);
    let late_by = returned.saturating_duration_since(cancelled);
    assert!(
        late_by < Duration::from_millis(500),
        "stopped {late_by:?} after the cancel"
    );
}
