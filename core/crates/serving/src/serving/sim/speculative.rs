//! Speculative decoding as the simulation runs it: a method, k draft tokens and a mean acceptance length
//! (tokens each verify step adds per request, the bonus token included), with published defaults.

use roofline_base::Error;

/// Most draft tokens per step accepted as input.
pub const MAX_DRAFT_TOKENS: u32 = 16;

/// How draft tokens are proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SpecMethod {
    /// Multi-token prediction: the model's own MTP module (one decoder layer and the shared head), run k
    /// times per step (DeepSeek-V3/R1, GLM, Qwen3.5).
    Mtp,
    /// EAGLE-3: a one-layer draft head on the target's hidden states, run k times per step.
    Eagle3,
    /// N-gram (prompt lookup): drafts matched on the CPU, no GPU cost.
    Ngram,
    /// A separate small draft model, k decode steps per verify step.
    DraftModel,
}

impl SpecMethod {
    /// Every method.
    pub const ALL: [SpecMethod; 4] = [
        SpecMethod::Mtp,
        SpecMethod::Eagle3,
        SpecMethod::Ngram,
        SpecMethod::DraftModel,
    ];

    /// The command-line name: `mtp`, `eagle3`, `ngram` or `draft_model`.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            SpecMethod::Mtp => "mtp",
            SpecMethod::Eagle3 => "eagle3",
            SpecMethod::Ngram => "ngram",
            SpecMethod::DraftModel => "draft_model",
        }
    }

    /// The method named `key` (case-insensitive; `-` and `_` alike).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] listing the valid names.
    pub fn parse(key: &str) -> Result<SpecMethod, Error> {
        let key = key.replace('-', "_");
        SpecMethod::ALL
            .into_iter()
            .find(|m| m.key().eq_ignore_ascii_case(&key))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown speculative method '{key}'; valid: {}",
                    SpecMethod::ALL.map(SpecMethod::key).join(", ")
                ))
            })
    }

    /// The published mean acceptance length at `draft_tokens` drafts, with its source, where there is one.
    ///
    /// InferenceX's golden acceptance lengths (SemiAnalysisAI/InferenceX `golden_al_distribution/`, SPEED-Bench
    /// coding split, vLLM on B300, thinking on), k = 1 … 8:
    /// - MTP: DeepSeek-V4-Pro (`dsv4_mtp.yaml`): 1.79, 2.27, 2.49, 2.54, 2.55, 2.55, 2.54, 2.58;
    /// - EAGLE-3: Kimi-K2.5 (`kimik2.5_eagle3.yaml`): 1.83, 2.43, 2.88, 3.24, 3.46, 3.62, 3.71, 3.77.
    ///
    /// N-gram and draft-model acceptance depends on the prompts and the draft model; none is published for a
    /// benchmark workload, so they have no default.
    #[must_use]
    pub fn published_acceptance(self, draft_tokens: u32) -> Option<(f64, &'static str)> {
        const MTP: [f64; 8] = [1.79, 2.27, 2.49, 2.54, 2.55, 2.55, 2.54, 2.58];
        const EAGLE3: [f64; 8] = [1.83, 2.43, 2.88, 3.24, 3.46, 3.62, 3.71, 3.77];
        let (table, source) = match self {
            SpecMethod::Mtp => (
                &MTP,
                "InferenceX golden AL, DeepSeek-V4-Pro MTP (golden_al_distribution/dsv4_mtp.yaml)",
            ),
            SpecMethod::Eagle3 => (
                &EAGLE3,
                "InferenceX golden AL, Kimi-K2.5 EAGLE-3 (golden_al_distribution/kimik2.5_eagle3.yaml)",
            ),
            SpecMethod::Ngram | SpecMethod::DraftModel => return None,
        };
        let index = usize::try_from(draft_tokens).ok()?.checked_sub(1)?;
        table.get(index).map(|&al| (al, source))
    }
}

/// Speculative decoding: each decode step verifies `draft_tokens` drafts per request (k + 1 query tokens
/// over the request's own KV) and advances it by `acceptance_length` tokens on average.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SpecDecoding {
    /// How drafts are proposed.
    pub method: SpecMethod,
    /// Draft tokens per step, k (vLLM `num_speculative_tokens`).
    pub draft_tokens: u32,
    /// Mean tokens a verify step adds per request, the bonus token included, in [1, k + 1].
    pub acceptance_length: f64,
}

impl SpecDecoding {
    /// `method` with `draft_tokens` drafts and `acceptance` (mean acceptance length), or the method's
    /// published default ([`SpecMethod::published_acceptance`]) when `acceptance` is `None`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] from [`SpecDecoding::check`], or when no acceptance is given and none is
    /// published for the method at `draft_tokens`.
    pub fn new(
        method: SpecMethod,
        draft_tokens: u32,
        acceptance: Option<f64>,
    ) -> Result<SpecDecoding, Error> {
        let acceptance_length = match acceptance {
            Some(a) => a,
            None => method
                .published_acceptance(draft_tokens)
                .map(|(a, _)| a)
                .ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "no published acceptance length for {} with {draft_tokens} draft tokens; give one \
                         (spec acceptance, in [1, {}])",
                        method.key(),
                        draft_tokens + 1
                    ))
                })?,
        };
        let spec = SpecDecoding {
            method,
            draft_tokens,
            acceptance_length,
        };
        spec.check()?;
        Ok(spec)
    }

    /// Checks the draft tokens (1 … [`MAX_DRAFT_TOKENS`]) and the acceptance length (finite, in [1, k + 1]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the field and its range.
    pub fn check(&self) -> Result<(), Error> {
        let k = self.draft_tokens;
        if !(1..=MAX_DRAFT_TOKENS).contains(&k) {
            return Err(Error::InvalidInput(format!(
                "spec draft tokens must be 1 to {MAX_DRAFT_TOKENS}, got {k}"
            )));
        }
        let a = self.acceptance_length;
        if !(a.is_finite() && (1.0..=f64::from(k) + 1.0).contains(&a)) {
            return Err(Error::InvalidInput(format!(
                "spec acceptance length must be in [1, {}] (k + 1 with k = {k} drafts), got {a}",
                k + 1
            )));
        }
        Ok(())
    }

    /// Query tokens per request in a verify step: k + 1.
    #[must_use]
    pub const fn width(&self) -> u32 {
        self.draft_tokens + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_published_tables_and_inputs_are_checked() {
        let mtp = SpecDecoding::new(SpecMethod::Mtp, 3, None).unwrap();
        assert_eq!((mtp.acceptance_length, mtp.width()), (2.49, 4));
        assert_eq!(
            SpecDecoding::new(SpecMethod::Eagle3, 1, None)
                .unwrap()
                .acceptance_length,
            1.83
        );
        let err = SpecDecoding::new(SpecMethod::Ngram, 4, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no published acceptance length for ngram"), "{err}");
        let err = SpecDecoding::new(SpecMethod::Mtp, 2, Some(3.5))
            .unwrap_err()
            .to_string();
        assert!(err.contains("in [1, 3]"), "{err}");
        assert!(SpecDecoding::new(SpecMethod::Mtp, 0, Some(1.0)).is_err());
        assert!(SpecDecoding::new(SpecMethod::Mtp, 9, None).is_err());
        assert_eq!(SpecMethod::parse("Draft-Model").unwrap(), SpecMethod::DraftModel);
        assert!(
            SpecMethod::parse("medusa")
                .unwrap_err()
                .to_string()
                .contains("mtp, eagle3")
        );
    }
}
