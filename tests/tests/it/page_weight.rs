//! The page's weight as a browser receives it: the `.wasm` of `dist/` (built by `trunk build --release`) and
//! its brotli sibling, which gpu-endpoint serves to every browser that accepts brotli (all current ones), are
//! within their budgets; the siblings decompress to the files; the JS glue and the stylesheet have theirs.

use roofline_tests::{require_dist, workspace_root};

/// The served wasm's budget, brotli-compressed (the `.br` scripts/precompress.sh writes). Issue 26's target is
/// 450 KB; the page is not there: it was 606,134 B when the serving view, the low-precision work and the
/// serving model had been merged (607,997 B on this change's base), and 606,101 B after issue 26 item 8's cut
/// (2026-11-24, `trunk build --release`). What is left, by twiggy on that wasm (2.01 MB of code and data):
/// functions of Leptos' reactive and view crates instantiated per signal and view (reactive_graph 398 kB,
/// tachys 210 kB, leptos 46 kB raw), serde (287 kB raw; 36 kB of it are second copies of derived impls:
/// core's wire types read through `serde_json::Value`, the rest of the page from text, and `HardwareSpec` is
/// written compact and pretty), the page's own components (398 kB), core (247 kB) and 228 kB of data (the
/// sourced catalog and presets). This budget is that size plus 1 %, so growth fails the test
/// while the 450 KB target stands.
const WASM_BROTLI_BUDGET_BYTES: u64 = 612_000;
/// The wasm's budget uncompressed (what the browser compiles): 2,008,887 B on this change's base (1,997,035 B
/// in the issue's note), 2,008,137 B after the cut, plus 1 %; the issue's raw target was 1.5 MB.
const WASM_RAW_BUDGET_BYTES: u64 = 2_030_000;

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
