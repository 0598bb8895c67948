//! The top-level JSON values of a benchmark file in one pass: objects one after another (a result, JSONL,
//! appended results) or the objects of one top-level array, each with the line it starts on, and Python's
//! non-JSON number tokens replaced in that value only.

use std::borrow::Cow;

use roofline_base::Error;

/// One top-level object of a file: its text and its first line (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span<'t> {
    pub text: &'t str,
    pub line: usize,
}

/// The objects of `text`, in order, found in one pass that counts lines as it goes.
pub(super) struct Objects<'t> {
    text: &'t str,
    pos: usize,
    line: usize,
    /// Inside a top-level array: `Some(false)` before its first element, `Some(true)` after one.
    array: Option<bool>,
    done: bool,
}

impl<'t> Objects<'t> {
    pub(super) fn new(text: &'t str) -> Objects<'t> {
        Objects {
            text,
            pos: 0,
            line: 1,
            array: None,
            done: false,
        }
    }

    fn error(&mut self, what: &str) -> Option<Result<Span<'t>, Error>> {
        self.done = true;
        Some(Err(Error::InvalidInput(format!("line {}: {what}", self.line))))
    }

    /// Skips whitespace (and, in an array, one separating comma), counting lines.
    fn skip(&mut self) {
        let bytes = self.text.as_bytes();
        let mut comma = self.array == Some(true);
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                b',' if comma => comma = false,
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// The end of the object starting at `self.pos` (just past its closing brace), counting the lines in it;
    /// `None` when the text ends first.
    fn object_end(&self) -> Option<(usize, usize)> {
        let bytes = self.text.as_bytes();
        let (mut depth, mut lines, mut in_string, mut escaped) = (0usize, 0, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(self.pos) {
            if b == b'\n' {
                lines += 1;
            }
            if in_string {
                in_string = escaped || b != b'"';
                escaped = !escaped && b == b'\\';
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((i + 1, lines));
                    }
                }
                _ => {}
            }
        }
        None
    }
}

impl<'t> Iterator for Objects<'t> {
    type Item = Result<Span<'t>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.skip();
        match self.text.as_bytes().get(self.pos) {
            None if self.array.is_some() => self.error("the array is not closed with `]`"),
            None => {
                self.done = true;
                None
            }
            Some(b'[')
                if self.array.is_none() && self.pos == self.text.len() - self.text.trim_start().len() =>
            {
                self.array = Some(false);
                self.pos += 1;
                self.next()
            }
            Some(b']') if self.array.is_some() => {
                self.pos += 1;
                self.array = None;
                self.skip();
                if self.pos < self.text.len() {
                    return self.error("text after the closing `]`");
                }
                self.done = true;
                None
            }
            Some(b'{') => {
                let Some((end, lines)) = self.object_end() else {
                    return self.error("not JSON: the object is not closed");
                };
                let span = Span {
                    text: &self.text[self.pos..end],
                    line: self.line,
                };
                (self.pos, self.line) = (end, self.line + lines);
                if self.array.is_some() {
                    self.array = Some(true);
                }
                Some(Ok(span))
            }
            Some(_) => self.error("expected a benchmark result object (`{`)"),
        }
    }
}

/// `text` with Python's non-JSON number tokens (`Infinity`, `-Infinity`, `NaN`, which `json.dumps` writes
/// for non-finite floats) outside strings replaced by `null`; borrowed when it has none.
pub(super) fn python_json(text: &str) -> Cow<'_, str> {
    if !text.contains("Infinity") && !text.contains("NaN") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            out.push_str("null");
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Result<Vec<(usize, &str)>, Error> {
        Objects::new(text).map(|s| s.map(|s| (s.line, s.text))).collect()
    }

    #[test]
    fn objects_and_arrays_split_with_their_lines() {
        let jsonl = "{\"a\": 1}\n{\"b\": \"}{\"}\n\n{\"c\": [1,\n 2]}\n";
        assert_eq!(
            lines(jsonl).unwrap(),
            [
                (1, "{\"a\": 1}"),
                (2, "{\"b\": \"}{\"}"),
                (4, "{\"c\": [1,\n 2]}")
            ]
        );
        let array = "[\n  {\"x\": 1},\n  {\"y\": {\"z\": 2}}\n]\n";
        assert_eq!(
            lines(array).unwrap(),
            [(2, "{\"x\": 1}"), (3, "{\"y\": {\"z\": 2}}")]
        );
        assert!(
            lines("{\"a\": 1}\n[")
                .unwrap_err()
                .to_string()
                .contains("line 2: expected")
        );
        assert!(
            lines("{\"a\": 1")
                .unwrap_err()
                .to_string()
                .contains("line 1: not JSON")
        );
        assert!(
            lines("[{\"a\": 1}")
                .unwrap_err()
                .to_string()
                .contains("not closed")
        );
    }

    #[test]
    fn python_tokens_become_null_outside_strings() {
        assert_eq!(
            python_json(r#"{"a": "Infinity", "b": Infinity, "c": -Infinity, "d": NaN}"#),
            r#"{"a": "Infinity", "b": null, "c": null, "d": null}"#
        );
        assert!(matches!(python_json("{\"a\": 1}"), Cow::Borrowed(_)));
    }
}
