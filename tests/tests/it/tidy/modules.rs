//! A crate's module tree read with syn from its root file (file and inline modules, `#[cfg(test)]` ones
//! marked), the names each module defines and imports, the paths its code names, and the import graph
//! between sibling modules at every level that those paths give once resolved (`crate::`, `self::`,
//! `super::`, child modules, imported names and re-exports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A sibling-module graph: module path (`a::b`) → module path → where the edge is first seen (`file:line`).
pub(crate) type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// One module of a crate.
pub(crate) struct Module {
    /// The path from the crate root (empty for the root).
    pub(crate) path: Vec<String>,
    /// The file it is in, from the workspace root.
    pub(crate) file: String,
    /// `#[cfg(test)]`, or inside such a module.
    pub(crate) test: bool,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    /// Imported (or re-exported) names and the path each stands for.
    uses: BTreeMap<String, Vec<String>>,
    /// Every path the module's non-test code names (`use` paths included), with its line.
    refs: Vec<(Vec<String>, usize)>,
}

/// A parsed source file.
pub(crate) struct File {
    /// From the workspace root.
    pub(crate) display: String,
    pub(crate) text: String,
    pub(crate) syntax: syn::File,
    /// Whether the whole file is a `#[cfg(test)]` module.
    pub(crate) test: bool,
}

/// A crate read from its root file: its modules (the root first) and its files.
pub(crate) struct Crate {
    pub(crate) modules: Vec<Module>,
    pub(crate) files: Vec<File>,
}

/// Whether `attrs` hold `#[cfg(test)]`.
pub(crate) fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string() == "test")
    })
}

impl Crate {
    /// Reads the crate whose root is `root_file` (a path from `workspace`).
    ///
    /// # Panics
    /// When a file cannot be read or parsed, or a `mod` has no file.
    pub(crate) fn read(workspace: &Path, root_file: &str) -> Crate {
        let mut krate = Crate {
            modules: Vec::new(),
            files: Vec::new(),
        };
        let path = workspace.join(root_file);
        let dir = path.parent().expect("a root file has a folder").to_owned();
        krate.read_file(workspace, &path, dir, Vec::new(), None, false);
        krate
    }

    fn read_file(
        &mut self,
        workspace: &Path,
        path: &Path,
        children_dir: PathBuf,
        module_path: Vec<String>,
        parent: Option<usize>,
        test: bool,
    ) {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let display = path.strip_prefix(workspace).unwrap_or(path).display().to_string();
        let items = syntax.items.clone();
        self.files.push(File {
            display: display.clone(),
            text,
            syntax,
            test,
        });
        self.read_module(
            workspace,
            &items,
            &display,
            children_dir,
            module_path,
            parent,
            test,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn read_module(
        &mut self,
        workspace: &Path,
        items: &[syn::Item],
        file: &str,
        children_dir: PathBuf,
        path: Vec<String>,
        parent: Option<usize>,
        test: bool,
    ) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            path: path.clone(),
            file: file.to_owned(),
            test,
            parent,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            uses: BTreeMap::new(),
            refs: Vec::new(),
        });
        let mut names = Names::default();
        for item in items {
            let item_test = test || is_test(item_attrs(item));
            match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let mut child_path = path.clone();
                    child_path.push(name.clone());
                    let child = if let Some((_, inner)) = &m.content {
                        let dir = children_dir.join(&name);
                        self.read_module(workspace, inner, file, dir, child_path, Some(id), item_test)
                    } else {
                        let flat = children_dir.join(format!("{name}.rs"));
                        let (found, dir) = if flat.exists() {
                            (flat, children_dir.join(&name))
                        } else {
                            (children_dir.join(&name).join("mod.rs"), children_dir.join(&name))
                        };
                        let child = self.modules.len();
                        self.read_file(workspace, &found, dir, child_path, Some(id), item_test);
                        child
                    };
                    self.modules[id].children.insert(name, child);
                }
                _ if item_test => {}
                syn::Item::Use(u) => {
                    let line = u.span().start().line;
                    flatten_use(&u.tree, &mut Vec::new(), &mut |name, path| {
                        names.refs.push((path.clone(), line));
                        if let Some(name) = name {
                            names.uses.insert(name, path);
                        }
                    });
                }
                _ => {
                    names.items.extend(item_name(item));
                    names.visit_item(item);
                }
            }
        }
        let module = &mut self.modules[id];
        module.items = names.items;
        module.uses = names.uses;
        module.refs = names.refs;
        id
    }

    /// The module `path` (relative to module `from`) names: the module an item lives in, following child
    /// modules, imports and re-exports; `None` for other crates, the prelude and local names.
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<usize> {
        let (first, rest) = path.split_first()?;
        if depth > 16 {
            return None;
        }
        let mut current = match first.as_str() {
            "crate" => 0,
            "self" => from,
            "super" => self.modules[from].parent?,
            name if self.modules[from].children.contains_key(name) => self.modules[from].children[name],
            name => {
                let target = self.modules[from].uses.get(name)?;
                let whole: Vec<String> = target.iter().chain(rest).cloned().collect();
                return self.resolve(from, &whole, depth + 1);
            }
        };
        for (i, segment) in rest.iter().enumerate() {
            let module = &self.modules[current];
            if segment == "super" {
                current = module.parent?;
            } else if let Some(&child) = module.children.get(segment) {
                current = child;
            } else if module.items.contains(segment) {
                return Some(current);
            } else if let Some(target) = module.uses.get(segment) {
                let whole: Vec<String> = target.iter().chain(&rest[i + 1..]).cloned().collect();
                return self.resolve(current, &whole, depth + 1);
            } else {
                return Some(current);
            }
        }
        Some(current)
    }

    /// The import graph between sibling modules: an edge A → B when code under sibling A names an item of
    /// sibling B (at any level: two files of one folder, two inline modules of one file, two top-level
    /// modules). Test code aside; a module naming its own ancestor or descendant adds no edge.
    pub(crate) fn sibling_graph(&self) -> Graph {
        let mut graph = Graph::new();
        for (id, module) in self.modules.iter().enumerate().filter(|(_, m)| !m.test) {
            for (path, line) in &module.refs {
                let Some(target) = self.resolve(id, path, 0).filter(|&t| !self.modules[t].test) else {
                    continue;
                };
                let (from, to) = (&module.path, &self.modules[target].path);
                let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue;
                }
                graph
                    .entry(from[..=common].join("::"))
                    .or_default()
                    .entry(to[..=common].join("::"))
                    .or_insert_with(|| format!("{}:{line}", module.file));
            }
        }
        graph
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Calls `f(name, path)` for every leaf of a `use` tree: the name it binds (`None` for a glob) and its path.
fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    f: &mut impl FnMut(Option<String>, Vec<String>),
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, f);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => f(prefix.last().cloned(), prefix.clone()),
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            f(Some(n.ident.to_string()), path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            f(Some(r.rename.to_string()), path);
        }
        syn::UseTree::Glob(_) => f(None, prefix.clone()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten_use(t, prefix, f)),
    }
}

/// What a module's non-test items define and name.
#[derive(Default)]
struct Names {
    items: BTreeSet<String>,
    uses: BTreeMap<String, Vec<String>>,
    refs: Vec<(Vec<String>, usize)>,
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    /// A `use` inside a function body.
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let line = u.span().start().line;
        flatten_use(&u.tree, &mut Vec::new(), &mut |_, path| {
            self.refs.push((path, line))
        });
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.refs.push((segments, path.span().start().line));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        macro_paths(mac.tokens.clone(), &mut self.refs);
    }
}

/// The `a::b::c` paths in a macro's tokens (nested groups too).
fn macro_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, usize)>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => macro_paths(g.stream(), out),
            TokenTree::Ident(first) => {
                let mut path = vec![first.to_string()];
                let mut j = i + 1;
                while let (
                    Some(TokenTree::Punct(a)),
                    Some(TokenTree::Punct(b)),
                    Some(TokenTree::Ident(next)),
                ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                {
                    if a.as_char() != ':' || b.as_char() != ':' {
                        break;
                    }
                    path.push(next.to_string());
                    j += 3;
                }
                if path.len() > 1 {
                    out.push((path, first.span().start().line));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The strongly connected components of `graph` with more than one module (Tarjan), each sorted.
pub(crate) fn cycles(graph: &Graph) -> Vec<Vec<String>> {
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
pub(crate) fn describe_cycle(src: &str, members: &[String], graph: &Graph) -> String {
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
