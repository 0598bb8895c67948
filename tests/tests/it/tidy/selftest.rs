//! The tidy test's own checks on small sources: paths resolved through `super::`, re-exports and inline
//! modules into sibling edges, test code set aside, cycles as strongly connected components, and the
//! per-file rules.

use super::modules::{Crate, Graph, cycles, describe_cycle};
use super::rules;

/// Writes `files` (path, text) under a fresh folder and reads the crate rooted at its `lib.rs`.
fn fixture(files: &[(&str, &str)]) -> Crate {
    let dir = roofline_tests::unique_temp_dir("tidy");
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let krate = Crate::read(&dir, "lib.rs");
    std::fs::remove_dir_all(&dir).ok();
    krate
}

#[test]
fn super_paths_reexports_and_inline_modules_give_sibling_edges() {
    let krate = fixture(&[
        (
            "lib.rs",
            "//! Root.\nmod m;\nmod inner {\n    mod p { use super::q::Q; pub struct P; }\n    mod q {\n        pub struct Q;\n        fn h() { let _ = super::p::P; }\n    }\n}\n",
        ),
        ("m/mod.rs", "//! M.\nmod x;\nmod y;\nmod z;\npub use y::Y;\n"),
        (
            "m/x.rs",
            "//! X.\nuse super::Y;\npub fn g() {}\n#[cfg(test)]\nmod tests { use crate::m::z::Z; }\n",
        ),
        (
            "m/y.rs",
            "//! Y.\npub struct Y;\nfn f() { format!(\"{}\", 1); super::x::g(); }\n",
        ),
        (
            "m/z.rs",
            "//! Z.\npub struct Z;\n#[cfg(test)]\nfn t() { crate::m::x::g(); }\n",
        ),
    ]);
    let graph = krate.sibling_graph();
    assert_eq!(
        cycles(&graph),
        [vec!["inner::p", "inner::q"], vec!["m::x", "m::y"]],
        "{graph:?}"
    );
    // Test code names z and x, but adds no edge; a module naming its parent (`super::Y`) adds none either.
    assert!(
        !graph.contains_key("m::z") && !graph["m::x"].contains_key("m::z"),
        "{graph:?}"
    );
    assert!(!graph.contains_key("m"), "{graph:?}");
    assert_eq!(graph["m::x"]["m::y"], format!("{}:2", krate.modules[2].file));
}

#[test]
fn cycles_are_strongly_connected_components() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry((*a).to_owned())
                .or_default()
                .insert((*b).to_owned(), format!("{a}.rs:1"));
        }
        g
    };
    assert!(cycles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    let g = graph(&[
        ("a", "b"),
        ("b", "a"),
        ("b", "c"),
        ("c", "d"),
        ("d", "c"),
        ("e", "a"),
    ]);
    let found = cycles(&g);
    assert_eq!(found, [vec!["a", "b"], vec!["c", "d"]]);
    assert_eq!(
        describe_cycle("x/src", &found[0], &g),
        "x/src: import cycle among {a, b}: a → b (a.rs:1); b → a (b.rs:1)"
    );
}

#[test]
fn string_errors_long_functions_and_serde_copies_are_found() {
    let code = "fn a() -> Result<u8, String> { todo!() }\nfn b() -> Result<String, Error> { todo!() }\n\
                fn c() -> Result<\n    Vec<(u8, u8)>,\n    String,\n> { todo!() }\nfn d() -> io::Result<String> { todo!() }\n\
                fn e() -> Result<u8, Box<dyn Fn() -> String>> { todo!() }\n\
                fn f() -> std::result::Result<(), std::string::String> {\n    let v = serde_json::to_value(1);\n\
                    let j = json!({});\n}\n#[cfg(test)]\nfn g() -> Result<u8, String> { serde_json::to_value(1) }\n";
    let found = rules::check(&syn::parse_file(code).unwrap(), false, 3);
    let lines: Vec<usize> = found.string_errors.iter().map(|(_, line)| *line).collect();
    assert_eq!(lines, [1, 3, 9]);
    assert_eq!(found.string_errors[0].0, "a");
    assert_eq!(found.serde_copies, [("to_value", 10), ("json", 11)]);
    assert_eq!(
        found.long_functions,
        [("c".to_owned(), 3, 4), ("f".to_owned(), 9, 4)]
    );
}

#[test]
fn a_leading_module_doc_is_required_and_counted() {
    assert_eq!(rules::module_doc_lines("//! Doc.\n//! More.\nuse x;"), 2);
    assert_eq!(rules::module_doc_lines("\n  //! Doc."), 1);
    assert_eq!(rules::module_doc_lines("use x;\n//! Doc."), 0);
    assert_eq!(rules::module_doc_lines("/// An item doc.\nfn f() {}"), 0);
    assert_eq!(rules::module_doc_lines(""), 0);
}
