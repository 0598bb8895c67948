//! Page components, one per file.

pub mod hardware_picker;
pub mod precision_select;
pub mod prediction_table;
pub mod shape_form;

pub use hardware_picker::HardwarePicker;
pub use precision_select::PrecisionSelect;
pub use prediction_table::PredictionTable;
pub use shape_form::ShapeForm;
