//! The integration tests of roofline-core, one binary: Hugging Face `config.json` import, whole model steps
//! through the public API (the layering of the crate's modules is checked by roofline-tests' tidy test).

mod checkpoint_bounds;
#[cfg(feature = "serde")]
mod edits;
mod hf_config;
mod mixed_precision;
mod model_step;
mod next_wave;
mod served_models;
mod uniform_configs;
