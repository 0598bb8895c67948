//! A model's multi-token-prediction (MTP) layers as speculative decoding's drafter: the one-layer model a
//! draft step runs ([`ModelConfig::mtp_drafter`]) and the bytes its layers add ([`ModelConfig::mtp_weight_bytes`]).

use super::{ModelConfig, MoeConfig};
use crate::quant_config::{Module, QuantConfig};

impl ModelConfig {
    /// The model's multi-token-prediction module as speculative decoding's drafter (`None` without MTP
    /// layers): its `mtp_layers` decoder layers with full attention (and the sparse-attention indexer where
    /// the model has one) and the model's experts, sharing the model's embedding and logits head. Analyse a
    /// draft step with [`crate::analysis::analyze_mtp_step`], which adds each layer's input projection.
    ///
    /// # Examples
    /// ```
    /// let qwen = roofline_analysis::find_model("qwen3.5-397b-a17b").unwrap();
    /// let drafter = qwen.mtp_drafter().unwrap();
    /// assert_eq!((drafter.layers, drafter.linear_attention_layers()), (1, 0));
    /// assert!(roofline_analysis::find_model("llama-3.1-8b").unwrap().mtp_drafter().is_none());
    /// ```
    #[must_use]
    pub fn mtp_drafter(&self) -> Option<ModelConfig> {
        (self.mtp_layers > 0).then(|| ModelConfig {
            key: format!("{}-mtp", self.key),
            name: format!("{} MTP drafter", self.name),
            layers: self.mtp_layers,
            moe: self.moe.map(|m| MoeConfig { dense_layers: 0, ..m }),
            linear_attention: None,
            sliding_window: None,
            mtp_layers: 0,
            published_params: 0.0,
            published_active_params: None,
            source: format!("the MTP layers of {}", self.key),
            ..self.clone()
        })
    }

    /// Bytes of the MTP layers' weights under `config` (0 without them): the drafter's layers and each
    /// layer's input projection (2·H × H, in the attention's format) and its two norms, the embedding and
    /// logits head being the model's own.
    #[must_use]
    pub fn mtp_weight_bytes(&self, config: &QuantConfig) -> f64 {
        self.mtp_drafter().map_or(0.0, |d| {
            let table = self.vocab as f64 * self.hidden as f64;
            let tables = config.format(Module::Embeddings).weights.tensor_bytes(table)
                + if d.tied_embeddings {
                    0.0
                } else {
                    config.format(Module::Head).weights.tensor_bytes(table)
                };
            let h = self.hidden as f64;
            let inputs = config.format(Module::Attention).weights.tensor_bytes(2.0 * h * h)
                + config.hidden().tensor_bytes(2.0 * h);
            d.weight_bytes(config) - tables - config.hidden().tensor_bytes(h) + f64::from(d.layers) * inputs
        })
    }
}
