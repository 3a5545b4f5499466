//! Text helpers for descriptions and prompts written as indented literals.

/// Removes the indentation that a multi-line literal picks up from the code
/// around it.
///
/// Works like Python's `inspect.cleandoc`: leading whitespace is stripped
/// from the first line; the smallest indentation of the later non-blank lines
/// is removed from each of them; leading and trailing blank lines are
/// dropped, as is trailing whitespace on every line. Line endings become
/// `\n`.
///
/// ```
/// let text = toolhost_sdk::dedent(
///     "
///     Search the issue tracker.
///
///       Matches titles and bodies.
///     ",
/// );
/// assert_eq!(text, "Search the issue tracker.\n\n  Matches titles and bodies.");
/// ```
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|line| !line.is_empty())
        .map(|line| line.len() - line.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);

    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            out.push(line.trim_start());
        } else {
            // Every non-blank line has at least `indent` leading blanks (ASCII,
            // so a byte index is a char boundary); blank lines are empty.
            out.push(line.get(indent..).unwrap_or(""));
        }
    }
    let first = out.iter().position(|line| !line.is_empty());
    let last = out.iter().rposition(|line| !line.is_empty());
    match (first, last) {
        (Some(first), Some(last)) => out[first..=last].join("\n"),
        _ => String::new(),
    }
}

/// `format!` followed by [`dedent`](crate::dedent): builds a multi-line
/// string at run time from an indented literal.
///
/// The indentation is measured after formatting, so keep interpolated values
/// that contain line breaks on their own lines or indent them to match.
///
/// ```
/// let tool = "search";
/// let text = toolhost_sdk::prompt!(
///     "
///     Use `{tool}` first.
///     Then read the hits.
///     "
/// );
/// assert_eq!(text, "Use `search` first.\nThen read the hits.");
/// ```
#[macro_export]
macro_rules! prompt {
    ($($arg:tt)*) => {
        $crate::dedent(&::std::format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::dedent;

    #[test]
    fn strips_common_indentation() {
        let text = "
            First line.
              Indented more.
            Last line.
        ";
        assert_eq!(dedent(text), "First line.\n  Indented more.\nLast line.");
    }

    #[test]
    fn first_line_indentation_is_ignored() {
        let text = "Starts on the quote line.
            Continues here.
                Nested.";
        assert_eq!(
            dedent(text),
            "Starts on the quote line.\nContinues here.\n    Nested."
        );
    }

    #[test]
    fn keeps_inner_blank_lines_and_drops_outer_ones() {
        let text = "\n\n    a\n\n    b\n   \n\n";
        assert_eq!(dedent(text), "a\n\nb");
    }

    #[test]
    fn handles_crlf_tabs_and_trailing_spaces() {
        assert_eq!(dedent("\r\n\tone  \r\n\t\ttwo\r\n"), "one\n\ttwo");
    }

    #[test]
    fn single_line_and_empty() {
        assert_eq!(dedent("  plain text  "), "plain text");
        assert_eq!(dedent(""), "");
        assert_eq!(dedent(" \n \t \n"), "");
    }

    #[test]
    fn prompt_formats_then_dedents() {
        let n = 3;
        let text = crate::prompt!(
            "
            Return at most {n} results.
              Sorted by date.
            "
        );
        assert_eq!(text, "Return at most 3 results.\n  Sorted by date.");
    }
}
