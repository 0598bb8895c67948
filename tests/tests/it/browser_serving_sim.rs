//! Real-browser test of the serving view's simulation inputs (issue 34): Llama-3.1-8B on H100 SXMs at ≥ 20
//! tokens/s per user opens at P90 and answers as core's `Sizing` at P90, and at P50 without simulating again;
//! MTP speculative decoding shows InferenceX's published acceptance with its source and answers as core's
//! sweep with it; the x axis switches to E2E-normalized interactivity without sweeping again; an AIPerf
//! `profile_export_aiperf.json` and an SGLang JSONL file (the committed samples, written from their
//! documented schemas) are imported and compared percentile by percentile with core's `compare_measured`; a
//! malformed file and one over the size cap are refused with a notice, nothing kept is lost and the page
//! still answers; and a reload keeps every input and run.

use std::time::Duration;

use crate::browser_serving::choose_file;
use crate::browser_sizing::attr;
use roofline_core::{
    Corrections, Engine, EngineFeatures, LatencyMetric, Parallelism, Percentile, QuantConfig, SchedulerKind,
    ServingScenario, ServingWorkload, Sizing, SizingSpec, Sla, SpecDecoding, SpecMethod, Sweep, SweepSpec,
    compare_measured, find_hardware, find_model, find_quant_config, layouts, parse_measured, quant_configs,
    sweep,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser, unique_temp_dir, workspace_root};

const WAIT: Duration = Duration::from_secs(60);
const LENGTHS: ServingWorkload = ServingWorkload { isl: 1024, osl: 1024 };

/// MTP with 3 drafts at InferenceX's golden acceptance length, 2.49 (`roofline serve --spec-method mtp`).
fn mtp() -> SpecDecoding {
    SpecDecoding::new(SpecMethod::Mtp, 3, None).unwrap()
}

/// Core's sweep of Llama-3.1-8B on H100 SXMs over every config and layout (`roofline serve --hardware
/// h100_sxm --model llama-3.1-8b --tp 1,2,4,8 [--spec-method mtp]`).
fn core_sweep(speculative: Option<SpecDecoding>) -> Sweep {
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
    let parallelisms = layouts(model, &hardware);
    sweep(&SweepSpec {
        parallelisms: &parallelisms,
        features: EngineFeatures {
            speculative,
            ..EngineFeatures::default()
        },
        ..SweepSpec::new(&hardware, model, &configs, LENGTHS)
    })
    .unwrap()
}

/// Core's recommendation (config, output tokens/s per GPU) over `swept` at ≥ `tpu` tokens/s per user read
/// at statistic `at` (`--tpu-min <tpu> --percentile <at>`).
fn core_pick(swept: &Sweep, at: Percentile, tpu: f64) -> (String, f64) {
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let spec = SizingSpec {
        sla: Sla {
            tokens_per_user_min: Some(tpu),
            ..Sla::default()
        },
        percentile: at,
        gpus: &[],
    };
    let best = Sizing::new(swept, find_model("llama-3.1-8b").unwrap(), &hardware, &spec)
        .outcome
        .recommendation
        .expect("something meets the limit");
    (best.config, best.output_tokens_per_s_per_gpu)
}

/// Waits until the page recommends `pick` at statistic `at`.
async fn wait_pick(browser: &Browser, at: Percentile, (config, value): &(String, f64)) {
    browser
        .wait_for_js(
            &format!(
                "(() => {{ const r = document.querySelector('[data-testid=serving-recommendation]');\
                 return r && r.dataset.percentile === '{}' && r.dataset.config === '{config}' &&\
                 Math.abs(parseFloat(r.dataset.value) - {value:e}) <= 1e-9 * {value:e}; }})()",
                at.key()
            ),
            WAIT,
        )
        .await;
}

async fn sweeps(browser: &Browser) -> String {
    browser
        .js("return document.querySelector('[data-testid=serving-view]').dataset.sweeps;")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

/// Imports `name` from core's samples, confirmed as run with the current scenario, and waits for `runs` kept.
async fn import(browser: &Browser, name: &str, runs: usize) {
    choose_file(
        browser,
        &workspace_root().join("core/tests/data/serving").join(name),
    )
    .await;
    browser.click("[data-testid=serving-confirm-button]").await;
    browser
        .wait_data("serving-import", "runs", &runs.to_string())
        .await;
}

/// Waits until the import notice refuses a file with a message containing `what`; the runs stay `runs`.
async fn refused(browser: &Browser, what: &str, runs: usize) {
    browser.wait_data("serving-import-message", "ok", "false").await;
    let message = browser.text("[data-testid=serving-import-message]").await;
    assert!(message.contains(what), "{message}");
    browser
        .wait_data("serving-import", "runs", &runs.to_string())
        .await;
    let confirms = browser
        .js("return document.querySelectorAll('[data-testid=serving-confirm]').length;")
        .await;
    assert_eq!(confirms, 0, "nothing to confirm after {message}");
}

/// The AIPerf run's P90 TTFT and TPOT ratios as core computes them: its own client (concurrency 32, 320
/// requests) simulated for BF16 on one H100 with vLLM's defaults and MTP.
fn aiperf_ratios() -> Vec<(LatencyMetric, f64)> {
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let scenario = ServingScenario {
        features: EngineFeatures {
            speculative: Some(mtp()),
            ..EngineFeatures::default()
        },
        ..Engine::Vllm.preset(&hardware, &Parallelism::SINGLE).scenario(
            &hardware,
            find_model("llama-3.1-8b").unwrap(),
            find_quant_config("bf16").unwrap(),
            Parallelism::SINGLE,
            Corrections::REALISTIC,
            SchedulerKind::InFlight,
        )
    };
    let text =
        std::fs::read_to_string(workspace_root().join("core/tests/data/serving/aiperf_profile_export.json"))
            .unwrap();
    let compared = compare_measured(scenario, LENGTHS, &parse_measured(&text).unwrap()).unwrap();
    [LatencyMetric::Ttft, LatencyMetric::Tpot]
        .into_iter()
        .map(|metric| {
            let r = compared[0]
                .percentiles
                .iter()
                .find(|r| r.metric == metric && r.percentile == Percentile::P90)
                .expect("the AIPerf sample has P90s");
            (metric, r.ratio)
        })
        .collect()
}

/// Imports the AIPerf and SGLang samples, checks the AIPerf row's P90 ratios against core, then a malformed
/// file and one over the cap; returns the runs kept.
async fn imports(browser: &Browser) -> usize {
    import(browser, "aiperf_profile_export.json", 1).await;
    let row = "[data-testid=serving-measured] tr[data-file='aiperf_profile_export.json']";
    for (metric, ratio) in aiperf_ratios() {
        let css = format!(
            "{row} [data-testid=pct-ratios] span[data-metric={}][data-percentile=p90]",
            metric.name().to_ascii_lowercase()
        );
        let shown: f64 = attr(browser, &css, "data-value").await.parse().unwrap();
        assert!(
            (shown / ratio - 1.0).abs() < 1e-9,
            "{css}: {shown} vs core's {ratio}"
        );
    }
    // SGLang's JSONL: one run per line, taken as run on SGLang (the file's engine), so compared with SGLang's
    // simulation only: counted apart from the vLLM view's runs.
    import(browser, "sglang_benchmark_serving.jsonl", 3).await;
    browser.wait_data("serving-elsewhere", "count", "2").await;
    let elsewhere = browser.text("[data-testid=serving-elsewhere]").await;
    assert!(
        elsewhere.contains("SGLang") && elsewhere.contains("another engine"),
        "{elsewhere}"
    );

    let dir = unique_temp_dir("serving-sim-import");
    let bad = dir.join("broken_aiperf.json");
    let text =
        std::fs::read_to_string(workspace_root().join("core/tests/data/serving/aiperf_profile_export.json"))
            .unwrap();
    std::fs::write(&bad, &text[..text.len() / 2]).unwrap();
    choose_file(browser, &bad).await;
    refused(browser, "broken_aiperf.json", 3).await;
    // Over the 64 MiB cap (a sparse file): refused from its size, before it is read.
    let big = dir.join("huge.jsonl");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    choose_file(browser, &big).await;
    refused(browser, "read up to 64 MiB", 3).await;
    let _ = std::fs::remove_dir_all(&dir);
    3
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_view_reads_a_percentile_speculation_imports_and_its_x_axis() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&view=serving&tpu=20",
        )
        .await;

    // 1. P90 by default, as core's sizing at P90; P50 answers from the same sweep.
    let plain = core_sweep(None);
    wait_pick(
        &browser,
        Percentile::P90,
        &core_pick(&plain, Percentile::P90, 20.0),
    )
    .await;
    let select = |id: &'static str| format!("return document.querySelector('[data-testid={id}]').value;");
    assert_eq!(browser.js(&select("serving-percentile")).await, "p90");
    let before = sweeps(&browser).await;
    browser.select("serving-percentile", "p50").await;
    wait_pick(
        &browser,
        Percentile::P50,
        &core_pick(&plain, Percentile::P50, 20.0),
    )
    .await;
    assert_eq!(
        sweeps(&browser).await,
        before,
        "a percentile change simulates nothing"
    );
    browser.select("serving-percentile", "p90").await;

    // 2. Speculative decoding: MTP's published acceptance with its source, swept as core sweeps it.
    browser.select("spec-method", "mtp").await;
    let published = browser.text("[data-testid=spec-published]").await;
    assert!(published.contains("2.49 (InferenceX golden AL"), "{published}");
    let speculative = core_sweep(Some(mtp()));
    wait_pick(
        &browser,
        Percentile::P90,
        &core_pick(&speculative, Percentile::P90, 20.0),
    )
    .await;
    let context = browser.text("[data-testid=serving-context]").await;
    assert!(context.contains("MTP, 3 drafts, acceptance 2.49"), "{context}");

    // 3. The x axis: E2E-normalized interactivity sits below tokens/s per user (it adds TTFT per token).
    let range = || async {
        let r = browser.js("return document.querySelector('[data-testid=serving-canvas]').closest('.chart-frame-wrap').dataset.xRange;").await;
        let r = r.as_str().unwrap().to_owned();
        let (lo, hi) = r.split_once(',').unwrap();
        (lo.parse::<f64>().unwrap(), hi.parse::<f64>().unwrap())
    };
    let (_, tpu_hi) = range().await;
    let swept = sweeps(&browser).await;
    browser.select("serving-x-axis", "e2e").await;
    browser
        .wait_for_js(&format!("parseFloat(document.querySelector('.chart-frame-wrap').dataset.xRange.split(',')[1]) < {tpu_hi}"), WAIT)
        .await;
    assert_eq!(sweeps(&browser).await, swept, "an axis change sweeps nothing");

    // 4. Imports, a malformed file and one over the cap.
    let runs = imports(&browser).await;

    // The page still answers: a new limit is core's answer.
    browser.type_into("[data-testid=sla-tpu]", "60", "change").await;
    let limited = core_pick(&speculative, Percentile::P90, 60.0);
    wait_pick(&browser, Percentile::P90, &limited).await;

    // 5. The link and a reload keep every input and run.
    let link = browser.settled_url().await;
    assert!(
        link.contains("spec=mtp") && link.contains("x=e2e") && !link.contains("pct="),
        "{link}"
    );
    browser.client.refresh().await.unwrap();
    wait_pick(&browser, Percentile::P90, &limited).await;
    browser
        .wait_data("serving-import", "runs", &runs.to_string())
        .await;
    assert_eq!(browser.js(&select("spec-method")).await, "mtp");
    assert_eq!(browser.js(&select("serving-x-axis")).await, "e2e");
    browser.close().await;
}
