// SPDX-License-Identifier: GPL-2.0

//! What a subcommand prints: text as it is, JSON pretty or one object a
//! line; a closed stdout ends nothing but the output.

use serde::Serialize;
use std::io::Write;

/// Print `value` as pretty JSON followed by a newline.
pub(crate) fn json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

/// `value` as one line of JSON followed by a newline (for streams of
/// objects, one a line).
pub(crate) fn json_line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(value).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

/// Write `text` to `out` and flush it; a closed stdout is not an error
/// worth more than the exit status the subcommand already has.
pub(crate) fn emit(out: &mut dyn Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
