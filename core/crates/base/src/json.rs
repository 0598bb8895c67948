//! JSON text for people (feature `serde`): a spec's export and the page's results export.

/// `value` as indented JSON, for files people read and edit; an empty string if it cannot be written (a map
/// with non-string keys). Written compactly and re-indented through a [`serde_json::Value`]: serde_json's
/// pretty writer would be a second instance of every written type's `Serialize` (a second copy of it in the
/// page's wasm); members keep their order (serde_json's `preserve_order`).
pub fn to_pretty_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .and_then(|compact| serde_json::from_str::<serde_json::Value>(&compact))
        .and_then(|tree| serde_json::to_string_pretty(&tree))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Point {
        name: &'static str,
        time_s: f64,
        bytes: [u64; 2],
    }

    #[test]
    fn members_keep_their_order_and_floats_their_bits() {
        let text = to_pretty_json(&Point {
            name: "gemv",
            time_s: 0.1 + 0.2,
            bytes: [1, 2],
        });
        assert_eq!(
            text,
            "{\n  \"name\": \"gemv\",\n  \"time_s\": 0.30000000000000004,\n  \"bytes\": [\n    1,\n    2\n  ]\n}"
        );
    }
}
