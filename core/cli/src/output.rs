//! Command-line output: tables (comfy-table), pretty JSON, and writing to stdout where a closed pipe
//! (`| head`) ends the output quietly instead of panicking.

use comfy_table::{ContentArrangement, Table, presets::UTF8_BORDERS_ONLY};

use crate::CliError;

/// Writes `text` to stdout at once; a closed pipe is not an error.
///
/// # Errors
/// [`CliError::Runtime`] for any other IO error.
pub fn emit(text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Runtime(e.to_string())),
        _ => Ok(()),
    }
}

/// Writes `value` as pretty JSON and a newline.
///
/// # Errors
/// [`CliError::Runtime`] when serialization or writing fails.
pub fn json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Runtime(e.to_string()))?;
    emit(&format!("{text}\n"))
}

/// Widest table printed, in columns: cells wrap to fit a 120-column terminal.
pub const MAX_WIDTH: u16 = 120;

/// An empty table with the project's style and `header`, wrapping to [`MAX_WIDTH`].
#[must_use]
pub fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(MAX_WIDTH)
        .set_header(header.to_vec());
    table
}
