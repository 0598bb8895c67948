//! The module-name patterns of a checkpoint's lists (`ignore`, `targets`, `exclude_modules`,
//! `modules_to_not_convert`), indexed so a list costs work per pattern and per layer class, never per
//! layer × pattern: a pattern that names layers by number is tried on those layers only (docs/design/core.md).

use std::cell::RefCell;
use std::collections::HashMap;

use regex_lite::Regex;
use roofline_base::Error;

/// Most patterns one list may hold.
pub(super) const MAX_PATTERNS: usize = 65_536;
/// Most patterns of one list whose match may depend on a layer's number other than by naming it whole (a
/// `re:` expression, a glob with a digit beside a `*`): each is tried on a sample of each class's layers.
pub(super) const MAX_SAMPLED_PATTERNS: usize = 256;

/// How a method writes its patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// transformers' `modules_to_not_convert`: anywhere in the name, `*` any text.
    Anywhere,
    /// compressed-tensors: `re:` a regular expression matched from the name's start, else the exact name
    /// (or a parent of it).
    CompressedTensors,
    /// ModelOpt's globs: the whole name, or a parent of it.
    ModelOpt,
}

enum Matcher {
    /// Literal segments with `*` (any text) between them, anchored at the name's start and end where said;
    /// with `parent`, a match may also end just before a `.` of the name (a parent module).
    Glob {
        segments: Vec<String>,
        start: bool,
        end: bool,
        parent: bool,
    },
    Regex(Regex),
}

/// Whether the glob `segments` matches the whole of `text`, given its anchoring.
fn glob_matches(segments: &[String], text: &str, start: bool, end: bool) -> bool {
    let mut at = 0;
    let last = segments.len().saturating_sub(1);
    for (k, segment) in segments.iter().enumerate() {
        if k == 0 && start {
            if !text.starts_with(segment.as_str()) {
                return false;
            }
            at = segment.len();
            if k == last && end {
                return text.len() == segment.len();
            }
        } else if k == last && end {
            return text.len() >= at + segment.len() && text.ends_with(segment.as_str());
        } else {
            match text[at..].find(segment.as_str()) {
                Some(found) => at += found + segment.len(),
                None => return false,
            }
        }
    }
    true
}

impl Matcher {
    fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Regex(re) => re.is_match(name),
            Matcher::Glob {
                segments,
                start,
                end,
                parent,
            } => {
                glob_matches(segments, name, *start, *end)
                    || (*parent
                        && *end
                        && name
                            .match_indices('.')
                            .any(|(i, _)| glob_matches(segments, &name[..i], *start, true)))
            }
        }
    }
}

/// The maximal runs of ASCII digits in `text`, each with whether it touches the text's start and end.
pub(super) fn digit_runs(text: &str) -> Vec<(&str, bool, bool)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_ascii_digit() && i < text.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((&text[s..i], s == 0, i == text.len()));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

struct Pattern {
    matcher: Matcher,
    /// Numbers the pattern names, where they may be layer numbers.
    named: Vec<u32>,
    /// Whether the pattern names layers only whole: its match on a layer it does not name is the same for
    /// every such layer (no digit of it touches a `*` or an unanchored end, and it is no regular expression).
    whole: bool,
    /// The longest digit run, in digits.
    widest_run: usize,
}

impl Pattern {
    fn new(text: &str, syntax: Syntax) -> Result<Pattern, regex_lite::Error> {
        if syntax == Syntax::CompressedTensors
            && let Some(re) = text.strip_prefix("re:")
        {
            let runs = digit_runs(re);
            return Ok(Pattern {
                matcher: Matcher::Regex(Regex::new(&format!("^(?:{re})"))?),
                named: runs.iter().filter_map(|(r, ..)| r.parse().ok()).collect(),
                whole: false,
                widest_run: runs.iter().map(|(r, ..)| r.len()).max().unwrap_or(0),
            });
        }
        let (segments, start, end): (Vec<String>, bool, bool) = match syntax {
            Syntax::Anywhere => (text.split('*').map(str::to_owned).collect(), false, false),
            Syntax::CompressedTensors => (vec![text.to_owned()], true, true),
            Syntax::ModelOpt => (text.split('*').map(str::to_owned).collect(), true, true),
        };
        let (mut named, mut whole, mut widest_run) = (Vec::new(), true, 0);
        let last = segments.len() - 1;
        for (k, segment) in segments.iter().enumerate() {
            for (run, at_start, at_end) in digit_runs(segment) {
                whole &= !(at_start && !(k == 0 && start)) && !(at_end && !(k == last && end));
                widest_run = widest_run.max(run.len());
                named.extend(run.parse::<u32>().ok());
            }
        }
        Ok(Pattern {
            matcher: Matcher::Glob {
                segments,
                start,
                end,
                parent: syntax != Syntax::Anywhere,
            },
            named,
            whole,
            widest_run,
        })
    }
}

/// Where a linear layer's name is evaluated: its own layer, and the layer the list's sampled patterns are
/// tried on for it ([`Patterns::sampled_layers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LayerAt {
    /// The layer.
    pub(super) number: u32,
    /// The layer standing for it in the sampled patterns: itself when sampled, else an unsampled layer of
    /// its class.
    pub(super) sampled_as: u32,
}

/// A linear layer's name: `{prefix}.{layer}.{suffix}`, or `suffix` alone outside the layers (`lm_head`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Name<'a> {
    pub(super) prefix: &'a str,
    pub(super) layer: Option<LayerAt>,
    pub(super) suffix: &'a str,
}

impl Name<'_> {
    /// The name as the checkpoint writes it, at layer `number` (its own when `None`).
    pub(super) fn text_at(&self, number: Option<&str>) -> String {
        match (self.layer, number) {
            (_, Some(n)) => format!("{}.{n}.{}", self.prefix, self.suffix),
            (Some(at), None) => format!("{}.{}.{}", self.prefix, at.number, self.suffix),
            (None, None) => self.suffix.to_owned(),
        }
    }
}

/// One list of patterns, indexed by the layer numbers they name.
pub(super) struct Patterns {
    patterns: Vec<Pattern>,
    /// Whole-naming patterns by the numbers they name.
    by_number: HashMap<u32, Vec<usize>>,
    whole: Vec<usize>,
    sampled: Vec<usize>,
    /// A layer number no pattern names (more digits than any number in them), as text.
    unnamed: String,
    /// Results of the whole-naming patterns on the unnamed layer and of the sampled ones on a layer, by name.
    cache: RefCell<HashMap<(bool, String), bool>>,
}

impl Patterns {
    /// Reads `texts` in `syntax`, errors made by `error` from their message (the caller names the field).
    ///
    /// # Errors
    /// `error` of a message for the first text that is no valid pattern, or for a list over [`MAX_PATTERNS`]
    /// or with more than [`MAX_SAMPLED_PATTERNS`] sampled patterns.
    pub(super) fn new(
        texts: &[String],
        syntax: Syntax,
        error: impl Fn(String) -> Error,
    ) -> Result<Patterns, Error> {
        if texts.len() > MAX_PATTERNS {
            return Err(error(format!(
                "lists {} patterns, more than the {MAX_PATTERNS} this reader evaluates",
                texts.len()
            )));
        }
        let patterns = texts
            .iter()
            .map(|t| Pattern::new(t, syntax).map_err(|e| error(format!("'{t}' is no valid pattern: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let (whole, sampled): (Vec<usize>, Vec<usize>) =
            (0..patterns.len()).partition(|&i| patterns[i].whole);
        if sampled.len() > MAX_SAMPLED_PATTERNS {
            return Err(error(format!(
                "has {} regular expressions or globs with a digit beside a `*`, more than the \
                 {MAX_SAMPLED_PATTERNS} this reader evaluates",
                sampled.len()
            )));
        }
        let mut by_number: HashMap<u32, Vec<usize>> = HashMap::new();
        for &i in &whole {
            for &n in &patterns[i].named {
                by_number.entry(n).or_default().push(i);
            }
        }
        let widest = patterns.iter().map(|p| p.widest_run).max().unwrap_or(0);
        Ok(Patterns {
            patterns,
            by_number,
            whole,
            sampled,
            unnamed: format!("1{}", "0".repeat(widest)),
            cache: RefCell::new(HashMap::new()),
        })
    }

    /// Whether the list has no patterns.
    pub(super) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Every number a pattern names (a layer it may single out).
    pub(super) fn named_layers(&self) -> impl Iterator<Item = u32> + '_ {
        self.patterns.iter().flat_map(|p| p.named.iter().copied())
    }

    /// The numbers the sampled patterns name.
    pub(super) fn sampled_layers(&self) -> impl Iterator<Item = u32> + '_ {
        self.sampled
            .iter()
            .flat_map(|&i| self.patterns[i].named.iter().copied())
    }

    fn cached(&self, sampled: bool, text: String, any: impl FnOnce(&str) -> bool) -> bool {
        if let Some(&hit) = self.cache.borrow().get(&(sampled, text.clone())) {
            return hit;
        }
        let hit = any(&text);
        self.cache.borrow_mut().insert((sampled, text), hit);
        hit
    }

    /// Whether any pattern matches `name`: the patterns naming its layer on the name itself, the other
    /// whole-naming ones on the name at an unnamed layer, the sampled ones on the name at `sampled_as`.
    pub(super) fn matches(&self, name: &Name<'_>) -> bool {
        let Some(at) = name.layer else {
            let text = name.text_at(None);
            return self.patterns.iter().any(|p| p.matcher.is_match(&text));
        };
        let any = |list: &[usize], text: &str| list.iter().any(|&i| self.patterns[i].matcher.is_match(text));
        if let Some(list) = self.by_number.get(&at.number)
            && any(list, &name.text_at(None))
        {
            return true;
        }
        self.cached(false, name.text_at(Some(&self.unnamed)), |t| any(&self.whole, t))
            || self.cached(true, name.text_at(Some(&at.sampled_as.to_string())), |t| {
                any(&self.sampled, t)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(texts: &[&str], syntax: Syntax) -> Patterns {
        Patterns::new(
            &texts.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>(),
            syntax,
            Error::InvalidInput,
        )
        .unwrap()
    }

    fn at(number: u32) -> Option<LayerAt> {
        Some(LayerAt {
            number,
            sampled_as: number,
        })
    }

    fn layer(prefix: &'static str, number: u32, suffix: &'static str) -> Name<'static> {
        Name {
            prefix,
            layer: at(number),
            suffix,
        }
    }

    #[test]
    fn globs_match_as_each_method_reads_them() {
        let attn = |i| layer("model.layers", i, "self_attn.o_proj");
        // ModelOpt: the whole name or a parent; layer 1 is not layer 11.
        let modelopt = list(&["model.layers.1.self_attn*", "lm_head"], Syntax::ModelOpt);
        assert!(modelopt.matches(&attn(1)) && !modelopt.matches(&attn(11)) && !modelopt.matches(&attn(2)));
        let parent = list(&["model.layers.3"], Syntax::ModelOpt);
        assert!(parent.matches(&attn(3)) && !parent.matches(&attn(30)));
        // transformers: anywhere in the name.
        let anywhere = list(&["self_attn"], Syntax::Anywhere);
        assert!(anywhere.matches(&attn(7)) && anywhere.matches(&attn(123)));
        // compressed-tensors: exact names or parents, and `re:` from the start.
        let ct = list(
            &["re:.*shared_experts.*", "model.layers.2.self_attn"],
            Syntax::CompressedTensors,
        );
        assert!(ct.matches(&layer("model.layers", 9, "mlp.shared_experts.up_proj")));
        assert!(ct.matches(&attn(2)) && !ct.matches(&attn(12)));
        let head = Name {
            prefix: "",
            layer: None,
            suffix: "lm_head",
        };
        assert!(modelopt.matches(&head) && !ct.matches(&head));
    }

    #[test]
    fn only_patterns_that_touch_a_number_with_a_wildcard_are_sampled() {
        let lists = [
            (
                vec!["model.layers.1.self_attn*", "*.mlp.shared_expert.*"],
                Syntax::ModelOpt,
                0,
            ),
            (vec!["layers.1*", "*1.mlp"], Syntax::ModelOpt, 2),
            (vec!["layers.1", "3.mlp", "layers.1.mlp"], Syntax::Anywhere, 2),
            (vec!["re:.*layers\\.[0-2]\\..*"], Syntax::CompressedTensors, 1),
        ];
        for (texts, syntax, sampled) in lists {
            let p = list(&texts, syntax);
            assert_eq!(p.sampled.len(), sampled, "{texts:?}");
        }
        // A digit run within a sampled pattern still names its layer, so the layer is sampled.
        let p = list(&["re:.*layers\\.[0-2]\\..*"], Syntax::CompressedTensors);
        assert_eq!(p.sampled_layers().collect::<Vec<_>>(), [0, 2]);
    }

    #[test]
    fn lists_too_long_or_with_too_many_sampled_patterns_are_refused() {
        let message = |texts: &[String], syntax| {
            Patterns::new(texts, syntax, Error::InvalidInput)
                .err()
                .unwrap()
                .to_string()
        };
        let many = vec!["x".to_owned(); MAX_PATTERNS + 1];
        assert!(message(&many, Syntax::Anywhere).contains("65536"));
        let regexes = vec!["re:a".to_owned(); MAX_SAMPLED_PATTERNS + 1];
        let sampled = message(&regexes, Syntax::CompressedTensors);
        assert!(sampled.contains("257") && sampled.contains("256"), "{sampled}");
        let bad = message(&["re:(".to_owned()], Syntax::CompressedTensors);
        assert!(bad.contains("'re:('"), "{bad}");
    }
}
