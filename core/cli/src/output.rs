//! Command-line output: tables (comfy-table), pretty JSON, and writing to stdout where a closed pipe
//! (`| head`) ends the output quietly instead of panicking. Everything written goes through [`printable`]:
//! names from a model or spec file never reach the terminal as escape sequences.

use std::borrow::Cow;

use comfy_table::{ContentArrangement, Table, presets::UTF8_BORDERS_ONLY};

use crate::CliError;

/// `text` without its control characters but newline and tab: an escape sequence (ESC, the C1 CSI, BEL, a
/// carriage return that overwrites the line) from a name read out of a file prints as plain text instead of
/// acting on the terminal.
#[must_use]
pub fn printable(text: &str) -> Cow<'_, str> {
    let keep = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(keep) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().filter(|&c| keep(c)).collect())
    }
}

/// Writes `text` ([`printable`]) to stdout at once; a closed pipe is not an error.
///
/// # Errors
/// [`CliError::Runtime`] for any other IO error.
pub fn emit(text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(printable(text).as_bytes()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_but_newline_and_tab_are_dropped() {
        let check = |text: &str, expected: &str| assert_eq!(printable(text), expected, "{text:?}");
        check("plain\ttext\n", "plain\ttext\n");
        // Clear screen, retitle the window (ESC ] … BEL), a C1 CSI colour, a carriage return, a DEL.
        check(
            "\u{1b}[2J\u{1b}]0;pwned\u{7}model\u{9b}31m\r\u{7f}",
            "[2J]0;pwnedmodel31m",
        );
        assert!(matches!(printable("µs ✓"), Cow::Borrowed("µs ✓")));
    }
}
