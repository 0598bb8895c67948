//! Real-browser tests of the models users run: the GPU count (tensor parallel) splits the step, the memory
//! bar is per GPU, the summary shows the communication share and the operator table the collectives, a GPU
//! count the device cannot take is core's error; and a Hugging Face `config.json` imported by pasting is
//! selected, analysed as core parses it, kept after a reload and carried by a share link.

use std::time::Duration;

use roofline_core::{
    Corrections, ModelConfig, Parallelism, Phase, Recommendation, Workload, advise_model_parallel,
    analyze_model_parallel, find_hardware, find_model, find_quant_config, recommend_model_parallel,
};
use roofline_tests::{Endpoint, browser::Browser, require_browser, workspace_root};

const WAIT: Duration = Duration::from_secs(30);

fn decode(batch: u32, context: u32) -> Workload {
    Workload {
        phase: Phase::Decode,
        batch,
        context,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_count_splits_the_step_per_gpu_with_collectives() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    let (hw, model, batch, context) = ("h100_sxm", "llama-3.1-70b", 8, 4096);
    let spec = find_hardware(hw).unwrap().reference().unwrap();
    let (llama, bf16) = (find_model(model).unwrap(), find_quant_config("bf16").unwrap());
    let core = |gpus: u32| {
        analyze_model_parallel(
            &spec,
            llama,
            bf16,
            &decode(batch, context),
            &Parallelism::tensor(gpus),
            &Corrections::REALISTIC,
        )
        .unwrap()
    };
    browser
        .open(
            &endpoint.url(),
            &format!("hw={hw}&model={model}&cfg=bf16&phase=decode&b={batch}&s={context}"),
        )
        .await;

    // 1. One GPU: 141 GB of weights in 80 GB, the bar is red and says so; no communication.
    browser.wait_data("memory-bar", "fits", "false").await;
    let bar_class = browser
        .js("return document.querySelector('[data-testid=memory-bar]').className;")
        .await;
    assert!(bar_class.as_str().unwrap().contains("over"), "{bar_class}");
    let headroom = browser.text("[data-testid=memory-headroom]").await;
    assert!(headroom.starts_with("does not fit"), "{headroom}");
    assert_eq!(browser.data_value("summary-gpus").await, "1");
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=summary-communication]') === null;")
            .await,
        true,
        "one GPU has no communication cell"
    );
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('[data-testid=operators] tr[data-op$=_all_reduce]').length;"
            )
            .await,
        0
    );

    // 2. Four GPUs over NVLink: each holds a quarter, the bar fits, TPOT is core's, the all-reduces show.
    browser.select("gpus-select", "4").await;
    let four = core(4);
    assert!(four.fits_in_memory && four.communication_fraction > 0.0);
    browser.wait_value("summary-tpot", four.tpot_s.unwrap()).await;
    browser.wait_data("memory-bar", "fits", "true").await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=memory-bar]').dataset.gpus;")
            .await,
        "4"
    );
    let legend = browser.text("[data-testid=memory-bar] .memory-legend").await;
    assert!(legend.contains("per GPU (of 4)"), "{legend}");
    assert_eq!(browser.data_value("summary-gpus").await, "4");
    assert_eq!(browser.data_value("summary-memory-fit").await, "true");
    browser
        .wait_value("summary-weights-per-gpu", four.weight_bytes_per_gpu)
        .await;
    browser
        .wait_value("summary-kv-per-gpu", four.kv_cache_bytes_per_gpu)
        .await;
    browser
        .wait_value("summary-communication", four.communication_fraction)
        .await;
    let communication = browser.text("[data-testid=summary-communication]").await;
    assert!(communication.contains("% of step"), "{communication}");
    // The collectives in the operator table: no FLOPs, bound by the interconnect, a share of the time.
    let collectives = browser
        .js(
            "return [...document.querySelectorAll('[data-testid=operators] tbody tr')]\
           .filter(r => r.dataset.op.endsWith('all_reduce'))\
           .map(r => [...r.querySelectorAll('td')].map(td => td.textContent));",
        )
        .await;
    let collectives = collectives.as_array().unwrap();
    let expected_names: Vec<_> = four
        .ops
        .iter()
        .filter(|o| o.name.ends_with("all_reduce"))
        .map(|o| o.name.clone())
        .collect();
    assert!(expected_names.len() >= 2, "{expected_names:?}");
    assert_eq!(collectives.len(), expected_names.len(), "{collectives:?}");
    for row in collectives {
        let cells: Vec<&str> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(expected_names.iter().any(|n| n == cells[0]), "{cells:?}");
        assert_eq!(
            (cells[2], cells[3]),
            ("—", "0"),
            "AI and GFLOP of a collective: {cells:?}"
        );
        assert_eq!(cells[7], "interconnect", "{cells:?}");
        // The time in an adaptive unit, e.g. "12.3 µs".
        let time: f64 = cells[5].split_whitespace().next().unwrap().parse().unwrap();
        assert!(time > 0.0, "time: {cells:?}");
    }
    let url = browser.settled_url().await;
    assert!(url.contains("tp=4"), "the link carries the GPU count: {url}");

    // 3. The Advisor shows each config's fewest GPUs: BF16 needs more than one, as core says.
    browser.click("#tab-1").await;
    let advice = advise_model_parallel(
        &spec,
        llama,
        &decode(batch, context),
        &Parallelism::tensor(4),
        "bf16",
        &Corrections::REALISTIC,
    )
    .unwrap();
    // The one answer is core's for four GPUs: BF16 fits there, so it is not "nothing fits".
    let answer = recommend_model_parallel(
        &spec,
        llama,
        &decode(batch, context),
        &Parallelism::tensor(4),
        &Corrections::REALISTIC,
        &advice,
    )
    .unwrap();
    let (kind, config) = match &answer {
        Recommendation::Switch(p) => ("switch", p.config.clone()),
        Recommendation::Keep(p) => ("keep", p.config.clone()),
        Recommendation::NothingFits { .. } => panic!("{answer:?}"),
    };
    let rec = browser.element("[data-testid=recommendation]").await;
    assert_eq!(rec.attr("data-kind").await.unwrap().as_deref(), Some(kind));
    assert_eq!(rec.attr("data-config").await.unwrap(), Some(config));
    let text = rec.text().await.unwrap();
    assert!(!text.contains("does not fit"), "BF16 fits on four GPUs: {text}");
    for c in &advice.candidates {
        let css = format!("li.candidate[data-config='{}'] [data-testid=min-gpus]", c.config);
        let value = browser
            .element(&css)
            .await
            .attr("data-value")
            .await
            .unwrap()
            .unwrap_or_default();
        assert_eq!(
            value,
            c.min_gpus.map_or(String::new(), |n| n.to_string()),
            "{}",
            c.config
        );
    }
    // 16-bit weights need more than one H100; 4-bit ones fit on one.
    let min_gpus: Vec<_> = advice
        .candidates
        .iter()
        .map(|c| (c.config.as_str(), c.min_gpus))
        .collect();
    assert!(
        min_gpus.iter().any(|(_, n)| n.is_some_and(|n| n > 1)),
        "{min_gpus:?}"
    );
    assert!(min_gpus.iter().any(|(_, n)| *n == Some(1)), "{min_gpus:?}");

    // 4. A device without a link figure cannot take 4 GPUs: core's error is shown, the page keeps working.
    browser.select("hardware-select", "rtx_5090").await;
    let error = browser
        .wait_for_js(
            "document.querySelector('[data-testid=analysis-error]')?.textContent",
            WAIT,
        )
        .await;
    assert!(error.as_str().unwrap().contains("interconnect"), "{error}");
    browser.select("gpus-select", "1").await;
    browser
        .wait_for_js("!document.querySelector('[data-testid=analysis-error]')", WAIT)
        .await;
    assert_eq!(browser.data_value("summary-gpus").await, "1");

    // 5. Expert parallel, offered for MoE models only: the all-to-alls appear and TPOT is core's.
    assert_eq!(
        browser
            .js("return document.querySelectorAll('[data-testid=ep-select]').length;")
            .await,
        0,
        "Llama is dense: no expert-parallel control"
    );
    browser.select("hardware-select", hw).await;
    browser.select("model-select", "qwen3-30b-a3b").await;
    browser.select("gpus-select", "4").await;
    browser.select("ep-select", "4").await;
    let moe = analyze_model_parallel(
        &spec,
        find_model("qwen3-30b-a3b").unwrap(),
        bf16,
        &decode(batch, context),
        &Parallelism {
            tensor: 4,
            expert: 4,
            pipeline: 1,
        },
        &Corrections::REALISTIC,
    )
    .unwrap();
    browser.wait_value("summary-tpot", moe.tpot_s.unwrap()).await;
    assert_eq!(
        browser
            .js(
                "return document.querySelectorAll('[data-testid=operators] tr[data-op$=_all_to_all]').length;"
            )
            .await,
        2
    );
    let url = browser.settled_url().await;
    assert!(url.contains("tp=4") && url.contains("ep=4"), "{url}");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_json_import_is_selected_stored_and_shared() {
    if !require_browser() {
        return;
    }
    let endpoint = Endpoint::start();
    let browser = Browser::start().await;
    let json = std::fs::read_to_string(workspace_root().join("core/tests/data/hf/qwen3-8b.json")).unwrap();
    browser
        .open(
            &endpoint.url(),
            "hw=h100_sxm&model=llama-3.1-8b&cfg=bf16&phase=decode&b=1&s=4096",
        )
        .await;
    browser.click("[data-testid=model-import] summary").await;
    // 1. Malformed JSON: an error naming the field, nothing changes.
    let tpot_before = browser.data_value("summary-tpot").await;
    browser
        .type_into(
            "[data-testid=model-json]",
            "{\"architectures\": [\"Qwen3ForCausalLM\"], oops",
            "input",
        )
        .await;
    browser.click("[data-testid=model-import-button]").await;
    let message = browser.element("[data-testid=model-import-message]").await;
    assert_eq!(message.attr("data-ok").await.unwrap().as_deref(), Some("false"));
    let text = message.text().await.unwrap();
    assert!(
        text.contains("config.json") && text.contains("not JSON"),
        "{text}"
    );
    let missing = json.replace("\"num_hidden_layers\"", "\"layers\"");
    browser
        .type_into("[data-testid=model-json]", &missing, "input")
        .await;
    browser.click("[data-testid=model-import-button]").await;
    browser
        .wait_for_js(
            "document.querySelector('[data-testid=model-import-message]').textContent.includes('num_hidden_layers')",
            WAIT,
        )
        .await;
    assert_eq!(
        browser
            .js("return document.querySelector('[data-testid=model-select]').value;")
            .await,
        "llama-3.1-8b"
    );
    assert_eq!(browser.data_value("summary-tpot").await, tpot_before);

    // 2. The real file: selected under a fresh key, and the summary's weights are core's for the parsed config.
    browser
        .type_into("[data-testid=model-json]", &json, "input")
        .await;
    browser.click("[data-testid=model-import-button]").await;
    browser.wait_data("model-import-message", "ok", "true").await;
    let key = browser
        .js("return document.querySelector('[data-testid=model-select]').value;")
        .await;
    let key = key.as_str().unwrap().to_owned();
    assert!(find_model(&key).is_err(), "the key {key} is not a preset's");
    let parsed = ModelConfig::from_hf_config_json(&key, &json).unwrap();
    let bf16 = find_quant_config("bf16").unwrap();
    browser
        .wait_value("summary-weights", parsed.weight_bytes(bf16))
        .await;
    let spec = find_hardware("h100_sxm").unwrap().reference().unwrap();
    let core = analyze_model_parallel(
        &spec,
        &parsed,
        bf16,
        &decode(1, 4096),
        &Parallelism::SINGLE,
        &Corrections::REALISTIC,
    )
    .unwrap();
    browser.wait_value("summary-tpot", core.tpot_s.unwrap()).await;
    assert_eq!(
        browser.js(&format!("return document.querySelectorAll(`[data-testid=imported-models] option[value='{key}']`).length;")).await,
        1
    );

    // 3. After a reload (no scenario in the URL), the model is still there and still selected.
    browser
        .client
        .goto(&format!("{}/", endpoint.url()))
        .await
        .unwrap();
    browser
        .wait_for_js(
            &format!("document.querySelector('[data-testid=model-select]')?.value === '{key}'"),
            WAIT,
        )
        .await;
    browser
        .wait_value("summary-weights", parsed.weight_bytes(bf16))
        .await;
    let link = browser.settled_url().await;
    assert!(link.contains("mdl="), "the link carries the model: {link}");
    browser.close().await;

    // 4. A fresh profile opens the share link with the same model and numbers, no notice.
    let fresh = Browser::start().await;
    fresh.client.goto(&link).await.unwrap();
    fresh
        .wait_for_js(
            &format!("document.querySelector('[data-testid=model-select]')?.value === '{key}'"),
            WAIT,
        )
        .await;
    fresh.wait_value("summary-tpot", core.tpot_s.unwrap()).await;
    assert_eq!(
        fresh
            .js("return document.querySelectorAll('[data-testid=storage-notice]').length;")
            .await,
        0
    );

    // 5. Removing it falls back to the default model; the page keeps working.
    fresh.click("[data-testid=model-import] summary").await;
    fresh.click("[data-testid=model-remove]").await;
    fresh
        .wait_for_js(
            "document.querySelector('[data-testid=model-select]')?.value === 'llama-3.1-8b'",
            WAIT,
        )
        .await;
    assert_eq!(
        fresh
            .js("return document.querySelectorAll('[data-testid=imported-models] option').length;")
            .await,
        0
    );
    assert!(
        fresh
            .js("return document.querySelector('[data-testid=summary-tpot]').dataset.value;")
            .await
            != ""
    );

    // 6. Choosing a file: the key comes from its name, made distinct from the preset of the same name.
    let file = workspace_root().join("core/tests/data/hf/gpt-oss-20b.json");
    fresh
        .element("[data-testid=model-file]")
        .await
        .send_keys(&file.display().to_string())
        .await
        .unwrap();
    fresh
        .wait_for_js(
            "document.querySelector('[data-testid=model-select]')?.value === 'gpt-oss-20b-2'",
            WAIT,
        )
        .await;
    let parsed =
        ModelConfig::from_hf_config_json("gpt-oss-20b-2", &std::fs::read_to_string(&file).unwrap()).unwrap();
    fresh
        .wait_value("summary-weights", parsed.weight_bytes(bf16))
        .await;
    fresh.close().await;
}
