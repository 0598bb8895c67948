//! The page's charts, split as criterion does: pure series shaping, backend-generic drawing, the component.
//! The roofline (`series`, `draw`, `roofline_chart`) and the serving Pareto chart (`pareto_series`,
//! `axis`, `pareto_draw`, `pareto_chart`) share the canvas sizing, theme and hover of `canvas`.

pub mod axis;
pub mod canvas;
pub mod draw;
pub mod export;
pub mod pareto_chart;
pub mod pareto_csv;
pub mod pareto_draw;
pub mod pareto_series;
pub mod roofline_chart;
pub mod series;

pub use pareto_chart::ParetoChart;
pub use roofline_chart::RooflineChart;
