//! "Measure this step": every operator of the analysed prefill or decode step measured on the endpoint's
//! device (`POST /api/v1/steps`, followed through its event stream), with the measured step time beside the
//! predicted one. The operator table and the chart show the measured operators (`crate::step::compare`).

use leptos::prelude::*;

use crate::format;
use crate::state::derived::MeasuredStep;
use crate::state::jobs::StepTracker;
use crate::state::use_app;
use crate::step::StepComparison;

/// The measured step against the prediction, e.g. `measured 372 ms for 22/22 operators · predicted 437 ms
/// for the same operators · 0.85×`.
fn totals_text(c: &StepComparison, prefill: bool) -> String {
    let what = if prefill { "TTFT" } else { "TPOT" };
    let measured = format!(
        "measured {what} {} (Σ count × time over {}/{} operators)",
        format::duration(c.totals.measured_s),
        c.rows.len(),
        c.rows_total
    );
    match (&c.other_device, c.ratio()) {
        (Some(device), _) => {
            format!("{measured} — measured on {device}, not the device predicted: not compared")
        }
        (None, Some(ratio)) => format!(
            "{measured} · predicted {} for the same operators · measured ÷ predicted {ratio:.2}× · predicted \
             step {} (every operator and the launch overhead)",
            format::duration(c.totals.predicted_s),
            format::duration(c.predicted_step_s)
        ),
        (None, None) => measured,
    }
}

/// The step timed end to end against the predicted step, e.g. `end to end: measured TPOT 250 ms, 267
/// kernels back to back · predicted step 195 ms · 1.28× · +5.6 ms beside the operators measured alone`.
fn end_to_end_text(c: &StepComparison, prefill: bool) -> Option<String> {
    let what = if prefill { "TTFT" } else { "TPOT" };
    let Some(e) = &c.end_to_end else {
        return c
            .end_to_end_failure
            .as_ref()
            .map(|why| format!("end to end: not measured ({why})"));
    };
    let measured = format!(
        "end to end: measured {what} {}, {} kernels launched in the step's order",
        format::duration(e.time_s),
        e.kernels
    );
    let sign = if e.overhead_s < 0.0 { "−" } else { "+" };
    Some(match c.end_to_end_ratio() {
        Some(ratio) => format!(
            "{measured} · predicted step {} · measured ÷ predicted {ratio:.2}× · {sign}{} beside the operators \
             measured alone (launch gaps and per-kernel overhead when +, cache reuse when −) · {}",
            format::duration(c.predicted_step_s),
            format::duration(e.overhead_s.abs()),
            e.ran
        ),
        None => format!("{measured} · {}", e.ran),
    })
}

/// The Measure button (`step-measure`, disabled with the reason in its title while offline, while a step is
/// measured, or when the scenario cannot be measured), Stop (`step-stop`), the job's status (`step-status`,
/// `data-value` = `running`/`done`/`cancelled`/`lost`), errors (`step-error`) and the measured step time
/// (`step-totals`, `data-value` = measured ÷ predicted when comparable) and the step timed end to end
/// (`step-end-to-end`, `data-value` = measured ÷ predicted step time when comparable).
/// The step is the scenario's, predicted on the spec the page predicts on (in its mode): the endpoint
/// predicts on the same one.
#[component]
pub fn StepMeasure() -> impl IntoView {
    let app = use_app();
    let (endpoint, scenario, hardware) = (app.endpoint, app.scenario, app.device.hardware);
    let MeasuredStep {
        tracker,
        request,
        comparison,
    } = app.step;
    let StepTracker {
        progress,
        submit,
        cancel,
    } = tracker;
    let running = move || progress.with(|p| p.as_ref().is_some_and(|p| !p.is_over()));
    let blocked = move || {
        if !endpoint.is_online() {
            Some("needs a reachable endpoint (set one in Endpoint settings)".to_owned())
        } else if running() {
            Some("a step is being measured".to_owned())
        } else {
            request.with(|r| r.as_ref().err().map(ToString::to_string))
        }
    };
    let on_measure = move |_| {
        if let Ok(r) = request.get_untracked() {
            submit.dispatch(r);
        }
    };
    let on_stop = move |_| {
        if let Some(id) = progress.with_untracked(|p| p.as_ref().map(|p| p.job.id.clone())) {
            cancel.dispatch(id);
        }
    };
    let error = move || {
        let submitted = submit
            .value()
            .with(|v| v.as_ref().and_then(|r| r.as_ref().err().map(ToString::to_string)));
        submitted.or_else(|| request.with(|r| r.as_ref().err().map(ToString::to_string)))
    };
    view! {
        <div class="step-measure" data-testid="step-measure-panel"
            data-mode=move || hardware.with(|h| roofline_core::Mode::of(h).name())
            data-device=move || hardware.with(|h| h.name.clone())>
            <button
                type="button"
                data-testid="step-measure"
                disabled=move || blocked().is_some()
                title=move || blocked().unwrap_or_else(|| "measure every operator of this step on the endpoint's device".to_owned())
                on:click=on_measure
            >
                "Measure this step"
            </button>
            <Show when=running>
                <button type="button" data-testid="step-stop" on:click=on_stop>"Stop"</button>
            </Show>
            {move || {
                progress.with(|p| p.as_ref().map(|p| view! {
                    <span class="step-status" data-testid="step-status" data-value=p.state()>{p.status()}</span>
                }))
            }}
            {move || error().map(|e| view! { <p class="form-error" role="alert" data-testid="step-error">{e}</p> })}
            // Why operators were not measured, in words (not only in each cell's tooltip).
            {move || {
                comparison.with(|c| c.as_ref().map(|c| failure_reasons(&c.failures)).filter(|r| !r.is_empty()).map(|reasons| view! {
                    <ul class="step-failures warning" data-testid="step-failures">
                        {reasons.into_iter().map(|(why, n)| view! {
                            <li data-count=n.to_string()>{format!("{n} operator(s) not measured: {why}")}</li>
                        }).collect_view()}
                    </ul>
                }))
            }}
            {move || {
                comparison.with(|c| c.as_ref().filter(|c| !c.rows.is_empty()).map(|c| {
                    let prefill = scenario.with(|s| s.prefill);
                    view! {
                        <p class="step-totals" data-testid="step-totals" data-value=c.ratio().map(|r| format!("{r}"))>
                            {totals_text(c, prefill)}
                        </p>
                        {end_to_end_text(c, prefill).map(|text| view! {
                            <p
                                class="step-totals"
                                data-testid="step-end-to-end"
                                data-value=c.end_to_end_ratio().map(|r| format!("{r}"))
                            >
                                {text}
                            </p>
                        })}
                    }
                }))
            }}
        </div>
    }
}

/// The distinct reasons operators were not measured, each with how many, most frequent first.
fn failure_reasons(failures: &std::collections::HashMap<String, String>) -> Vec<(String, usize)> {
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for why in failures.values() {
        match reasons.iter_mut().find(|(w, _)| w == why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((why.clone(), 1)),
        }
    }
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    reasons
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::step::{EndToEnd, MeasuredRow};

    #[test]
    fn failure_reasons_are_counted_once_each() {
        let failures = HashMap::from([
            ("a".to_owned(), "BF16 is not measured on cpu".to_owned()),
            ("b".to_owned(), "BF16 is not measured on cpu".to_owned()),
            ("c".to_owned(), "timed out".to_owned()),
        ]);
        assert_eq!(
            failure_reasons(&failures),
            [
                ("BF16 is not measured on cpu".to_owned(), 2),
                ("timed out".to_owned(), 1)
            ]
        );
    }

    #[test]
    fn totals_name_the_phase_and_the_ratio() {
        let row = MeasuredRow {
            time_s: 1e-3,
            flop_per_s: 0.0,
            error_pct: Some(0.0),
            ran: String::new(),
        };
        let c = StepComparison {
            rows: HashMap::from([("a".to_owned(), row)]),
            totals: roofline_core::step_comparison::StepTotals {
                measured_rows: 1,
                measured_s: 0.372,
                predicted_s: 0.437,
            },
            predicted_step_s: 0.440,
            rows_total: 22,
            ..StepComparison::default()
        };
        let text = totals_text(&c, false);
        // 0.372 / 0.437 = 0.851…
        assert!(
            text.contains("TPOT") && text.contains("1/22") && text.contains("0.85×"),
            "{text}"
        );
        let other = StepComparison {
            other_device: Some("NVIDIA GB10".into()),
            ..c
        };
        let text = totals_text(&other, true);
        assert!(
            text.contains("TTFT") && text.contains("not compared") && !text.contains("÷"),
            "{text}"
        );
    }

    #[test]
    fn the_step_end_to_end_is_set_against_the_predicted_step() {
        let c = StepComparison {
            predicted_step_s: 0.2,
            end_to_end: Some(EndToEnd {
                time_s: 0.25,
                kernels: 267,
                overhead_s: -0.004,
                ran: "gemm 0.19 (CPU) + plain loops (CPU) · 267 kernels back to back".into(),
            }),
            ..StepComparison::default()
        };
        // 0.25 s / 0.2 s = 1.25; the step ran 4 ms faster than its operators alone.
        assert_eq!(c.end_to_end_ratio(), Some(1.25));
        let text = end_to_end_text(&c, false).unwrap();
        assert!(
            text.contains("TPOT")
                && text.contains("267 kernels")
                && text.contains("1.25×")
                && text.contains("−4"),
            "{text}"
        );
        let failed = StepComparison {
            end_to_end: None,
            end_to_end_failure: Some("unsupported: not timed end to end".into()),
            ..c
        };
        assert_eq!(failed.end_to_end_ratio(), None);
        assert!(
            end_to_end_text(&failed, false)
                .unwrap()
                .contains("not measured (unsupported")
        );
        assert_eq!(end_to_end_text(&StepComparison::default(), true), None);
    }
}
