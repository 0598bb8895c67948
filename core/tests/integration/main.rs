//! The integration tests of roofline-core, one binary: Hugging Face `config.json` import, whole model steps
//! through the public API, and the layering of the crate's modules.

mod hf_config;
mod layering;
mod model_step;
mod uniform_configs;
