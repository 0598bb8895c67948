//! The roofline chart, split as criterion does: pure series shaping, backend-generic drawing, the component.

pub mod draw;
pub mod roofline_chart;
pub mod series;

pub use roofline_chart::RooflineChart;
