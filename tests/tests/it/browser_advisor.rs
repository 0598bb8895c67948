//! Real-browser tests of the advisor's one answer and the memory fit: the recommendation is core's, Apply
//! switches the scenario (and the summary follows), an over-capacity step is red and its rates say "does not
//! fit", and when nothing fits the page says what to change.

use std::time::Duration;

use roofline_core::{
    Corrections, Phase, Recommendation, Workload, advise_model, analyze_model, find_hardware, find_model,
    find_quant_config, recommend_model,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser};

const WAIT: Duration = Duration::from_secs(30);

/// Core's recommendation in reference mode (the page's default) for a decode step.
fn core_recommendation(
    hardware: &str,
    model: &str,
    config: &str,
    batch: u32,
    context: u32,
) -> Recommendation {
    let spec = find_hardware(hardware).unwrap().reference().unwrap();
    let model = find_model(model).unwrap();
    let w = Workload {
        phase: Phase::Decode,
        batch,
        context,
    };
    let advice = advise_model(&spec, model, &w, config, &Corrections::REALISTIC).unwrap();
    recommend_model(&spec, model, &w, &Corrections::REALISTIC, &advice).unwrap()
}

/// Core's reference-mode TPOT for a decode step.
fn core_tpot(hardware: &str, model: &str, config: &str, batch: u32, context: u32) -> f64 {
    let spec = find_hardware(hardware).unwrap().reference().unwrap();
    let w = Workload {
        phase: Phase::Decode,
        batch,
        context,
    };
    let (model, config) = (find_model(model).unwrap(), find_quant_config(config).unwrap());
    analyze_model(&spec, model, config, &w, &Corrections::REALISTIC)
        .unwrap()
        .tpot_s
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recommendation_apply_and_memory_fit() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;

    // 1. Llama-3.1-70B in BF16 on one H100: 141 GB of weights in 80 GB. The bar is red, and TPOT and
    // tokens/s are marked "does not fit" instead of looking achievable.
    let (hw, model, batch, context) = ("h100_sxm", "llama-3.1-70b", 8, 4096);
    browser
        .open(
            &endpoint.url(),
            &format!("hw={hw}&model={model}&cfg=bf16&phase=decode&b={batch}&s={context}"),
        )
        .await;
    browser.wait_data("memory-bar", "fits", "false").await;
    let bar_class = browser
        .js("return document.querySelector('[data-testid=memory-bar]').className;")
        .await;
    assert!(
        bar_class.as_str().unwrap().contains("over"),
        "bar class {bar_class}"
    );
    // Red: the track's border is the over-capacity colour, not the neutral border.
    let colours = browser
        .js(
            "const t = getComputedStyle(document.querySelector('[data-testid=memory-bar] .memory-track'));\
         const p = getComputedStyle(document.querySelector('[data-testid=memory-headroom]'));\
         return [t.borderTopColor, p.color];",
        )
        .await;
    for c in colours.as_array().unwrap() {
        let rgb: Vec<u32> = c
            .as_str()
            .unwrap()
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect();
        assert!(rgb[0] > 150 && rgb[1] < 100 && rgb[2] < 100, "not red: {c}");
    }
    let headroom = browser.text("[data-testid=memory-headroom]").await;
    assert!(headroom.starts_with("does not fit"), "headroom: {headroom}");
    for testid in ["summary-tpot-fit", "summary-tokens-per-s-fit"] {
        let mark = browser
            .element(&format!("[data-testid={testid}]"))
            .await
            .text()
            .await
            .unwrap();
        assert_eq!(mark, "does not fit", "{testid}");
    }
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=summary-tpot]').dataset.fits;")
            .await,
        "false"
    );
    // TTFT is not a decode figure (`—`): nothing to mark.
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=summary-ttft-fit]').length;")
            .await,
        0
    );
    // The weights segment is wider than the KV segment and both are drawn.
    let widths = browser.js("return ['memory-weights', 'memory-kv'].map(t => document.querySelector(`[data-testid=${t}]`).getBoundingClientRect().width);",
    )
    .await;
    let (w, kv) = (widths[0].as_f64().unwrap(), widths[1].as_f64().unwrap());
    assert!(w > kv && kv > 0.0, "weights {w} px, KV {kv} px");

    // 2. The Advisor's answer at the top is core's: the fastest config that fits. Apply switches the
    // scenario's config; the summary follows and the bar turns to fits.
    let Recommendation::Switch(pick) = core_recommendation(hw, model, "bf16", batch, context) else {
        panic!("core recommends no switch for 70B BF16 on an H100");
    };
    browser.click("#tab-1").await;
    let rec = browser.element("[data-testid=recommendation]").await;
    assert_eq!(rec.attr("data-kind").await.unwrap().as_deref(), Some("switch"));
    assert_eq!(rec.attr("data-config").await.unwrap(), Some(pick.config.clone()));
    let text = rec.text().await.unwrap();
    assert!(
        text.contains(&pick.name) && text.contains(&format!("{:.2}× vs baseline", pick.speedup)),
        "recommendation: {text}"
    );
    let tpot_before = browser
        .js("return document.querySelector('[data-testid=summary-tpot]').dataset.value;")
        .await;
    browser.click("[data-testid=apply-recommendation]").await;
    browser
        .wait_for_js(
            &format!(
                "document.querySelector('[data-testid=config-select]').value === '{}'",
                pick.config
            ),
            WAIT,
        )
        .await;
    let expected = core_tpot(hw, model, &pick.config, batch, context);
    browser
        .wait_for_js(
            &format!(
                "Math.abs(parseFloat(document.querySelector('[data-testid=summary-tpot]').dataset.value) - {expected:e}) <= 1e-9 * {expected:e}"
            ),
            WAIT,
        )
        .await;
    let tpot_after = browser
        .js("return document.querySelector('[data-testid=summary-tpot]').dataset.value;")
        .await;
    assert_ne!(tpot_before, tpot_after, "the summary changed");
    browser.wait_data("memory-bar", "fits", "true").await;
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=summary-tpot-fit]').length;")
            .await,
        0
    );
    assert!(
        browser
            .js("return location.search;")
            .await
            .as_str()
            .unwrap()
            .contains(&format!("cfg={}", pick.config)),
        "the applied config is in the URL"
    );
    // Now the answer is to keep it.
    browser.wait_data("recommendation", "kind", "keep").await;

    // 3. Nothing fits (405B at batch 64 on one H100): the page says what to change, most direct first.
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-405b&cfg=bf16&phase=decode&b=64&s=8192",
        )
        .await;
    browser.click("#tab-1").await;
    browser.wait_data("recommendation", "kind", "nothing-fits").await;
    let Recommendation::NothingFits { changes, .. } =
        core_recommendation("h100_sxm", "llama-3.1-405b", "bf16", 64, 8192)
    else {
        panic!("405B fits on one H100?");
    };
    let shown = browser
        .js("return [...document.querySelectorAll('[data-testid=fit-change]')].map(e => e.textContent);")
        .await;
    let shown: Vec<String> = serde_json::from_value(shown).unwrap();
    assert_eq!(shown, changes);
    assert!(shown[0].starts_with("Smaller weights"), "{shown:?}");
    assert!(shown.iter().any(|c| c.starts_with("More GPUs")), "{shown:?}");
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=apply-recommendation]').length;")
            .await,
        0,
        "nothing to apply"
    );

    browser.close().await;
}
