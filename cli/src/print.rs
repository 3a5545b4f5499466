//! Printing for people and for scripts: tables, JSON, and text a tool wrote
//! made safe for a terminal.

use std::borrow::Cow;
use std::io::Write as _;

use serde_json::Value;
use toolhost::tool::is_hidden_control;

/// The first non-blank line of `text`, terminal-safe, cut to `max` characters.
pub(crate) fn summary(text: &str, max: usize) -> String {
    let text = terminal_safe(text);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// `text` indented by two spaces.
pub(crate) fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Print rows under a header, each column as wide as its widest cell.
pub(crate) fn print_table<const N: usize>(header: &[String; N], rows: &[[String; N]]) {
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = std::io::stdout().lock();
    for row in std::iter::once(header).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
}

/// Print `value` as pretty JSON, hidden characters escaped.
pub(crate) fn print_json(value: &Value) -> anyhow::Result<()> {
    // serde_json escapes C0 controls but prints C1 and bidirectional
    // formatting characters as they are; they can only stand in strings,
    // where `\uXXXX` means the same.
    let text = serde_json::to_string_pretty(value)?;
    println!(
        "{}",
        escape_hidden(&text, |c| format!("\\u{:04x}", u32::from(c)))
    );
    Ok(())
}

/// `text` (a tool's description or result) as it is safe to print to a
/// terminal: control and bidirectional-formatting characters but newline and
/// tab shown as `\u{…}` escapes, so a tool cannot move the cursor, recolour
/// or reorder what the user reads.
pub(crate) fn terminal_safe(text: &str) -> Cow<'_, str> {
    escape_hidden(text, |c| format!("\\u{{{:x}}}", u32::from(c)))
}

/// `text` with each hidden control character replaced by `escape` of it.
fn escape_hidden(text: &str, escape: impl Fn(char) -> String) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden_control(c) {
            shown.push_str(&escape(c));
        } else {
            shown.push(c);
        }
    }
    shown.into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_a_tool_prints_cannot_drive_the_terminal() {
        assert_eq!(terminal_safe("plain\n\ttext"), "plain\n\ttext");
        assert_eq!(
            terminal_safe("ok\u{1b}[2K\rgone \u{202e}txet"),
            "ok\\u{1b}[2K\\u{d}gone \\u{202e}txet"
        );
        assert_eq!(summary("a\u{9b}b", 70), "a\\u{9b}b");
        let json = serde_json::to_string_pretty(&json!({"r": "x\u{202e}y"})).unwrap();
        let shown = escape_hidden(&json, |c| format!("\\u{:04x}", u32::from(c)));
        assert!(shown.contains("x\\u202ey"), "{shown}");
        let back: Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["r"], "x\u{202e}y", "the escape means the same JSON");
    }
}
