//! The page's weight as a browser receives it: the `.wasm` of `dist/` (built by `trunk build --release`) and
//! its brotli sibling, which gpu-endpoint serves to every browser that accepts brotli (all current ones), are
//! within their budgets; the siblings decompress to the files; the JS glue and the stylesheet have theirs.

use roofline_tests::{require_dist, workspace_root};

/// The served wasm's budget, brotli-compressed (the `.br` scripts/precompress.sh writes). Issue 26's target is
/// 450 KB; the page is not there. It was 606,101 B after issue 26 item 8's first cut, 576,497 B once every
/// type had one serde instance (2026-11-24, `trunk build --release`; ARCHITECTURE.md's invariant, checked by
/// `tidy.rs`), 616,477 B after issue 36's sizing answer, device comparison and exports, and 688,892 B on
/// 2026-11-28 after issues 34–36 (+72.4 KB): the request-level serving simulation and its sweeps run in the
/// page with the bench-file readers (AIPerf, SGLang JSONL, sweep CSV, InferenceX) (+43 KB); the Serving
/// view's percentile, speculative-decoding, prefix-cache and x-axis inputs (+10.4 KB); twelve new model
/// presets with their cost terms and ModelOpt checkpoints (+13.9 KB); narrower Serving updates (+5.1 KB). By
/// twiggy on the pre-wasm-bindgen module: the page's own code 548 KB raw, Leptos' reactive and view code
/// 656 KB, core's crates 363 KB, data 252 KB. The 450 KB target needs the right panel's tabs, the
/// serving view and the model import loaded on demand, which trunk cannot build (wasm splitting must
/// happen before wasm-bindgen: trunk-rs/trunk#1022). This budget is that size plus 1 %, so growth fails
/// the test while the 450 KB target stands.
const WASM_BROTLI_BUDGET_BYTES: u64 = 695_800;
/// The wasm's budget uncompressed (what the browser compiles): 2,248,386 B, plus 1 %; the issue's raw target
/// was 1.5 MB.
const WASM_RAW_BUDGET_BYTES: u64 = 2_270_900;

fn dist_file(suffix: &str) -> std::path::PathBuf {
    let dist = workspace_root().join("dist");
    std::fs::read_dir(&dist)
        .unwrap_or_else(|e| panic!("{}: {e}", dist.display()))
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in {}", dist.display()))
}

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len()
}

#[test]
fn the_served_wasm_is_within_its_budget() {
    if !require_dist() {
        return;
    }
    let wasm = dist_file("_bg.wasm");
    let brotli = dist_file("_bg.wasm.br");
    let (raw, served) = (size(&wasm), size(&brotli));
    eprintln!("wasm {raw} B raw, {served} B brotli");
    assert!(
        served <= WASM_BROTLI_BUDGET_BYTES,
        "the served wasm is {served} B brotli, over its {WASM_BROTLI_BUDGET_BYTES} B budget"
    );
    assert!(
        raw <= WASM_RAW_BUDGET_BYTES,
        "the wasm is {raw} B, over its {WASM_RAW_BUDGET_BYTES} B budget"
    );
    // The sibling is the file, compressed (the header of a wasm module is `\0asm`).
    let mut decoded = Vec::new();
    brotli_decompress(&std::fs::read(&brotli).unwrap(), &mut decoded);
    assert_eq!(decoded.len() as u64, raw);
    assert_eq!(&decoded[..4], b"\0asm");
    // The glue and the stylesheet stay small too: 20 KB and 8 KB brotli.
    assert!(size(&dist_file(".js.br")) <= 20_000);
    assert!(size(&dist_file(".css.br")) <= 8_000);
    assert!(dist_file("index.html.gz").exists());
}

fn brotli_decompress(data: &[u8], out: &mut Vec<u8>) {
    brotli::BrotliDecompress(&mut &data[..], out).expect("a brotli stream");
}
