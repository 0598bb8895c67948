//! Tidiness of the workspace's sources, in the spirit of rust-analyzer's `xtask/src/tidy.rs`. For each crate's
//! `src/` folder in [`CRATES`]:
//! - the import graph between its top-level modules has no cycle (an edge A → B when a file of module A names
//!   `crate::B`, in a `use` path, a `use crate::{…}` group or an expression, or `crate::X` for an item the
//!   crate root re-exports from B; comments, string literals and `#[cfg(test)]` items and modules aside);
//! - no file is longer than [`MAX_LINES`] lines, but the data files of [`DATA_FILES`];
//! - no function outside tests returns `Result<…, String>` (errors are typed);
//! - every file starts with a `//!` doc;
//! - the page's crates ([`PAGE_CRATES`]) outside tests call none of [`SECOND_SERDE_COPIES`] (ARCHITECTURE.md's
//!   invariant: one serde instance per type in the page's wasm).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use roofline_tests::workspace_root;

/// The source folders checked, relative to the workspace root.
const CRATES: [&str; 4] = ["core/src", "core/cli/src", "web/src", "gpu-endpoint/src"];

/// The longest a source file may be, in lines.
const MAX_LINES: usize = 700;

/// Files that are data rather than code, allowed past [`MAX_LINES`] (paths from the workspace root): the
/// hardware catalog and the model presets.
const DATA_FILES: &[&str] = &["core/src/hardware/catalog.rs", "core/src/model/presets.rs"];

/// The crates compiled into the page's wasm.
const PAGE_CRATES: [&str; 2] = ["core/src", "web/src"];

/// serde_json calls that compile a second copy of every type they touch (a `Value` serializer or deserializer,
/// the pretty writer), and the one file allowed each: `json::to_pretty_json` pretty-prints a `Value`.
const SECOND_SERDE_COPIES: [(&str, Option<&str>); 4] = [
    ("to_value(", None),
    ("from_value(", None),
    ("json!(", None),
    ("to_string_pretty(", Some("core/src/json.rs")),
];

/// An import edge between two top-level modules and where it was first seen (`path:line`).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn core_is_tidy() {
    let graph = assert_tidy("core/src");
    let names = |module: &str| -> Vec<&str> {
        graph
            .get(module)
            .map(|edges| edges.keys().map(String::as_str).collect())
            .unwrap_or_default()
    };
    // The bottom of core's layering: precision names no other module, the error type only precision, the
    // hardware specs neither operators nor models.
    assert!(
        names("precision").is_empty(),
        "precision names {:?}",
        names("precision")
    );
    assert_eq!(names("error"), ["precision"]);
    assert!(
        !names("hardware").contains(&"ops") && !names("hardware").contains(&"model"),
        "hardware names {:?}",
        names("hardware")
    );
    // Edges the layering relies on are seen at all (named by path and through `use` groups alike).
    assert!(names("wire").contains(&"measurement") && names("validation").contains(&"measurement"));
}

#[test]
fn core_cli_is_tidy() {
    assert_tidy("core/cli/src");
}

#[test]
fn web_is_tidy() {
    let graph = assert_tidy("web/src");
    // The graph is read at all: edges named by `use` lines, groups and paths in expressions.
    for (from, to) in [
        ("components", "scenario"),
        ("share_link", "scenario"),
        ("scenario", "models"),
    ] {
        assert!(
            graph.get(from).is_some_and(|edges| edges.contains_key(to)),
            "web/src: no edge {from} → {to} in {graph:?}"
        );
    }
}

#[test]
fn gpu_endpoint_is_tidy() {
    assert_tidy("gpu-endpoint/src");
}

#[test]
fn every_checked_folder_and_data_file_exists() {
    let root = workspace_root();
    for path in CRATES.iter().chain(DATA_FILES) {
        assert!(root.join(path).exists(), "{path} is gone: update tidy.rs");
    }
}

/// Checks the crate in `src` and returns its module graph.
fn assert_tidy(src: &str) -> Graph {
    let (findings, graph) = check_crate(&workspace_root(), src);
    assert!(
        findings.is_empty(),
        "{src} is not tidy ({} findings):\n{}",
        findings.len(),
        findings.join("\n")
    );
    graph
}

/// One source file: its path from the workspace root, from its crate's `src/`, and its text.
struct SourceFile {
    display: String,
    relative: PathBuf,
    text: String,
}

/// Every finding in the crate whose sources are in `root/src`, one line each, and its module graph.
fn check_crate(root: &Path, src: &str) -> (Vec<String>, Graph) {
    let files = source_files(root, src);
    let mut findings = Vec::new();
    let mut test_modules = BTreeSet::new();
    let mut code = BTreeMap::new();
    for file in &files {
        let n_lines = file.text.lines().count();
        if n_lines > MAX_LINES && !DATA_FILES.contains(&file.display.as_str()) {
            findings.push(format!(
                "{}: {n_lines} lines, over {MAX_LINES} (split it, or list it in DATA_FILES if it is data)",
                file.display
            ));
        }
        if !has_leading_doc(&file.text) {
            findings.push(format!("{}: does not start with a `//!` doc", file.display));
        }
        let (non_test, test_children) = strip_test_items(&code_only(&file.text));
        let children_dir = children_dir(&file.relative);
        test_modules.extend(test_children.iter().map(|name| children_dir.join(name)));
        code.insert(file.relative.clone(), non_test);
    }
    // Files that are `#[cfg(test)]` modules (`name.rs` or anything under `name/`) are test code throughout.
    let is_test = |relative: &Path| {
        test_modules
            .iter()
            .any(|m| relative == m.with_extension("rs") || relative.starts_with(m))
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(&f.relative)).collect();
    let reexports = code
        .get(Path::new("lib.rs"))
        .map(|lib| root_reexports(lib, &modules))
        .unwrap_or_default();
    let mut graph = Graph::new();
    for file in files.iter().filter(|f| !is_test(&f.relative)) {
        let non_test = &code[&file.relative];
        if PAGE_CRATES.contains(&src) {
            for (call, allowed) in SECOND_SERDE_COPIES {
                if non_test.contains(call) && allowed != Some(file.display.as_str()) {
                    findings.push(format!(
                        "{}: calls serde_json's `{call}…)`: a second copy of each type it touches in the page's \
                         wasm (read with `from_str`, write with `to_string`, pretty with `json::to_pretty_json`)",
                        file.display
                    ));
                }
            }
        }
        for line in string_error_returns(non_test) {
            findings.push(format!(
                "{}:{line}: returns `Result<…, String>`: use a typed error",
                file.display
            ));
        }
        let Some(from) = top_module(&file.relative) else {
            continue;
        };
        for (name, line) in crate_paths(non_test) {
            let to = if modules.contains(&name) {
                Some(name)
            } else {
                reexports.get(&name).cloned()
            };
            if let Some(to) = to.filter(|to| *to != from) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{}:{line}", file.display));
            }
        }
    }
    findings.extend(
        cycles(&graph)
            .iter()
            .map(|members| describe_cycle(src, members, &graph)),
    );
    (findings, graph)
}

/// The `.rs` files under `root/src`, sorted.
fn source_files(root: &Path, src: &str) -> Vec<SourceFile> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src_dir = root.join(src);
    let mut paths = Vec::new();
    walk(&src_dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&src_dir).expect("under src").to_owned();
            SourceFile {
                display: format!("{src}/{}", relative.display()),
                text: std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
                relative,
            }
        })
        .collect()
}

/// The top-level module a file belongs to (`a` for `a.rs`, `a/mod.rs` and `a/b.rs`); `None` for the crate
/// roots `lib.rs` and `main.rs`.
fn top_module(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        _ => Some(first.trim_end_matches(".rs").to_owned()),
    }
}

/// The folder of a file's child modules: its own folder for `lib.rs`, `main.rs` and `mod.rs`, else the folder
/// named after it.
fn children_dir(relative: &Path) -> PathBuf {
    let parent = relative.parent().unwrap_or(Path::new(""));
    match relative.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") | None => parent.to_owned(),
        Some(name) => parent.join(name.trim_end_matches(".rs")),
    }
}

/// Whether the first non-blank line of `text` is a `//!` doc.
fn has_leading_doc(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.starts_with("//!"))
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether the `r` at `i` starts a literal: nothing of an identifier before it but a lone `b` (`br"…"`).
fn starts_literal(chars: &[char], i: usize) -> bool {
    let ident_at = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|&c| is_ident_char(c));
    match i.checked_sub(1).map(|j| chars[j]) {
        Some('b') => !ident_at(i.checked_sub(2)),
        _ => !ident_at(i.checked_sub(1)),
    }
}

/// `source` without comments, with string and character literals emptied (`""`, `' '`) and every line break
/// kept, so paths and types can be searched without matching prose and lines keep their numbers.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    // Skips from `i` to just past `end` (a literal's closing text), keeping line breaks; `\` escapes when
    // `escapes` is set.
    let skip_to = |mut i: usize, end: &[char], escapes: bool, out: &mut String| -> usize {
        while i < chars.len() {
            if chars[i..].starts_with(end) {
                return i + end.len();
            }
            match chars[i] {
                '\\' if escapes => i += 2,
                '\n' => {
                    out.push('\n');
                    i += 1;
                }
                _ => i += 1,
            }
        }
        i
    };
    while let Some(c) = at(i) {
        match (c, at(i + 1)) {
            ('/', Some('/')) => {
                while at(i).is_some_and(|c| c != '\n') {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                let mut depth = 0usize;
                while i < chars.len() {
                    if chars[i..].starts_with(&['/', '*']) {
                        depth += 1;
                        i += 2;
                    } else if chars[i..].starts_with(&['*', '/']) {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
            }
            ('"', _) => {
                out.push_str("\"\"");
                i = skip_to(i + 1, &['"'], true, &mut out);
            }
            // A raw string `r"…"`, `r#"…"#` or `br"…"` (but not an identifier ending in r, nor `r#ident`).
            ('r', Some('"' | '#')) if starts_literal(&chars, i) => {
                let n_hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
                if at(i + 1 + n_hashes) == Some('"') {
                    out.push_str("\"\"");
                    let end: Vec<char> = std::iter::once('"')
                        .chain(std::iter::repeat_n('#', n_hashes))
                        .collect();
                    i = skip_to(i + 2 + n_hashes, &end, false, &mut out);
                } else {
                    out.push(c);
                    i += 1;
                }
            }
            // A character literal (`'x'`, `'\n'`, `'\u{1F600}'`); a lifetime (`'a`) stays.
            ('\'', Some('\\')) => {
                out.push_str("' '");
                i = skip_to(i + 3, &['\''], true, &mut out);
            }
            ('\'', Some(_)) if at(i + 2) == Some('\'') => {
                out.push_str("' '");
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `code` (comment-free, from [`code_only`]) without its `#[cfg(test)]` items, line breaks kept, and the names
/// of the test modules it declares as files (`#[cfg(test)] mod name;`).
fn strip_test_items(code: &str) -> (String, Vec<String>) {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut file_modules = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find(ATTRIBUTE) {
        out.push_str(&rest[..start]);
        let item = &rest[start + ATTRIBUTE.len()..];
        let end = item_end(item);
        let removed = &item[..end];
        let words: Vec<&str> = removed.split_whitespace().collect();
        if let [.., "mod", name] = words.as_slice()
            && let Some(name) = name.strip_suffix(';')
        {
            file_modules.push(name.to_owned());
        }
        out.extend(std::iter::repeat_n(
            '\n',
            code_line_breaks(&rest[start..start + ATTRIBUTE.len() + end]),
        ));
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, file_modules)
}

fn code_line_breaks(text: &str) -> usize {
    text.matches('\n').count()
}

/// The length of the item at the start of `code`: up to its first `;` outside brackets, or its first `{`
/// block's matching `}`.
fn item_end(code: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => return i + 1,
            '{' if depth == 0 => {
                let mut braces = 0usize;
                for (j, c) in code[i..].char_indices() {
                    match c {
                        '{' => braces += 1,
                        '}' => {
                            braces -= 1;
                            if braces == 0 {
                                return i + j + 1;
                            }
                        }
                        _ => {}
                    }
                }
                return code.len();
            }
            _ => {}
        }
    }
    code.len()
}

/// The identifier at the start of `text` (after whitespace).
fn leading_ident(text: &str) -> &str {
    let text = text.trim_start();
    &text[..text.find(|c: char| !is_ident_char(c)).unwrap_or(text.len())]
}

/// The first segment of every `crate::…` path in `code` with its line (both `a` and `b` of a
/// `crate::{a::X, b}` group); `self` in a group and macros' `$crate` are not modules.
fn crate_paths(code: &str) -> Vec<(String, usize)> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident_char(c) || c == '$') {
            continue;
        }
        let Some(path) = code[at + "crate".len()..].trim_start().strip_prefix("::") else {
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        let path = path.trim_start();
        let mut push = |name: &str| {
            if !name.is_empty() && name != "self" {
                names.push((name.to_owned(), line));
            }
        };
        if let Some(group) = path.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        push(leading_ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        push(leading_ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            push(leading_ident(path));
        }
    }
    names
}

/// The items the crate root re-exports (`pub use module::…;`, by their exported name) and the top-level
/// module each comes from.
fn root_reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut items = BTreeMap::new();
    for statement in lib.split("pub use ").skip(1) {
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        let statement = statement
            .trim()
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        let Some((module, tree)) = statement.split_once("::") else {
            continue;
        };
        let module = module.trim();
        if !modules.contains(module) {
            continue;
        }
        for leaf in tree.split([',', '{', '}']) {
            let name = match leaf.rsplit_once(" as ") {
                Some((_, alias)) => alias,
                None => leaf.rsplit("::").next().unwrap_or(leaf),
            };
            let name = name.trim();
            if !name.is_empty() && name.chars().all(is_ident_char) && name != "self" {
                items.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    items
}

/// The lines of `code` where a return type (`-> …`) is `Result<…, String>`.
fn string_error_returns(code: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for (at, _) in code.match_indices("->") {
        let ty = code[at + 2..].trim_start();
        let Some(generics) = ["Result<", "std::result::Result<", "core::result::Result<"]
            .iter()
            .find_map(|prefix| ty.strip_prefix(prefix))
        else {
            continue;
        };
        let arguments = generic_arguments(generics);
        if let [_, error] = arguments.as_slice()
            && matches!(
                error.split_whitespace().collect::<String>().as_str(),
                "String" | "std::string::String" | "alloc::string::String"
            )
        {
            lines.push(code[..at].matches('\n').count() + 1);
        }
    }
    lines
}

/// The top-level arguments of a generic list whose `<` is just before `text`.
fn generic_arguments(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut arguments) = (0usize, 0usize, Vec::new());
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            // `->` inside (an `Fn() -> T` argument) closes nothing.
            '>' if previous == '-' => {}
            '>' | ')' | ']' if depth == 0 => {
                // A trailing comma leaves nothing after it.
                arguments.extend(Some(text[start..i].trim()).filter(|a| !a.is_empty()));
                return arguments;
            }
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                arguments.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        previous = c;
    }
    arguments
}

/// The strongly connected components of `graph` with more than one module (Tarjan), each sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        components: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, node: &'g str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            let graph = self.graph;
            for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
                if !self.index.contains_key(next.as_str()) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next.as_str()]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next.as_str()) {
                    let low = self.low[node].min(self.index[next.as_str()]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let at = self.stack.iter().rposition(|&m| m == node).expect("on the stack");
                let mut component: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node.as_str()) {
            tarjan.visit(node);
        }
    }
    tarjan.components.sort();
    tarjan.components
}

/// One finding for a cycle: its modules and every edge between them with where it is first seen.
fn describe_cycle(src: &str, members: &[String], graph: &Graph) -> String {
    let edges: Vec<String> = members
        .iter()
        .flat_map(|from| {
            graph[from]
                .iter()
                .filter(|(to, _)| members.contains(to))
                .map(move |(to, at)| format!("{from} → {to} ({at})"))
        })
        .collect();
    format!(
        "{src}: import cycle among {{{}}}: {}",
        members.join(", "),
        edges.join("; ")
    )
}

#[test]
fn comments_strings_and_char_literals_are_removed_line_breaks_kept() {
    let source = "let a = \"// not a comment, crate::x\"; // crate::y\n\
                  /* crate::z /* nested */ still */ let b = '\"';\n\
                  let c = r#\"raw \"crate::w\" \"#; let d: &'static str = br\"x\";\n\
                  let e = '\\n'; fn f<'a>(x: &'a u8) {}";
    assert_eq!(
        code_only(source),
        "let a = \"\"; \n let b = ' ';\nlet c = \"\"; let d: &'static str = b\"\";\n\
         let e = ' '; fn f<'a>(x: &'a u8) {}"
    );
    assert_eq!(code_only("x /* a\nb */ y \"c\nd\""), "x \n y \"\"\n");
}

#[test]
fn crate_paths_are_read_in_uses_groups_and_expressions() {
    let code = "use crate::{b, c::d, e::{f, g}, self};\nuse crate :: h;\nlet x = crate::i::f();\n\
                pub(crate) fn y() {} $crate::j::k; notcrate::l;";
    let names = crate_paths(code);
    let names: Vec<(&str, usize)> = names.iter().map(|(n, line)| (n.as_str(), *line)).collect();
    assert_eq!(names, [("b", 1), ("c", 1), ("e", 1), ("h", 2), ("i", 3)]);
}

#[test]
fn test_items_and_test_module_files_are_set_aside() {
    let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n    fn f() { g(); }\n}\n\
                #[cfg(test)]\nmod properties;\n#[cfg(test)]\nuse crate::c;\nfn h(x: [u8; 2]) {}\n";
    let (code, modules) = strip_test_items(code);
    assert_eq!(code, "use crate::a;\n\n\n\n\n\n\n\n\n\nfn h(x: [u8; 2]) {}\n");
    assert_eq!(modules, ["properties"]);
    assert_eq!(children_dir(Path::new("serving/mod.rs")), Path::new("serving"));
    assert_eq!(children_dir(Path::new("lib.rs")), Path::new(""));
    assert_eq!(children_dir(Path::new("a/b.rs")), Path::new("a/b"));
}

#[test]
fn string_errors_in_return_types_are_found() {
    let code = "fn a() -> Result<u8, String> {}\nfn b() -> Result<String, Error> {}\n\
                fn c() -> Result<\n    Vec<(u8, u8)>,\n    String,\n> {}\nfn d() -> io::Result<String> {}\n\
                fn e() -> Result<u8, Box<dyn Fn() -> String>> {}\nfn f() -> std::result::Result<(), std::string::String> {}";
    assert_eq!(string_error_returns(code), [1, 3, 9]);
}

#[test]
fn reexports_map_items_to_their_modules() {
    let modules = ["a", "c"].map(str::to_owned).into_iter().collect();
    let items = root_reexports(
        "pub use a::{X, b::Y as Z, self};\npub use c::W;\npub use other::V;",
        &modules,
    );
    let items: Vec<(&str, &str)> = items.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(items, [("W", "c"), ("X", "a"), ("Z", "a")]);
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
fn a_leading_module_doc_is_required() {
    assert!(has_leading_doc("//! Doc.\nuse x;"));
    assert!(has_leading_doc("\n  //! Doc."));
    assert!(!has_leading_doc("use x;\n//! Doc."));
    assert!(!has_leading_doc("/// An item doc.\nfn f() {}"));
    assert!(!has_leading_doc(""));
}

#[test]
fn top_modules_are_the_first_path_component() {
    assert_eq!(top_module(Path::new("a.rs")).as_deref(), Some("a"));
    assert_eq!(top_module(Path::new("a/b/c.rs")).as_deref(), Some("a"));
    assert_eq!(top_module(Path::new("lib.rs")), None);
    assert_eq!(top_module(Path::new("main.rs")), None);
}
