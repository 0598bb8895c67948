//! The module graph of `core/src` has no cycles: an edge A → B whenever a file of top-level module A names
//! `crate::B` (or an item `lib.rs` re-exports from B), comments aside. `precision` is the bottom and names no
//! other module; `error` names only `precision`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The top-level modules `lib.rs` declares, and the module each crate-root re-export comes from.
fn modules_and_reexports(lib: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let mut modules = BTreeSet::new();
    for line in lib.lines().map(str::trim) {
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        {
            modules.insert(name.trim_end_matches(';').to_owned());
        }
    }
    let mut items = BTreeMap::new();
    for statement in lib.split("pub use ").skip(1) {
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        let Some((module, rest)) = statement.split_once("::") else {
            continue;
        };
        for item in rest
            .trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
            .split(',')
        {
            let item = item.trim();
            if !item.is_empty() {
                items.insert(item.to_owned(), module.trim().to_owned());
            }
        }
    }
    (modules, items)
}

/// The first path segment of every `crate::…` path in `code` (both of a `crate::{a::X, b}` group).
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.push(ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names
}

fn collect(dir: &Path, src: &Path, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, src, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).unwrap().to_string_lossy().into_owned();
            files.push((relative, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The module graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> Graph {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let (modules, reexports) = modules_and_reexports(&lib);
    let mut files = Vec::new();
    collect(src, src, &mut files);
    let mut graph = Graph::new();
    for (relative, text) in files.iter().filter(|(r, _)| r != "lib.rs") {
        let top = relative
            .split(['/', '\\'])
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for name in crate_paths(&code) {
            let target = if modules.contains(&name) {
                Some(name)
            } else {
                reexports.get(&name).cloned()
            };
            if let Some(target) = target.filter(|t| *t != top) {
                graph.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    graph
}

/// A cycle of `graph` (its modules in order, the first repeated at the end), if it has one.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_module_graph_of_core_is_acyclic() {
    let graph = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    if let Some(c) = cycle(&graph) {
        panic!("core's modules form a cycle: {}", c.join(" → "));
    }
    // The bottom: precision names nothing, the error type only precision, hardware neither ops nor models.
    assert!(!graph.contains_key("precision"), "{:?}", graph.get("precision"));
    assert_eq!(
        graph
            .get("error")
            .map(|e| e.iter().map(String::as_str).collect::<Vec<_>>()),
        Some(vec!["precision"])
    );
    let hardware = &graph["hardware"];
    assert!(
        !hardware.contains("ops") && !hardware.contains("model"),
        "{hardware:?}"
    );
    // Edges the layering relies on are seen at all (named by path and through `use` groups alike).
    assert!(graph["wire"].contains("measurement") && graph["validation"].contains("measurement"));
}

#[test]
fn cycles_are_found_and_groups_are_read() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry((*a).to_owned()).or_default().insert((*b).to_owned());
        }
        g
    };
    assert_eq!(cycle(&graph(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        crate_paths(
            "use crate::{error::Error, hardware::{Mode, Peak}, Precision};\nlet x = crate::ops::MAX_DIM;"
        ),
        ["error", "hardware", "Precision", "ops"]
    );
    let (modules, items) = modules_and_reexports("mod a;\npub mod b;\npub use a::{X, y};\npub use b::Z;\n");
    assert_eq!(modules.into_iter().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(
        (items["X"].as_str(), items["y"].as_str(), items["Z"].as_str()),
        ("a", "a", "b")
    );
}
