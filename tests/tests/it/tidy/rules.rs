//! The per-file rules of the tidy test, read from syn's tree: the leading `//!` doc and its length, the
//! length of every function, `Result<…, String>` returns, and serde_json calls that compile a second copy
//! of each type they touch.

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::modules::is_test;

/// What one file's code breaks, one line each (`file:line: …`) except the line-count rules, which the
/// caller checks on the text.
pub(crate) struct FileFindings {
    /// Functions (test ones too) longer than the limit: `(name, first line, lines)`.
    pub(crate) long_functions: Vec<(String, usize, usize)>,
    /// Non-test functions (or `closure`s) returning `Result<…, String>`: `(name, line)`.
    pub(crate) string_errors: Vec<(String, usize)>,
    /// Non-test calls of serde_json's second-copy functions: `(call, line)`.
    pub(crate) serde_copies: Vec<(&'static str, usize)>,
}

/// serde_json functions and macros that compile a second copy of every type they touch (a `Value`
/// serializer or deserializer, the pretty writer).
const SECOND_SERDE_CALLS: [&str; 3] = ["to_value", "from_value", "to_string_pretty"];
const SECOND_SERDE_MACROS: [&str; 1] = ["json"];

/// The number of leading `//!` lines of `text` (blank lines before them aside); 0 when it does not start
/// with one.
pub(crate) fn module_doc_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| l.starts_with("//!"))
        .count()
}

/// The findings of `file` (`test`: the whole file is test code) with functions over `max_fn_lines`.
pub(crate) fn check(file: &syn::File, test: bool, max_fn_lines: usize) -> FileFindings {
    let mut v = Checker {
        max_fn_lines,
        test_depth: usize::from(test),
        findings: FileFindings {
            long_functions: Vec::new(),
            string_errors: Vec::new(),
            serde_copies: Vec::new(),
        },
    };
    v.visit_file(file);
    v.findings
}

struct Checker {
    max_fn_lines: usize,
    /// Greater than 0 inside test code.
    test_depth: usize,
    findings: FileFindings,
}

impl Checker {
    fn function(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let lines = block.brace_token.span.close().end().line + 1 - first;
        if lines > self.max_fn_lines {
            self.findings
                .long_functions
                .push((sig.ident.to_string(), first, lines));
        }
        if self.test_depth == 0 && !is_test(attrs) && string_error(&sig.output) {
            let line = sig.output.span().start().line;
            self.findings.string_errors.push((sig.ident.to_string(), line));
        }
    }

    fn in_test<T>(&mut self, attrs: &[syn::Attribute], visit: impl FnOnce(&mut Self) -> T) -> T {
        let test = is_test(attrs);
        self.test_depth += usize::from(test);
        let out = visit(self);
        self.test_depth -= usize::from(test);
        out
    }
}

impl<'ast> Visit<'ast> for Checker {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.in_test(&m.attrs, |v| syn::visit::visit_item_mod(v, m));
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.attrs, &f.sig, &f.block);
        self.in_test(&f.attrs, |v| syn::visit::visit_item_fn(v, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.attrs, &f.sig, &f.block);
        self.in_test(&f.attrs, |v| syn::visit::visit_impl_item_fn(v, f));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.attrs, &f.sig, block);
        } else if self.test_depth == 0 && string_error(&f.sig.output) {
            let line = f.sig.output.span().start().line;
            self.findings.string_errors.push((f.sig.ident.to_string(), line));
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        if self.test_depth == 0 && string_error(&c.output) {
            self.findings
                .string_errors
                .push(("closure".to_owned(), c.output.span().start().line));
        }
        syn::visit::visit_expr_closure(self, c);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            self.serde_copy(&p.path, &SECOND_SERDE_CALLS);
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.serde_copy(&mac.path, &SECOND_SERDE_MACROS);
        syn::visit::visit_macro(self, mac);
    }
}

impl Checker {
    fn serde_copy(&mut self, path: &syn::Path, names: &[&'static str]) {
        let Some(last) = path.segments.last() else { return };
        if self.test_depth > 0 {
            return;
        }
        if let Some(&call) = names.iter().find(|c| last.ident == c) {
            self.findings.serde_copies.push((call, path.span().start().line));
        }
    }
}

/// Whether a return type is `Result<_, String>` (`std::result::Result`, `std::string::String` too).
fn string_error(output: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, ty) = output else {
        return false;
    };
    let syn::Type::Path(ty) = &**ty else { return false };
    let Some(result) = ty.path.segments.last().filter(|s| s.ident == "Result") else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &result.arguments else {
        return false;
    };
    let args: Vec<&syn::GenericArgument> = args.args.iter().collect();
    matches!(args.as_slice(), [_, syn::GenericArgument::Type(syn::Type::Path(e))]
        if e.path.segments.last().is_some_and(|s| s.ident == "String"))
}
