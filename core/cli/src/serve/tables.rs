//! `serve`'s tables: the header with memory and engine notes, the points at the chosen statistic, the SLA
//! picks and the measured runs beside their simulations.

use roofline_core::{
    ClientKind, Load, Mode, Percentile, Regime, SchedulerKind, ServingComparison, ServingOutcome,
    ServingPoint, SlaOutcome, Sweep, SweepSpec, engines_running, format, matrices_cover,
};

use crate::output::table;
use crate::predict::precisions_line;

/// `P90 ` before a metric's name, nothing for the mean.
fn prefix(p: Percentile) -> &'static str {
    match p {
        Percentile::Mean => "",
        Percentile::P50 => "P50 ",
        Percentile::P90 => "P90 ",
        Percentile::P99 => "P99 ",
    }
}

/// The client and engine features the simulation ran with, one line each.
fn simulation_lines(spec: &SweepSpec<'_>) -> String {
    let c = &spec.client;
    let requests = match (c.requests, c.kind) {
        (Some(n), _) => format!("{n} requests"),
        (None, ClientKind::InferenceX) => "10 × concurrency requests".to_owned(),
        (None, _) => "1000 requests".to_owned(),
    };
    let mut out = format!(
        "simulated client: {}, {requests}, range ratio {}, seed {}\n",
        c.kind.name(),
        format::number(c.range_ratio()),
        c.seed
    );
    if let Some(s) = spec.features.speculative {
        out.push_str(&format!(
            "speculative decoding: {}, {} draft tokens, acceptance length {}{}\n",
            s.method.key(),
            s.draft_tokens,
            format::number(s.acceptance_length),
            s.method
                .published_acceptance(s.draft_tokens)
                .filter(|(a, _)| *a == s.acceptance_length)
                .map_or_else(String::new, |(_, source)| format!(" ({source})"))
        ));
    }
    if spec.features.prefix_hit_rate > 0.0 {
        out.push_str(&format!(
            "prefix cache: {} of every prompt served from the cache\n",
            format::percent(spec.features.prefix_hit_rate)
        ));
    }
    out
}

pub(super) fn header(spec: &SweepSpec<'_>, sweep: &Sweep) -> String {
    let scheduler = match spec.scheduler {
        SchedulerKind::InFlight => "in-flight batching",
        SchedulerKind::Static => "static batching",
    };
    let limits = sweep.fits.first().map_or_else(String::new, |f| {
        format!(
            " ({} tokens/step, ≤ {} sequences)",
            f.preset.in_flight.token_budget, f.preset.in_flight.max_seqs
        )
    });
    let mut out = format!(
        "{} · {} · ISL {} OSL {} · {} mode\n{} {scheduler}{limits}\n",
        spec.hardware.name,
        spec.model.name,
        spec.workload.isl,
        spec.workload.osl,
        Mode::of(spec.hardware),
        spec.engine.key(),
    );
    out.push_str(&simulation_lines(spec));
    let arch = spec.hardware.arch;
    for config in spec.configs {
        out.push_str(&format!(
            "{}: {}\n",
            config.key,
            precisions_line(spec.model, config)
        ));
        // A config the device runs but the engine does not (its documented quantization support).
        let engines = engines_running(config, arch);
        if matrices_cover(arch)
            && config.check_support(spec.hardware).is_ok()
            && !engines.contains(&spec.engine)
        {
            let others: Vec<&str> = engines.iter().map(|e| e.key()).collect();
            out.push_str(&format!(
                "note: {} does not run {} on {}; engines that do: {}\n",
                spec.engine.key(),
                config.key,
                arch.name(),
                if others.is_empty() {
                    "none".to_owned()
                } else {
                    others.join(", ")
                }
            ));
        }
    }
    for fit in &sweep.fits {
        let m = &fit.memory;
        out.push_str(&format!(
            "{} ×{}: {} weights + {} activations + {} KV cache per GPU: {} sequences of {} tokens fit\n",
            fit.config,
            fit.gpus,
            format::bytes(m.weight_bytes),
            format::bytes(m.activation_bytes),
            format::bytes(m.kv_cache_bytes),
            m.max_sequences,
            m.sequence_tokens
        ));
    }
    out
}

/// A regime in a few characters, for the table.
fn regime_label(regime: Regime) -> &'static str {
    match regime {
        Regime::MemoryBoundDecode => "decode, memory",
        Regime::ComputeBoundDecode => "decode, compute",
        Regime::CommunicationBoundDecode => "decode, comm.",
        Regime::PrefillBound => "prefill",
        Regime::QueueBound => "queue",
    }
}

/// The load of a point: its concurrency, or its rate and the mean in flight.
fn load_label(p: &ServingPoint) -> String {
    match p.load {
        Load::Concurrency(n) => n.to_string(),
        Load::Rate(r) => format!(
            "{}/s ({} in flight)",
            format::number(r),
            format::number(p.concurrency)
        ),
    }
}

pub(super) fn points_table(sweep: &Sweep, percentile: Percentile) -> String {
    if sweep.points.is_empty() {
        return "no operating point: nothing fits\n".to_owned();
    }
    let (ttft, tpot) = (
        format!("{}TTFT", prefix(percentile)),
        format!("{}TPOT", prefix(percentile)),
    );
    let mut t = table(&[
        "config",
        "GPUs",
        "load",
        &ttft,
        &tpot,
        "tok/s/user",
        "out tok/s/GPU",
        "req/s",
        "batch",
        "regime",
        "",
    ]);
    for p in &sweep.points {
        let marks = format!(
            "{}{}",
            if p.pareto { "★" } else { "" },
            if p.fits { "" } else { "✗" }
        );
        t.add_row(vec![
            p.config.clone(),
            p.gpus.to_string(),
            load_label(p),
            format::duration(p.ttft_at(percentile)),
            format::duration(p.tpot_at(percentile)),
            format::number(p.tokens_per_s_per_user),
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.requests_per_s),
            p.decode_batch.to_string(),
            regime_label(p.regime).to_owned(),
            marks,
        ]);
    }
    format!("{t}\n")
}

pub(super) fn sla_text(outcome: &SlaOutcome) -> String {
    let s = &outcome.sla;
    let at = outcome.percentile;
    let (ttft, tpot) = (format!("{}TTFT", prefix(at)), format!("{}TPOT", prefix(at)));
    let limits: Vec<String> = [
        s.ttft_max_s.map(|v| format!("{ttft} ≤ {}", format::duration(v))),
        s.tpot_max_s.map(|v| format!("{tpot} ≤ {}", format::duration(v))),
        s.tokens_per_user_min
            .map(|v| format!("tokens/s per user ≥ {}", format::number(v))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut t = table(&[
        "config",
        "GPUs",
        "best load",
        "out tok/s/GPU",
        "tok/s/user",
        &ttft,
        &tpot,
        "why none",
    ]);
    for pick in &outcome.picks {
        let mut row = vec![pick.config.clone(), pick.gpus.to_string()];
        match &pick.best {
            Some(p) => row.extend([
                load_label(p),
                format::number(p.output_tokens_per_s_per_gpu),
                format::number(p.tokens_per_s_per_user),
                format::duration(p.ttft_at(at)),
                format::duration(p.tpot_at(at)),
                String::new(),
            ]),
            None => {
                row.extend(std::iter::repeat_n("—".to_owned(), 5));
                row.push(pick.reason.clone().unwrap_or_default());
            }
        }
        t.add_row(row);
    }
    let mut out = format!("SLA {}:\n{t}\n", limits.join(", "));
    match (&outcome.recommendation, &outcome.reason) {
        (Some(p), _) => out.push_str(&format!(
            "recommended: {} on {} GPU(s) at load {}: {} output tok/s/GPU, {} tok/s/user\n",
            p.config,
            p.gpus,
            load_label(p),
            format::number(p.output_tokens_per_s_per_gpu),
            format::number(p.tokens_per_s_per_user)
        )),
        (None, Some(reason)) => {
            let mut why = table(&["no recommendation"]);
            why.add_row(vec![reason.clone()]);
            out.push_str(&format!("{why}\n"));
        }
        (None, None) => {}
    }
    out
}

pub(super) fn measured_table(rows: &[ServingComparison]) -> String {
    let mut t = table(&[
        "line",
        "config",
        "GPUs",
        "load",
        "ISL/OSL",
        "TTFT meas.",
        "÷ pred.",
        "TPOT meas.",
        "÷ pred.",
        "out tok/s/GPU meas.",
        "÷ pred.",
    ]);
    let ratio = |r: Option<f64>| r.map_or_else(|| "unstable".to_owned(), |r| format!("{r:.2}"));
    let mut notes = Vec::new();
    for row in rows {
        let (config, gpus, load) = match &row.predicted {
            ServingOutcome::Steady(p) => (p.config.clone(), p.gpus, load_label(p)),
            ServingOutcome::Unstable(u) => {
                (u.config.clone(), u.gpus, format!("{}/s", format::number(u.rate)))
            }
        };
        let m = &row.measured;
        t.add_row(vec![
            m.line.to_string(),
            config,
            m.gpus.unwrap_or(gpus).to_string(),
            load,
            format!("{}/{}", row.workload.isl, row.workload.osl),
            format::duration(m.ttft_s),
            ratio(row.ttft_ratio),
            format::duration(m.tpot_s),
            ratio(row.tpot_ratio),
            format::number(m.output_tokens_per_s / f64::from(m.gpus.unwrap_or(gpus))),
            ratio(row.output_throughput_ratio),
        ]);
        notes.extend(row.notes.iter().map(|n| format!("note (line {}): {n}\n", m.line)));
        let stats: Vec<String> = row
            .percentiles
            .iter()
            .filter(|r| r.percentile != Percentile::Mean)
            .map(|r| format!("{}{} {:.2}", prefix(r.percentile), r.metric.name(), r.ratio))
            .collect();
        if !stats.is_empty() {
            notes.push(format!(
                "line {} percentiles ÷ simulated: {}\n",
                m.line,
                stats.join(", ")
            ));
        }
    }
    let mut out = format!("measured ÷ simulated (the run's own client, load and lengths; means):\n{t}\n");
    notes.dedup();
    out.extend(notes);
    out
}
