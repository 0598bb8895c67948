//! Validation of a model's dimensions.

use super::ModelConfig;
use roofline_base::Error;

impl ModelConfig {
    /// Checks that every dimension is positive and heads divide evenly into KV heads.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the offending field.
    pub fn check(&self) -> Result<(), Error> {
        let dims = [
            ("layers", u64::from(self.layers)),
            ("hidden", self.hidden),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("ffn_dim", self.ffn_dim),
            ("vocab", self.vocab),
        ];
        crate::ops::check_dims(&dims)?;
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::InvalidInput(format!(
                "{}: heads must be a multiple of kv_heads",
                self.key
            )));
        }
        if let Some(m) = self.moe {
            crate::ops::check_dims(&[
                ("experts", m.experts),
                ("top_k", m.top_k),
                ("expert_ffn", m.expert_ffn),
            ])?;
            if m.top_k > m.experts || m.dense_layers > self.layers {
                return Err(Error::InvalidInput(format!(
                    "{}: inconsistent MoE config",
                    self.key
                )));
            }
        }
        if let Some(m) = self.mla {
            let dims = [
                ("q_lora_rank", m.q_lora_rank),
                ("kv_lora_rank", m.kv_lora_rank),
                ("rope_head_dim", m.rope_head_dim),
                ("nope_head_dim", m.nope_head_dim),
                ("v_head_dim", m.v_head_dim),
            ];
            crate::ops::check_dims(&dims)?;
        }
        if let Some(l) = self.linear_attention {
            crate::ops::check_dims(&[
                ("linear_num_key_heads", l.key_heads),
                ("linear_num_value_heads", l.value_heads),
                ("linear_key_head_dim", l.key_head_dim),
                ("linear_value_head_dim", l.value_head_dim),
                ("linear_conv_kernel_dim", l.conv_kernel),
            ])?;
            if l.layers > self.layers || !l.value_heads.is_multiple_of(l.key_heads) {
                return Err(Error::InvalidInput(format!(
                    "{}: linear attention needs at most {} layers and value heads a multiple of key heads",
                    self.key, self.layers
                )));
            }
        }
        if let Some(i) = self.sparse_indexer {
            crate::ops::check_dims(&[
                ("index_n_heads", i.heads),
                ("index_head_dim", i.head_dim),
                ("index_topk", i.top_k),
            ])?;
            if self.mla.is_none() && !i.msa {
                return Err(Error::InvalidInput(format!(
                    "{}: DeepSeek Sparse Attention's indexer needs multi-head latent attention",
                    self.key
                )));
            }
        }
        if let Some(w) = self.sliding_window {
            crate::ops::check_dims(&[("window", w.window)])?;
            if w.layers > self.layers {
                return Err(Error::InvalidInput(format!(
                    "{}: more sliding-window layers than layers",
                    self.key
                )));
            }
        }

        if let Some(c) = self.compressed_attention {
            crate::ops::check_dims(&[
                ("compress_ratios", c.csa_ratio.min(c.hca_ratio)),
                ("o_groups", c.o_groups),
                ("o_lora_rank", c.o_lora_rank),
                ("hc_mult", c.hc_mult),
                ("index_n_heads", c.indexer.heads),
                ("index_head_dim", c.indexer.head_dim),
                ("index_topk", c.indexer.top_k),
            ])?;
            if self.mla.is_none()
                || c.csa_layers.saturating_add(c.hca_layers) > self.layers
                || !(self.heads * self.head_dim).is_multiple_of(c.o_groups)
            {
                return Err(Error::InvalidInput(format!(
                    "{}: compressed attention needs MLA, at most {} compressed layers and o_groups dividing \
                     the attention width",
                    self.key, self.layers
                )));
            }
        }
        Ok(())
    }
}
