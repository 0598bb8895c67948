//! The tests of roofline-tests, one binary (one link instead of one per file): the catalog against its
//! sources, reference mode's accuracy on the committed H100 measurements and on the published low-precision
//! kernel timings, the workspace's tidiness and layering, the page's weight, and the real-browser tests of the built page
//! against an in-process `gpu-endpoint`.

mod architecture;
mod browser_advisor;
mod browser_analyzer;
mod browser_audit;
mod browser_closed_loop;
mod browser_defects;
mod browser_models;
mod browser_page;
mod browser_polish;
mod browser_roofline;
mod browser_serving;
mod browser_serving_sim;
mod browser_sizing;
mod browser_step;
mod catalog_sources;
mod low_precision_accuracy;
mod page_weight;
mod reference_accuracy;
mod tidy;
