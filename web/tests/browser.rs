//! In-browser tests (headless Chromium through wasm-bindgen-test-runner): the mounted page with its test
//! hooks, storage recovery, the URL round trip and canvas drawing. One binary, so Leptos links once.
#![cfg(target_arch = "wasm32")]

use plotters::prelude::IntoDrawingArea;
use roofline_web::charts::draw::{Theme, draw};
use roofline_web::charts::series::{kernel_points, plot_data};
use roofline_web::presets::resolve_hardware;
use roofline_web::scenario::Scenario;
use roofline_web::share_link::SharedLink;
use roofline_web::{history, storage};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

/// Counts pixels that differ from the top-left (background) pixel.
fn foreground_pixels(canvas: &web_sys::HtmlCanvasElement) -> usize {
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").unwrap().unwrap().unchecked_into();
    let data = ctx
        .get_image_data(0.0, 0.0, canvas.width().into(), canvas.height().into())
        .unwrap()
        .data();
    let bg = [data[0], data[1], data[2]];
    data.chunks(4).filter(|px| px[..3] != bg).count()
}

#[wasm_bindgen_test]
fn corrupted_storage_is_reset_with_a_backup() {
    let ls = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    ls.set_item(storage::KEY, "{definitely not json").unwrap();
    let (stored, notice) = storage::load();
    assert_eq!(stored, storage::Stored::default());
    assert!(notice.is_some());
    assert_eq!(
        ls.get_item(storage::BACKUP_KEY).unwrap().as_deref(),
        Some("{definitely not json")
    );
    ls.remove_item(storage::KEY).unwrap();
}

#[wasm_bindgen_test]
fn url_round_trip_restores_the_scenario() {
    let s = Scenario {
        model: "llama-3.1-70b".into(),
        batch: 48,
        prefill: true,
        ..Scenario::default()
    };
    let query = SharedLink::query(&s, &[], &[], &[]);
    history::write(&query, false);
    assert!(history::holds(&query));
    let link = history::read().expect("the URL names a scenario");
    assert_eq!(link.scenario, s);
    assert_eq!((link.devices.len(), link.pins), (0, Some(Vec::new())));
    let clean = web_sys::window().unwrap().location().pathname().unwrap();
    web_sys::window()
        .unwrap()
        .history()
        .unwrap()
        .replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&clean))
        .unwrap();
}

#[wasm_bindgen_test]
fn draw_puts_pixels_on_a_canvas() {
    let canvas: web_sys::HtmlCanvasElement = document().create_element("canvas").unwrap().unchecked_into();
    canvas.set_width(800);
    canvas.set_height(480);
    let hw = resolve_hardware("gb10", &[]).unwrap();
    let s = Scenario::default();
    let data = plot_data(
        &hw,
        kernel_points(&s.kernel.evaluate(&hw, &s.core_corrections(&hw))),
    );
    let backend = plotters_canvas::CanvasBackend::with_canvas_object(canvas.clone()).unwrap();
    let hits = draw(&backend.into_drawing_area(), &data, &Theme::LIGHT, 1.0, true).unwrap();
    assert_eq!(hits.len(), data.points.len());
    assert!(foreground_pixels(&canvas) > 5_000);
}

#[wasm_bindgen_test]
async fn mounted_page_recovers_from_bad_storage_and_exposes_hooks() {
    let ls = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    ls.set_item(storage::KEY, "[\"foreign\"]").unwrap();
    leptos::mount::mount_to_body(roofline_web::App);
    sleep_ms(300).await;
    let doc = document();
    let q = |sel: &str| doc.query_selector(sel).unwrap();
    assert!(q("[data-testid=storage-notice]").is_some(), "notice shown");
    let canvas: web_sys::HtmlCanvasElement = q("[data-testid=roofline-canvas]").unwrap().unchecked_into();
    assert!(foreground_pixels(&canvas) > 5_000, "the roofline was drawn");
    // The default mode is reference: GB10's FP16 GEMV at its achievable bandwidth plus the matrix floor.
    let op = roofline_core::Operator::gemv(4096, 4096, roofline_core::Precision::Fp16.into()).unwrap();
    let reference = roofline_core::find_hardware("gb10").unwrap().reference().unwrap();
    let corrections = roofline_core::Corrections::for_mode(roofline_core::Mode::Reference);
    let expected = roofline_core::analyze_operator(&reference, &op, &corrections)
        .unwrap()
        .time_s;
    let time = q("[data-testid=predictions] tr[data-precision=FP16] [data-testid=time-us]").unwrap();
    let shown: f64 = time.get_attribute("data-value").unwrap().parse().unwrap();
    assert!(
        (shown - expected).abs() <= 1e-9 * expected,
        "{shown} s vs {expected} s"
    );
    let badge = q("[data-testid=mode-badge]").unwrap();
    assert_eq!(badge.get_attribute("data-value").as_deref(), Some("reference"));
    let tpot = q("[data-testid=summary-tpot]").unwrap();
    assert!(tpot.get_attribute("data-value").unwrap().parse::<f64>().unwrap() > 0.0);
    for id in [
        "hardware-select",
        "model-select",
        "config-select",
        "batch-input",
        "context-input",
        "summary-tokens-per-s",
        "summary-memory-fit",
        "endpoint-status",
        "mode-select",
    ] {
        assert!(q(&format!("[data-testid={id}]")).is_some(), "{id}");
    }
    ls.remove_item(storage::KEY).unwrap();
}
