//! How text a tool or a client gave appears in a message: quoted as `{:?}`
//! quotes it, and cut, so a refusal never grows with the input it refuses.

/// The most characters of given text a message quotes.
pub const SHOWN_CHARS: usize = 200;

/// `text` in double quotes with its special characters escaped, as `{:?}`
/// shows it, cut to [`SHOWN_CHARS`] characters (`…` after the quote marks
/// a cut). Takes time in the characters shown, not in `text`.
pub fn quoted(text: &str) -> String {
    let mut chars = text.char_indices();
    let end = chars.nth(SHOWN_CHARS).map_or(text.len(), |(at, _)| at);
    let more = if end < text.len() { "…" } else { "" };
    format!("{:?}{more}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_quoted_as_debug_and_long_text_is_cut() {
        assert_eq!(quoted("a\"b\u{1}"), format!("{:?}", "a\"b\u{1}"));
        let long = "é".repeat(1 << 20);
        let shown = quoted(&long);
        assert_eq!(shown, format!("{:?}…", "é".repeat(SHOWN_CHARS)));
        let controls = "\u{1}".repeat(1 << 20);
        assert!(quoted(&controls).len() < 8 * SHOWN_CHARS);
    }
}
