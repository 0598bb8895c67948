//! Page components, one per file (each imported by its path: nothing is re-exported here, so no component
//! depends on this file). They read the page's state from context (`crate::state::use_app`).

pub mod advisor_tab;
pub mod benchmark_tab;
pub mod calibration_panel;
pub mod custom_hardware;
pub mod endpoint_banner;
pub mod endpoint_settings;
pub mod endpoint_status;
pub mod formats_tab;
pub mod hardware_picker;
pub mod measured_count;
pub mod memory_bar;
pub mod model_import;
pub mod not_compared;
pub mod operator_table;
pub mod pins_panel;
pub mod precision_select;
pub mod prediction_table;
pub mod results_io;
pub mod right_panel;
pub mod serving_answer;
pub mod serving_compare;
pub mod serving_form;
pub mod serving_import;
pub mod serving_launch;
pub mod serving_table;
pub mod serving_view;
pub mod shape_form;
pub mod spot_check;
pub mod step_measure;
pub mod step_view;
pub mod summary_strip;
pub mod telemetry_panel;
pub mod validation_tab;
pub mod view_switch;
pub mod workload_form;
