//! ARCHITECTURE.md's layer list against the crate graph: every package under `core/` is listed once, each
//! with exactly the `roofline-*` crates its manifest depends on, each after the crates it uses, and each
//! layer with exactly the top-level modules its `lib.rs` declares.

use std::collections::{BTreeMap, BTreeSet};

use roofline_tests::workspace_root;

/// One entry of the list: `N. \`roofline-x\` (uses a, b): \`m\`, \`n\`.`
struct Layer {
    name: String,
    uses: BTreeSet<String>,
    modules: BTreeSet<String>,
}

fn layers() -> Vec<Layer> {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut layers = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((_, rest)) = line
            .split_once(". `roofline-")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        else {
            continue;
        };
        let mut entry = rest.to_owned();
        while lines.peek().is_some_and(|l| l.starts_with("   ")) {
            entry.push_str(lines.next().unwrap());
        }
        let (name, rest) = entry.split_once("` (uses ").expect("`roofline-x` (uses …)");
        let (uses, modules) = rest.split_once("):").expect("(uses …): …");
        let uses = uses
            .split(", ")
            .filter(|u| *u != "none")
            .map(|u| format!("roofline-{}", u.trim()))
            .collect();
        let modules = modules.split('`').skip(1).step_by(2).map(str::to_owned).collect();
        layers.push(Layer {
            name: format!("roofline-{name}"),
            uses,
            modules,
        });
    }
    layers
}

/// Every package under `core/` except the command line: its name, its `roofline-*` dependencies and the
/// folder of its manifest.
fn packages() -> BTreeMap<String, (BTreeSet<String>, std::path::PathBuf)> {
    let core = workspace_root().join("core");
    let mut dirs = vec![core.clone()];
    let mut crates: Vec<_> = std::fs::read_dir(core.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs.into_iter()
        .map(|dir| {
            let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
                .unwrap()
                .parse()
                .unwrap();
            let name = manifest["package"]["name"].as_str().unwrap().to_owned();
            let deps = manifest
                .get("dependencies")
                .and_then(toml::Value::as_table)
                .map(|t| t.keys().filter(|k| k.starts_with("roofline-")).cloned().collect())
                .unwrap_or_default();
            (name, (deps, dir))
        })
        .collect()
}

/// The top-level modules `lib.rs` declares (test-only ones aside).
fn modules(dir: &std::path::Path) -> BTreeSet<String> {
    let lib = syn::parse_file(&std::fs::read_to_string(dir.join("src/lib.rs")).unwrap()).unwrap();
    lib.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m)
                if !m
                    .attrs
                    .iter()
                    .any(|a| a.path().is_ident("cfg") && quote_is_test(a)) =>
            {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .collect()
}

fn quote_is_test(attr: &syn::Attribute) -> bool {
    attr.meta
        .require_list()
        .is_ok_and(|l| l.tokens.to_string() == "test")
}

#[test]
fn the_layer_list_is_the_crate_graph() {
    let layers = layers();
    let packages = packages();
    let listed: BTreeSet<&str> = layers.iter().map(|l| l.name.as_str()).collect();
    let found: BTreeSet<&str> = packages.keys().map(String::as_str).collect();
    assert_eq!(
        listed, found,
        "ARCHITECTURE.md's layers against the packages under core/"
    );
    assert_eq!(layers.len(), listed.len(), "a crate is listed twice");
    for (i, layer) in layers.iter().enumerate() {
        let (deps, dir) = &packages[&layer.name];
        assert_eq!(
            &layer.uses, deps,
            "{}: the crates it uses, as listed and in its manifest",
            layer.name
        );
        for used in &layer.uses {
            assert!(
                layers[..i].iter().any(|l| &l.name == used),
                "{} uses {used}, which is not listed before it",
                layer.name
            );
        }
        // The facade and the generator are listed without modules; a layer names each of its modules.
        if !layer.modules.is_empty() {
            assert_eq!(
                layer.modules,
                modules(dir),
                "{}: its modules, as listed and in lib.rs",
                layer.name
            );
        }
    }
    assert!(
        layers.len() >= 5,
        "the list is read at all: {} entries",
        layers.len()
    );
}

#[test]
fn architecture_md_is_short() {
    let text = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    assert!(
        text.lines().count() <= 150,
        "ARCHITECTURE.md has {} lines, over 150",
        text.lines().count()
    );
}
