//! Named fields of one benchmark row, a JSON object or a CSV record alike, read into base units with errors
//! that name the line and the field.

use roofline_base::Error;
use serde_json::{Map, Value};

/// A field as it is written.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Raw<'r> {
    /// Absent, JSON `null`, or an empty CSV cell.
    Missing,
    Number(f64),
    Text(&'r str),
    /// Anything else, as written (for the error message).
    Other(String),
}

/// One row: its fields by name and its line.
pub(super) trait Row {
    fn line(&self) -> usize;
    fn raw(&self, key: &str) -> Raw<'_>;
}

/// A JSON object.
pub(super) struct JsonRow<'m> {
    pub map: &'m Map<String, Value>,
    pub line: usize,
}

impl Row for JsonRow<'_> {
    fn line(&self) -> usize {
        self.line
    }

    fn raw(&self, key: &str) -> Raw<'_> {
        match self.map.get(key) {
            None | Some(Value::Null) => Raw::Missing,
            Some(Value::Number(n)) => n.as_f64().map_or(Raw::Other(n.to_string()), Raw::Number),
            Some(Value::String(s)) => Raw::Text(s),
            Some(other) => Raw::Other(other.to_string()),
        }
    }
}

/// A CSV record and its header.
pub(super) struct CsvRow<'r> {
    pub headers: &'r csv::StringRecord,
    pub record: &'r csv::StringRecord,
    pub line: usize,
}

impl Row for CsvRow<'_> {
    fn line(&self) -> usize {
        self.line
    }

    fn raw(&self, key: &str) -> Raw<'_> {
        let Some(at) = self.headers.iter().position(|h| h.eq_ignore_ascii_case(key)) else {
            return Raw::Missing;
        };
        match self.record.get(at).unwrap_or("") {
            "" => Raw::Missing,
            text => text.parse::<f64>().map_or(Raw::Text(text), Raw::Number),
        }
    }
}

/// Readers of one row's fields.
pub(super) trait Fields: Row {
    fn invalid(&self, key: &str, what: &str) -> Error {
        Error::InvalidInput(format!("line {}: field `{key}` {what}", self.line()))
    }

    /// A positive finite number, if present.
    fn optional(&self, key: &str) -> Result<Option<f64>, Error> {
        match self.raw(key) {
            Raw::Missing => Ok(None),
            Raw::Number(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            Raw::Number(x) => Err(self.invalid(key, &format!("must be a positive number, found {x}"))),
            Raw::Text(t) => Err(self.invalid(key, &format!("must be a positive number, found \"{t}\""))),
            Raw::Other(o) => Err(self.invalid(key, &format!("must be a positive number, found {o}"))),
        }
    }

    /// A positive finite number that must be present.
    fn required(&self, key: &str) -> Result<f64, Error> {
        self.optional(key)?.ok_or_else(|| self.invalid(key, "is missing"))
    }

    /// An optional field in milliseconds, in seconds.
    fn optional_ms(&self, key: &str) -> Result<Option<f64>, Error> {
        Ok(self.optional(key)?.map(|ms| ms / 1e3))
    }

    /// A whole number of at least 1, if present (a concurrency).
    fn optional_count(&self, key: &str) -> Result<Option<u32>, Error> {
        match self.optional(key)? {
            None => Ok(None),
            Some(x) if x.fract() == 0.0 && x <= f64::from(u32::MAX) => Ok(Some(x as u32)),
            Some(x) => Err(self.invalid(key, &format!("must be a whole number, found {x}"))),
        }
    }

    /// A request rate: a positive number, or none for `"inf"` (every prompt at once) and Python's
    /// `Infinity` (read as `null`).
    fn rate(&self, key: &str) -> Result<Option<f64>, Error> {
        match self.raw(key) {
            Raw::Text(t) if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("infinity") => Ok(None),
            Raw::Number(x) if x == f64::INFINITY => Ok(None),
            _ => self.optional(key),
        }
    }

    /// A text field, if present.
    fn text(&self, key: &str) -> Option<String> {
        match self.raw(key) {
            Raw::Text(t) => Some(t.to_owned()),
            Raw::Number(x) => Some(x.to_string()),
            _ => None,
        }
    }
}

impl<R: Row + ?Sized> Fields for R {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_csv_rows_read_alike() {
        let map: Map<String, Value> =
            serde_json::from_str(r#"{"a": 2.5, "b": "inf", "c": null, "d": -1, "e": [1], "n": 8}"#).unwrap();
        let json = JsonRow { map: &map, line: 3 };
        let headers = csv::StringRecord::from(vec!["a", "b", "c", "d", "e", "n"]);
        let record = csv::StringRecord::from(vec!["2.5", "inf", "", "-1", "[1]", "8"]);
        let csv = CsvRow {
            headers: &headers,
            record: &record,
            line: 3,
        };
        let rows: [&dyn Row; 2] = [&json, &csv];
        for row in rows {
            assert_eq!(row.optional("a").unwrap(), Some(2.5));
            assert_eq!((row.rate("b").unwrap(), row.optional("c").unwrap()), (None, None));
            assert_eq!(row.optional_count("n").unwrap(), Some(8));
            let e = row.optional("d").unwrap_err().to_string();
            assert!(
                e.contains("line 3: field `d` must be a positive number, found -1"),
                "{e}"
            );
            assert!(row.optional("e").is_err() && row.optional_count("a").is_err());
            assert!(
                row.required("zz")
                    .unwrap_err()
                    .to_string()
                    .contains("field `zz` is missing")
            );
        }
    }
}
