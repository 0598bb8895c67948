//! Real-browser test of the serving view: Llama-3.1-8B on H100 SXMs opens in the serving view, the Pareto
//! canvas is drawn (every point once all series are shown) and the page's recommendation and per-config
//! table are core's `sweep` over every layout and its `Sizing` for the same inputs;
//! an SLA changes the recommendation as core's `Sla` does, without sweeping again; a `vllm bench serve
//! --save-result` file imported for BF16 shows its run and its error against core's `compare_measured`, a
//! re-import adds nothing and a malformed file gives core's parse error and keeps the kept run; a reload
//! keeps the serving scenario and the run, a share link restores the scenario; the view fits 1440 and 390 px
//! without page-level horizontal scroll; and switching back draws the roofline again.

use std::time::Duration;

use roofline_core::{
    Corrections, Engine, Load, Parallelism, QuantConfig, SchedulerKind, ServingPoint, ServingWorkload,
    Sizing, SizingSpec, Sla, Sweep, SweepSpec, compare_measured, find_hardware, find_model,
    find_quant_config, layouts, parse_measured, quant_configs, sweep,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser, unique_temp_dir, workspace_root};

const WAIT: Duration = Duration::from_secs(30);
/// ISL and OSL of the view (its defaults) and of the committed vLLM run (1024 each from its totals).
const LENGTHS: ServingWorkload = ServingWorkload { isl: 1024, osl: 1024 };

/// Core's sweep of every config over every layout for Llama-3.1-8B on H100 SXMs in reference mode (the
/// page's default), vLLM defaults, in-flight batching: what `roofline serve --hardware h100_sxm --model
/// llama-3.1-8b --isl 1024 --osl 1024 --tp 1,2,4,8` computes.
fn core_sweep() -> Sweep {
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let configs: Vec<&QuantConfig> = quant_configs().iter().collect();
    let model = find_model("llama-3.1-8b").unwrap();
    let parallelisms = layouts(model, &hardware);
    sweep(&SweepSpec {
        parallelisms: &parallelisms,
        ..SweepSpec::new(&hardware, model, &configs, LENGTHS)
    })
    .unwrap()
}

/// Core's answer under `sla` over `sweep` (the configs vLLM serves on Hopper).
fn core_answer(sweep: &Sweep, sla: Sla) -> roofline_core::SlaOutcome {
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let model = find_model("llama-3.1-8b").unwrap();
    Sizing::new(
        sweep,
        model,
        &hardware,
        &SizingSpec {
            sla,
            percentile: roofline_core::Percentile::P90,
            gpus: &[],
        },
    )
    .outcome
}

/// Waits until the page's recommendation is `expected` (config, concurrency, output tokens/s per GPU within
/// a relative 1e-9) and returns its text.
async fn wait_recommendation(browser: &Browser, expected: &ServingPoint) -> String {
    let Load::Concurrency(n) = expected.load else {
        panic!("the grid has concurrencies only")
    };
    browser
        .wait_for_js(
            &format!(
                "(() => {{ const r = document.querySelector('[data-testid=serving-recommendation]');\
                 return r && r.dataset.config === '{}' && r.dataset.concurrency === '{n}' &&\
                 Math.abs(parseFloat(r.dataset.value) - {:e}) <= 1e-9 * {:e}; }})()",
                expected.config, expected.output_tokens_per_s_per_gpu, expected.output_tokens_per_s_per_gpu
            ),
            WAIT,
        )
        .await;
    browser.text("[data-testid=serving-recommendation] .pick").await
}

/// Chooses `path` in the serving file input.
pub(crate) async fn choose_file(browser: &Browser, path: &std::path::Path) {
    browser
        .element("[data-testid=serving-file]")
        .await
        .send_keys(&path.display().to_string())
        .await
        .unwrap();
}

/// The page is at most as wide as the window, and the Pareto canvas spans at least `chart_share` of it (the
/// centre column on a desktop, the whole width but the margins on a phone).
async fn assert_fits(browser: &Browser, width: u32, chart_share: f64) {
    browser.client.set_window_size(width, 900).await.unwrap();
    browser
        .wait_for_js(
            &format!(
                "window.innerWidth <= {width} && document.querySelector('[data-testid=serving-canvas]')"
            ),
            WAIT,
        )
        .await;
    let (scroll, inner, chart) = browser.widths("[data-testid=serving-canvas]").await;
    assert!(
        scroll <= inner + 1.0,
        "page {scroll} px wide in a {inner} px window"
    );
    assert!(
        chart >= chart_share * inner,
        "chart {chart} px in a {inner} px window"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_view_is_cores_sweep_with_sla_measured_runs_storage_and_links() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    let core = core_sweep();

    // 1. The serving view from the header's switch: the canvas is drawn with every point of core's sweep, and
    // with no SLA the recommendation is core's point with the most output tokens/s per GPU.
    browser
        .open(&endpoint.url(), "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16")
        .await;
    browser.click("[data-testid=view-serving]").await;
    browser.click("[data-testid=serving-show-all]").await;
    browser
        .wait_data("serving-canvas", "points", &core.points.len().to_string())
        .await;
    browser
        .wait_for_js("window.__roofline_serving_draw_count >= 1", WAIT)
        .await;
    assert!(
        browser
            .non_background_pixels("[data-testid=serving-canvas]")
            .await
            > 5000,
        "the Pareto chart is drawn"
    );
    let open = core_answer(&core, Sla::default());
    let best = open.recommendation.clone().unwrap();
    let text = wait_recommendation(&browser, &best).await;
    assert!(text.contains("(no SLA set)"), "{text}");
    let context = browser.text("[data-testid=serving-context]").await;
    assert!(
        context.starts_with("reference · NVIDIA H100") && context.contains("ISL 1024 / OSL 1024 · vLLM"),
        "{context}"
    );
    // The table: one row per config that ran, each with core's most output per GPU over every layout and the
    // requests that fit on the layout it is on.
    let rows = browser
        .js(
            "return [...document.querySelectorAll('[data-testid=serving-table] tbody tr')].map(r =>\
             [r.dataset.config, r.querySelector('[data-testid=top-throughput]')?.dataset.value,\
              r.querySelector('[data-testid=max-fit]').dataset.value, r.dataset.gpus]);",
        )
        .await;
    let rows = rows.as_array().unwrap();
    let mut configs: Vec<&str> = Vec::new();
    for fit in &core.fits {
        if !configs.contains(&fit.config.as_str()) {
            configs.push(&fit.config);
        }
    }
    assert_eq!(rows.len(), configs.len());
    for (row, config) in rows.iter().zip(&configs) {
        assert_eq!(row[0], *config);
        let top = core
            .points
            .iter()
            .filter(|p| p.config == *config)
            .max_by(|a, b| {
                a.output_tokens_per_s_per_gpu
                    .total_cmp(&b.output_tokens_per_s_per_gpu)
            })
            .unwrap();
        let shown: f64 = row[1].as_str().unwrap().parse().unwrap();
        assert!(
            (shown / top.output_tokens_per_s_per_gpu - 1.0).abs() < 1e-9,
            "{config}: {shown} vs {top:?}"
        );
        let fit = core
            .fits
            .iter()
            .find(|f| f.config == *config && f.parallelism == top.parallelism)
            .unwrap();
        assert_eq!(row[2].as_str().unwrap(), fit.memory.max_sequences.to_string());
        assert_eq!(row[3].as_str().unwrap(), fit.gpus.to_string());
    }
    let unsupported = browser
        .js("return document.querySelectorAll('[data-testid=serving-unsupported] li').length;")
        .await;
    assert_eq!(unsupported, core.unsupported.len());
    let hopper = browser
        .text("[data-testid=serving-unsupported] li[data-config='nvfp4-w4a4']")
        .await;
    assert!(hopper.contains("Hopper"), "{hopper}");
    let sweeps = || async {
        browser
            .js("return document.querySelector('[data-testid=serving-view]').dataset.sweeps;")
            .await
    };
    assert_eq!(sweeps().await, "1");

    // 2. TPOT ≤ 20 ms: the recommendation is core's under that SLA and differs from the open one; the sweep
    // is not run again. An impossible limit says why nothing meets it, in core's words.
    browser.type_into("[data-testid=sla-tpot]", "20", "change").await;
    let sla = Sla {
        tpot_max_s: Some(0.02),
        ..Sla::default()
    };
    let limited = core_answer(&core, sla).recommendation.unwrap();
    assert_ne!(
        (&limited.config, limited.load),
        (&best.config, best.load),
        "the SLA changes the answer"
    );
    let text = wait_recommendation(&browser, &limited).await;
    assert!(text.contains("— meets TPOT ≤ 20.0 ms"), "{text}");
    let name = find_quant_config(&limited.config).unwrap().name.clone();
    assert!(
        text.starts_with(&format!("{name} on ")),
        "names, not keys: {text}"
    );
    assert_eq!(sweeps().await, "1", "an SLA change does not sweep again");
    browser.type_into("[data-testid=sla-tpot]", "0.1", "change").await;
    browser.wait_data("serving-recommendation", "kind", "none").await;
    let why = browser.text("[data-testid=serving-recommendation] .pick").await;
    let tight = Sla {
        tpot_max_s: Some(1e-4),
        ..Sla::default()
    };
    let reason = core_answer(&core, tight).reason.unwrap();
    assert_eq!(why, reason);
    browser.type_into("[data-testid=sla-tpot]", "20", "change").await;
    wait_recommendation(&browser, &limited).await;
    // Another ISL sweeps again; going back to 1024 comes from the cache.
    browser
        .type_into("[data-testid=serving-isl]", "4096", "change")
        .await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=serving-view]').dataset.sweeps === '2'",
            WAIT,
        )
        .await;
    browser
        .type_into("[data-testid=serving-isl]", "1024", "change")
        .await;
    wait_recommendation(&browser, &limited).await;
    assert_eq!(sweeps().await, "2", "a sweep seen lately is cached");

    // 3. The committed `vllm bench serve --save-result` file, confirmed as run with BF16 (the current
    // config): its run is drawn and its error is core's comparison at concurrency 16.
    let vllm = workspace_root().join("core/tests/data/serving/vllm_bench_serve.json");
    choose_file(&browser, &vllm).await;
    browser.element("[data-testid=serving-confirm]").await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=ran-config]').value;")
            .await,
        "bf16"
    );
    browser.click("[data-testid=serving-confirm-button]").await;
    browser.wait_data("serving-import", "runs", "1").await;
    browser
        .wait_data("serving-canvas", "points", &(core.points.len() + 1).to_string())
        .await;
    // Shown series stay shown while the page lives; the default is the front and the answer.
    browser.click("[data-testid=serving-show-default]").await;
    let hardware = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let scenario = Engine::Vllm.preset(&hardware, &Parallelism::SINGLE).scenario(
        &hardware,
        find_model("llama-3.1-8b").unwrap(),
        find_quant_config("bf16").unwrap(),
        Parallelism::SINGLE,
        Corrections::REALISTIC,
        SchedulerKind::InFlight,
    );
    let text = std::fs::read_to_string(&vllm).unwrap();
    let expected = compare_measured(scenario, LENGTHS, &parse_measured(&text).unwrap()).unwrap();
    let row = "[data-testid=serving-measured] tr[data-line='1']";
    for (testid, ratio) in [
        ("ttft-ratio", expected[0].ttft_ratio),
        ("tpot-ratio", expected[0].tpot_ratio),
        ("throughput-ratio", expected[0].output_throughput_ratio),
    ] {
        let shown: f64 = browser
            .element(&format!("{row} [data-testid={testid}]"))
            .await
            .attr("data-value")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let ratio = ratio.unwrap();
        assert!((shown / ratio - 1.0).abs() < 1e-9, "{testid}: {shown} vs {ratio}");
    }
    let cells = browser.text(row).await;
    assert!(
        cells.contains("vllm_bench_serve.json:1") && cells.contains("16 users"),
        "{cells}"
    );

    // Importing the same file again adds nothing.
    choose_file(&browser, &vllm).await;
    browser.click("[data-testid=serving-confirm-button]").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=serving-import-message]')?.innerText.includes('already imported: nothing added')",
            WAIT,
        )
        .await;
    browser.wait_data("serving-import", "runs", "1").await;

    // 4. A malformed file (the documented schema without `mean_tpot_ms`): core's error naming the field; the
    // kept run stays.
    let dir = unique_temp_dir("serving-import");
    let bad = dir.join("broken.json");
    std::fs::write(&bad, text.replace("\"mean_tpot_ms\"", "\"mean_tpot\"")).unwrap();
    choose_file(&browser, &bad).await;
    browser.wait_data("serving-import-message", "ok", "false").await;
    let message = browser.text("[data-testid=serving-import-message]").await;
    assert!(
        message.contains("broken.json") && message.contains("line 1: field `mean_tpot_ms` is missing"),
        "{message}"
    );
    browser.wait_data("serving-import", "runs", "1").await;
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=serving-confirm]').length;")
            .await,
        0
    );
    let _ = std::fs::remove_dir_all(&dir);

    // 5. A reload keeps the serving view, the SLA and the run (URL and local storage).
    browser.client.refresh().await.unwrap();
    wait_recommendation(&browser, &limited).await;
    browser.wait_data("serving-import", "runs", "1").await;
    browser.element(row).await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=sla-tpot]').value;")
            .await,
        "20"
    );

    // 6. The share link restores the scenario in a browser with nothing saved (runs stay local).
    let link = browser.settled_url().await;
    assert!(
        link.contains("view=serving") && link.contains("tpot=0.02"),
        "{link}"
    );
    browser.set_storage("localStorage.clear()").await;
    browser.client.goto("about:blank").await.unwrap();
    browser.client.goto(&link).await.unwrap();
    wait_recommendation(&browser, &limited).await;
    browser.wait_data("serving-import", "runs", "0").await;

    // 7. No page-level horizontal scroll at 1440 and 390 px.
    assert_fits(&browser, 1440, 0.4).await;
    assert_fits(&browser, 390, 0.8).await;

    // 8. Back to the model step: the roofline is drawn again, and the serving view's inputs stay in the link.
    browser.click("[data-testid=view-step]").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=roofline-canvas]') && window.__roofline_draw_count >= 1",
            WAIT,
        )
        .await;
    let link = browser.settled_url().await;
    assert!(
        !link.contains("view=serving") && link.contains("tpot=0.02"),
        "{link}"
    );
    browser.close().await;
}
