//! Page components, one per file.

pub mod advisor_tab;
pub mod custom_hardware;
pub mod endpoint_status;
pub mod formats_tab;
pub mod hardware_picker;
pub mod operator_table;
pub mod pins_panel;
pub mod precision_select;
pub mod prediction_table;
pub mod results_io;
pub mod right_panel;
pub mod shape_form;
pub mod summary_strip;
pub mod workload_form;

pub use advisor_tab::AdvisorTab;
pub use custom_hardware::CustomHardware;
pub use endpoint_status::EndpointStatus;
pub use formats_tab::FormatsTab;
pub use hardware_picker::HardwarePicker;
pub use operator_table::OperatorTable;
pub use pins_panel::PinsPanel;
pub use precision_select::PrecisionSelect;
pub use prediction_table::PredictionTable;
pub use results_io::ResultsIo;
pub use right_panel::RightPanel;
pub use shape_form::ShapeForm;
pub use summary_strip::SummaryStrip;
pub use workload_form::WorkloadForm;
