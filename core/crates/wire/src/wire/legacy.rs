//! Reading JSON written before a wire type's fields took base units: calibration results kept by the
//! endpoint's store or saved by `calibrate --json`, step reports saved by `bench-model --json`, and an older
//! endpoint's answers name some fields in µs, TFLOP/s, GB/s or MB. Such a field is moved to its base-unit name
//! and converted on read; output always has the new names. (The page keeps only the calibrated
//! `HardwareSpec`, which was always in base units.)

use serde_json::Value;

/// One field whose unit changed: `old` (e.g. `kernel_overhead_us`) becomes `new` (`kernel_overhead_s`),
/// multiplied by `to_base` (here [`roofline_base::units::MICRO`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Renamed {
    /// Name the field had, unit in the name.
    pub old: &'static str,
    /// Name it has now, in base units.
    pub new: &'static str,
    /// Factor from the old unit to the base unit.
    pub to_base: f64,
}

/// `object` with every `old` field of `renamed` that it has (and whose `new` field it lacks) moved to `new`
/// and converted; a non-number (`null` of an absent optional) moves unchanged, so a wrong type still fails
/// naming the new field. Anything but an object is returned as is.
pub(super) fn with_base_units(object: Value, renamed: &[Renamed]) -> Value {
    let Value::Object(mut fields) = object else {
        return object;
    };
    for field in renamed {
        if fields.contains_key(field.new) {
            continue;
        }
        if let Some(old) = fields.remove(field.old) {
            let converted = old.as_f64().map_or(old, |v| Value::from(v * field.to_base));
            fields.insert(field.new.to_owned(), converted);
        }
    }
    Value::Object(fields)
}

/// Implements `Serialize` and `Deserialize` for a wire type whose derives carry `#[serde(remote = "Self")]`
/// (serde's pattern for wrapping a derived implementation): serializing is the derived one; deserializing
/// first applies [`with_base_units`] with the given `(old, new, to_base)` renames, so old JSON still reads.
macro_rules! reads_legacy_units {
    ($type:ty, [$(($old:literal, $new:literal, $to_base:expr)),+ $(,)?]) => {
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$type>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let object = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                let renamed = [$($crate::wire::legacy::Renamed { old: $old, new: $new, to_base: $to_base }),+];
                // Read from text, not from the `Value`: the derived code then exists once, for serde_json's
                // text reader (a `Value` reader would be a second copy of it and of every nested type).
                let text = $crate::wire::legacy::with_base_units(object, &renamed).to_string();
                <$type>::deserialize(&mut serde_json::Deserializer::from_str(&text))
                    .map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(super) use reads_legacy_units;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const RENAMED: [Renamed; 2] = [
        Renamed {
            old: "time_us",
            new: "time_s",
            to_base: 1e-6,
        },
        Renamed {
            old: "free_mb",
            new: "free_bytes",
            to_base: 1e6,
        },
    ];

    #[test]
    fn old_fields_move_to_their_new_names_in_base_units() {
        // 250 µs = 2.5e-4 s; 80 MB = 8e7 bytes.
        let upgraded = with_base_units(json!({"time_us": 250.0, "free_mb": 80.0, "name": "x"}), &RENAMED);
        assert_eq!(
            upgraded,
            json!({"time_s": 2.5e-4, "free_bytes": 8e7, "name": "x"})
        );
        // An absent optional written as null stays null.
        assert_eq!(
            with_base_units(json!({"free_mb": null}), &RENAMED),
            json!({"free_bytes": null})
        );
    }

    #[test]
    fn a_new_field_wins_and_non_objects_pass_through() {
        let both = with_base_units(json!({"time_us": 250.0, "time_s": 1.0}), &RENAMED);
        assert_eq!(both["time_s"], 1.0);
        assert_eq!(with_base_units(json!([1, 2]), &RENAMED), json!([1, 2]));
    }
}
