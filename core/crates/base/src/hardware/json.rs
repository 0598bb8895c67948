//! JSON import and export of a spec (custom and calibrated devices; feature `serde`).

use super::spec::HardwareSpec;
use crate::error::Error;

impl HardwareSpec {
    /// Parses a custom or measured device from JSON (the field names of this struct, base units) and
    /// checks it ([`HardwareSpec::check`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for malformed JSON or a spec that fails [`HardwareSpec::check`].
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{find_hardware, HardwareSpec};
    /// let json = find_hardware("gb10").unwrap().to_json();
    /// assert_eq!(&HardwareSpec::from_json(&json).unwrap(), find_hardware("gb10").unwrap());
    /// ```
    pub fn from_json(json: &str) -> Result<HardwareSpec, Error> {
        let spec: HardwareSpec =
            serde_json::from_str(json).map_err(|e| Error::InvalidInput(format!("hardware JSON: {e}")))?;
        spec.check()?;
        Ok(spec)
    }

    /// This spec as pretty-printed JSON, for export.
    #[must_use]
    pub fn to_json(&self) -> String {
        crate::json::to_pretty_json(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::find_hardware;

    #[test]
    fn json_round_trip_checks() {
        let json = find_hardware("mi355x").unwrap().to_json();
        assert_eq!(
            &HardwareSpec::from_json(&json).unwrap(),
            find_hardware("mi355x").unwrap()
        );
        let bad = json.replacen("\"memory_bytes\": 288000000000.0", "\"memory_bytes\": -1.0", 1);
        assert_ne!(bad, json);
        assert!(matches!(
            HardwareSpec::from_json(&bad),
            Err(Error::InvalidInput(_))
        ));
        assert!(HardwareSpec::from_json("{").is_err());
    }
}
