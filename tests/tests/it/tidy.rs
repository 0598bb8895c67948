//! Tidiness of the workspace's sources, in the spirit of rust-analyzer's `xtask/src/tidy.rs`, read with syn.
//! For every crate of [`CRATES`]: no import cycle between sibling modules at any level (two files of a
//! folder, two inline modules, two top-level modules; `crate::`, `super::`, `self::`, imports and
//! re-exports resolved; test code aside), files of at most [`MAX_LINES`] lines (data files aside), functions
//! of at most [`MAX_FN_LINES`], a leading `//!` doc (of at most [`MAX_DOC_LINES`] in core), no
//! `Result<…, String>` outside tests, and in the page's crates no serde_json call that compiles a second copy
//! of each type. Cargo keeps the layers between crates (`architecture.rs`).

mod modules;
mod rules;
#[cfg(test)]
mod selftest;

use std::collections::BTreeSet;

use modules::{Crate, Graph, cycles, describe_cycle};
use roofline_tests::workspace_root;

/// The crate roots checked, from the workspace root.
const CRATES: [&str; 12] = [
    "core/src/lib.rs",
    "core/crates/base/src/lib.rs",
    "core/crates/analysis/src/lib.rs",
    "core/crates/serving/src/lib.rs",
    "core/crates/wire/src/lib.rs",
    "core/crates/catalog-gen/src/lib.rs",
    "core/cli/src/lib.rs",
    "core/cli/src/main.rs",
    "web/src/lib.rs",
    "web/src/main.rs",
    "gpu-endpoint/src/lib.rs",
    "gpu-endpoint/src/main.rs",
];

/// The longest a source file may be, in lines.
const MAX_LINES: usize = 700;

/// The longest a function may be, in lines (from `fn` to its closing brace).
const MAX_FN_LINES: usize = 150;

/// The longest a module doc may be in core, in lines; derivations go to docs/.
const MAX_DOC_LINES: usize = 10;

/// Files that are data rather than code, allowed past [`MAX_LINES`]: the generated hardware catalog and the
/// model presets.
const DATA_FILES: [&str; 2] = [
    "core/crates/base/src/hardware/catalog_entries.rs",
    "core/crates/analysis/src/model/presets.rs",
];

/// Functions over [`MAX_FN_LINES`] outside core, `file:function`, until their owners split them; each must
/// still be over, so the list only shrinks.
const LONG_FUNCTIONS: &[&str] = &[];

/// Functions outside core returning `Result<…, String>`, `file:function`, until their owners type the error;
/// each must still be found.
const STRING_ERRORS: &[&str] = &[];

/// Import cycles outside core (sorted members, as [`describe_cycle`] names them), until their owners break
/// them; each must still be found.
const KNOWN_CYCLES: &[&str] = &[];

/// The crates compiled into the page's wasm: their non-test code calls no second-copy serde_json function.
const PAGE_CRATES: [&str; 6] = [
    "core/src",
    "core/crates/base",
    "core/crates/analysis",
    "core/crates/serving",
    "core/crates/wire",
    "web/src",
];

/// The one file allowed to pretty-print JSON (through a `Value`: `json::to_pretty_json`).
const PRETTY_JSON: &str = "core/crates/base/src/json.rs";

/// Every finding in the crate rooted at `root` (one line each) and its sibling-module graph.
fn check_crate(root: &str) -> (Vec<String>, Graph) {
    let krate = Crate::read(&workspace_root(), root);
    let src = root.rsplit_once('/').map_or(root, |(dir, _)| dir);
    let mut findings = Vec::new();
    for file in &krate.files {
        findings.extend(check_file(file));
    }
    let graph = krate.sibling_graph();
    for members in cycles(&graph) {
        let cycle = members.join(", ");
        if !KNOWN_CYCLES.contains(&cycle.as_str()) {
            findings.push(describe_cycle(src, &members, &graph));
        }
    }
    (findings, graph)
}

fn check_file(file: &modules::File) -> Vec<String> {
    let name = file.display.as_str();
    let mut findings = Vec::new();
    let n_lines = file.text.lines().count();
    if n_lines > MAX_LINES && !DATA_FILES.contains(&name) {
        findings.push(format!(
            "{name}: {n_lines} lines, over {MAX_LINES} (split it, or list it in DATA_FILES if it is data)"
        ));
    }
    let doc = rules::module_doc_lines(&file.text);
    if doc == 0 {
        findings.push(format!("{name}: does not start with a `//!` doc"));
    } else if doc > MAX_DOC_LINES && name.starts_with("core/") {
        findings.push(format!(
            "{name}: a {doc}-line module doc, over {MAX_DOC_LINES} (derivations go to docs/)"
        ));
    }
    let found = rules::check(&file.syntax, file.test, MAX_FN_LINES);
    for (function, line, lines) in found.long_functions {
        let key = format!("{name}:{function}");
        if name.starts_with("core/") || !LONG_FUNCTIONS.contains(&key.as_str()) {
            findings.push(format!(
                "{name}:{line}: fn {function} is {lines} lines, over {MAX_FN_LINES}"
            ));
        }
    }
    for (function, line) in found.string_errors {
        let key = format!("{name}:{function}");
        if name.starts_with("core/") || !STRING_ERRORS.contains(&key.as_str()) {
            findings.push(format!(
                "{name}:{line}: fn {function} returns `Result<…, String>`: use a typed error"
            ));
        }
    }
    if PAGE_CRATES.iter().any(|c| name.starts_with(c)) {
        for (call, line) in found.serde_copies {
            if !(call == "to_string_pretty" && name == PRETTY_JSON) {
                findings.push(format!(
                    "{name}:{line}: calls serde_json's `{call}`: a second copy of each type it touches in the page's \
                     wasm (read with `from_str`, write with `to_string`, pretty with `json::to_pretty_json`)"
                ));
            }
        }
    }
    findings
}

/// Checks the crate rooted at `root` and returns its sibling-module graph.
fn assert_tidy(root: &str) -> Graph {
    let (findings, graph) = check_crate(root);
    assert!(
        findings.is_empty(),
        "{root} is not tidy ({} findings):\n{}",
        findings.len(),
        findings.join("\n")
    );
    graph
}

/// The modules `module` names in `graph`.
fn edges<'g>(graph: &'g Graph, module: &str) -> Vec<&'g str> {
    graph
        .get(module)
        .map(|e| e.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn core_is_tidy() {
    let findings: Vec<String> = CRATES[..6].iter().flat_map(|root| check_crate(root).0).collect();
    assert!(
        findings.is_empty(),
        "core is not tidy ({} findings):\n{}",
        findings.len(),
        findings.join("\n")
    );
    // The bottom of core: precision names no other module, the error type only precision.
    let base = assert_tidy("core/crates/base/src/lib.rs");
    assert!(
        edges(&base, "precision").is_empty(),
        "precision names {:?}",
        edges(&base, "precision")
    );
    assert_eq!(edges(&base, "error"), ["precision"]);
    // Edges are seen at all, named by path and through `use` groups alike, between files of one folder too.
    let analysis = assert_tidy("core/crates/analysis/src/lib.rs");
    assert!(edges(&analysis, "validation").contains(&"measurement"));
    assert!(edges(&analysis, "measured_device").contains(&"measurement"));
    assert!(
        edges(&base, "hardware::catalog").contains(&"hardware::spec"),
        "{base:?}"
    );
}

#[test]
fn core_cli_is_tidy() {
    assert_tidy("core/cli/src/lib.rs");
    assert_tidy("core/cli/src/main.rs");
}

#[test]
fn web_is_tidy() {
    let graph = assert_tidy("web/src/lib.rs");
    assert_tidy("web/src/main.rs");
    // The graph is read at all: edges named by `use` lines, groups and paths in expressions.
    for (from, to) in [
        ("components", "scenario"),
        ("share_link", "scenario"),
        ("scenario", "models"),
    ] {
        assert!(
            edges(&graph, from).contains(&to),
            "web/src: no edge {from} → {to} in {graph:?}"
        );
    }
}

#[test]
fn gpu_endpoint_is_tidy() {
    assert_tidy("gpu-endpoint/src/lib.rs");
    assert_tidy("gpu-endpoint/src/main.rs");
}

/// The known exceptions still exist (so they are removed once fixed), and every checked root and data
/// file is there.
#[test]
fn every_checked_folder_data_file_and_exception_exists() {
    let root = workspace_root();
    for path in CRATES.iter().chain(&DATA_FILES) {
        assert!(root.join(path).exists(), "{path} is gone: update tidy.rs");
    }
    let mut cycles_found = BTreeSet::new();
    for krate in CRATES {
        let graph = Crate::read(&root, krate).sibling_graph();
        cycles_found.extend(cycles(&graph).into_iter().map(|m| m.join(", ")));
    }
    for cycle in KNOWN_CYCLES {
        assert!(
            cycles_found.contains(*cycle),
            "the cycle {{{cycle}}} is gone: remove it from KNOWN_CYCLES"
        );
    }
    let found = |entry: &str| {
        let (file, function) = entry.split_once(':').expect("file:function");
        let syntax = syn::parse_file(&std::fs::read_to_string(root.join(file)).unwrap()).unwrap();
        (rules::check(&syntax, false, MAX_FN_LINES), function.to_owned())
    };
    for long in LONG_FUNCTIONS {
        let (found, function) = found(long);
        assert!(
            found.long_functions.iter().any(|(f, _, _)| *f == function),
            "{long} is no longer over {MAX_FN_LINES} lines: remove it from LONG_FUNCTIONS"
        );
    }
    for error in STRING_ERRORS {
        let (found, function) = found(error);
        assert!(
            found.string_errors.iter().any(|(f, _)| *f == function),
            "{error} no longer returns `Result<…, String>`: remove it from STRING_ERRORS"
        );
    }
}
