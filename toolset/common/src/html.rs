//! HTML to readable text, and which content types `web_fetch` shows as text.
//!
//! Not a full HTML parser: a scanner that drops `<script>`, `<style>` and
//! comments, turns block tags into line breaks, drops the other tags, decodes
//! the common character references and collapses whitespace (except inside
//! `<pre>`).

/// Tags after which text starts on a new paragraph (a blank line).
const PARAGRAPH_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "dl",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// Tags after which text starts on a new line.
const LINE_TAGS: &[&str] = &[
    "body",
    "caption",
    "dd",
    "div",
    "dt",
    "figcaption",
    "html",
    "legend",
    "li",
    "option",
    "summary",
    "tbody",
    "tfoot",
    "thead",
    "tr",
];

/// Tags separated from their neighbours by a space.
const SPACE_TAGS: &[&str] = &["td", "th", "img", "input", "button", "label", "select"];

/// Tags whose content is dropped whole.
const SKIPPED_TAGS: &[&str] = &["script", "style", "noscript", "template", "svg"];

/// A page's readable text and title.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The `<title>`, whitespace collapsed; `None` when missing or empty.
    pub title: Option<String>,
    /// The text, one block per line, at most one blank line in a row.
    pub text: String,
}

/// Extracts the readable text and the title of an HTML document.
pub fn html_to_text(html: &str) -> Page {
    // ASCII lowercasing keeps every byte offset, so `lower` indexes `html`.
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut out = Writer::default();
    let mut title = None;
    let mut pos = 0;
    while pos < html.len() {
        let Some(lt) = memchr::memchr(b'<', &bytes[pos..]).map(|i| pos + i) else {
            out.text(&decode_entities(&html[pos..]));
            break;
        };
        out.text(&decode_entities(&html[pos..lt]));
        let rest = &lower[lt..];
        if rest.starts_with("<!--") {
            pos = find_after(&lower, lt + 4, "-->");
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            pos = find_after(&lower, lt, ">");
            continue;
        }
        let closing = rest.as_bytes().get(1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        let name_len = lower.as_bytes()[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !lower.as_bytes()[name_start].is_ascii_alphabetic() {
            // Not a tag: a literal `<`.
            out.text("<");
            pos = lt + 1;
            continue;
        }
        let name = &lower[name_start..name_start + name_len];
        let end = tag_end(bytes, name_start + name_len);
        let self_closing = end >= 2 && bytes[end - 2] == b'/';
        pos = end;
        if !closing && !self_closing && (SKIPPED_TAGS.contains(&name) || name == "title") {
            let close = format!("</{name}");
            let content_end = lower[end..].find(&close).map_or(html.len(), |i| end + i);
            if name == "title" && title.is_none() {
                let text = collapse_spaces(&decode_entities(&html[end..content_end]));
                title = Some(text).filter(|t| !t.is_empty());
            }
            pos = if content_end < html.len() {
                tag_end(bytes, content_end + close.len())
            } else {
                html.len()
            };
            continue;
        }
        if name == "br" {
            out.line_break();
        } else if PARAGRAPH_TAGS.contains(&name) {
            out.block(2);
        } else if LINE_TAGS.contains(&name) {
            out.block(1);
        } else if SPACE_TAGS.contains(&name) {
            out.space();
        }
        if name == "pre" && !self_closing {
            out.pre_depth = if closing {
                out.pre_depth.saturating_sub(1)
            } else {
                out.pre_depth + 1
            };
        }
    }
    Page {
        title,
        text: out.finish(),
    }
}

/// The offset just past the first `needle` at or after `from`, or the end.
fn find_after(haystack: &str, from: usize, needle: &str) -> usize {
    haystack[from.min(haystack.len())..]
        .find(needle)
        .map_or(haystack.len(), |i| from + i + needle.len())
}

/// The offset just past the `>` that ends a tag whose attributes start at
/// `from`, skipping quoted attribute values; the end of input if none.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return i + 1,
            _ => {}
        }
    }
    bytes.len()
}

/// Builds the text: whitespace collapsed outside `<pre>`, block breaks as
/// newlines.
#[derive(Default)]
struct Writer {
    out: String,
    pre_depth: usize,
}

impl Writer {
    fn text(&mut self, text: &str) {
        if self.pre_depth > 0 {
            self.out.push_str(&text.replace("\r\n", "\n"));
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space();
            } else {
                self.out.push(c);
            }
        }
    }

    fn space(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with([' ', '\n']) {
            self.out.push(' ');
        }
    }

    /// Ends the current line; with `newlines` 2, leaves a blank line.
    fn block(&mut self, newlines: usize) {
        self.trim_line_end();
        if self.out.is_empty() {
            return;
        }
        let have = self.out.len() - self.out.trim_end_matches('\n').len();
        for _ in have..newlines {
            self.out.push('\n');
        }
    }

    /// A `<br>`: always a new line.
    fn line_break(&mut self) {
        self.trim_line_end();
        self.out.push('\n');
    }

    fn trim_line_end(&mut self) {
        let kept = self.out.trim_end_matches([' ', '\t']).len();
        self.out.truncate(kept);
    }

    /// Trailing spaces trimmed on every line, at most one blank line in a row.
    fn finish(self) -> String {
        let mut text = String::with_capacity(self.out.len());
        let mut blank_lines = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank_lines += 1;
                if blank_lines > 1 {
                    continue;
                }
            } else {
                blank_lines = 0;
            }
            text.push_str(line);
            text.push('\n');
        }
        text.trim_matches('\n').to_string()
    }
}

/// Whitespace runs as one space, trimmed.
fn collapse_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Decodes character references: `&amp; &lt; &gt; &quot; &apos; &#39;
/// &nbsp;` (as a plain space), a few typographic names, and numeric
/// `&#NNN;` / `&#xHH;`. Unknown or unterminated references are kept as they
/// are.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&semi| semi > 0 && semi <= 32)
            .and_then(|semi| Some((decode_entity(&rest[1..=semi])?, semi + 2)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One reference's name (between `&` and `;`) to its character.
fn decode_entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return Some(
            char::from_u32(code)
                .filter(|&c| c != '\0')
                .unwrap_or('\u{fffd}'),
        );
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "hellip" => '…',
        "mdash" => '—',
        "ndash" => '–',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "deg" => '°',
        "times" => '×',
        "euro" => '€',
        _ => return None,
    })
}

/// How `web_fetch` shows a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML: extract the text with [`html_to_text`].
    Html,
    /// Text as it is (JSON, XML, plain text, source code, …).
    Text,
}

/// How to show a body of this `Content-Type` (parameters ignored), or
/// `None` when it is not text (images, PDF, archives, octet streams). With
/// no content type, a body that looks like text is shown (as HTML when it
/// starts like an HTML document).
pub fn kind_of(content_type: Option<&str>, body: &[u8]) -> Option<Kind> {
    let Some(content_type) = content_type else {
        if crate::nul_in_prefix(body) {
            return None;
        }
        let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
        let head = head.trim_start();
        let html = head.starts_with("<!doctype html") || head.starts_with("<html");
        return Some(if html { Kind::Html } else { Kind::Text });
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-ndjson"
        | "application/x-sh" => Some(Kind::Text),
        other if other.starts_with("text/") => Some(Kind::Text),
        other if other.ends_with("+json") || other.ends_with("+xml") => Some(Kind::Text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_text_and_title() {
        let html = r#"<!DOCTYPE html>
<html><head>
  <title> The  &amp; Page </title>
  <meta charset="utf-8"><style>body { color: red }</style>
  <script>var x = "<p>not text</p>";</script>
</head>
<body>
  <!-- a comment <p>hidden</p> -->
  <h1>Heading</h1>
  <p>First   paragraph,
     with <a href="/x?a=1&amp;b=2" title="a > b">a link</a>.</p>
  <div>Line one<br>Line two<br/></div>
  <ul><li>one</li><li>two</li></ul>
  <SCRIPT type="text/javascript">alert(1)</SCRIPT>
  <table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
  <p>5 &lt; 6 &gt; 4 &quot;q&quot; &#39;s&#39; &#65;&#x42; x&nbsp;y</p>
</body></html>"#;
        let page = html_to_text(html);
        assert_eq!(page.title.as_deref(), Some("The & Page"));
        assert_eq!(
            page.text,
            "Heading\n\nFirst paragraph, with a link.\n\nLine one\nLine two\n\none\ntwo\n\n\
             a b\nc d\n\n5 < 6 > 4 \"q\" 's' AB x y"
        );
    }

    #[test]
    fn keeps_pre_formatting() {
        let page = html_to_text(
            "<p>Code:</p><pre>fn main() {\n    println!(\"&lt;hi&gt;\");\n}</pre><p>after   this</p>",
        );
        assert_eq!(
            page.text,
            "Code:\n\nfn main() {\n    println!(\"<hi>\");\n}\n\nafter this"
        );
        assert_eq!(page.title, None);
    }

    #[test]
    fn survives_broken_markup() {
        assert_eq!(
            html_to_text("a < b and c<3 <p>d").text,
            "a < b and c<3\n\nd"
        );
        assert_eq!(html_to_text("<p>open <!-- never closed").text, "open");
        assert_eq!(html_to_text("<script>never closed").text, "");
        assert_eq!(html_to_text("x<div class='a>b'>y</div").text, "x\ny");
        assert_eq!(html_to_text("<title></title>body").title, None);
        assert_eq!(html_to_text("").text, "");
        assert_eq!(html_to_text("<br><br><br><br>x").text, "x");
        assert_eq!(html_to_text("é<p>ü</p>").text, "é\n\nü");
    }

    #[test]
    fn decodes_entities() {
        assert_eq!(decode_entities("a &amp; b"), "a & b");
        assert_eq!(decode_entities("&lt;&gt;&quot;&#39;&apos;"), "<>\"''");
        assert_eq!(decode_entities("&#233;&#xE9;&#XE9;"), "ééé");
        assert_eq!(decode_entities("&#0;&#x110000;"), "\u{fffd}\u{fffd}");
        assert_eq!(
            decode_entities("AT&T; &unknown; & &amp"),
            "AT&T; &unknown; & &amp"
        );
        assert_eq!(decode_entities("&mdash;&hellip;"), "—…");
    }

    #[test]
    fn classifies_content_types() {
        let text = Some(Kind::Text);
        assert_eq!(
            kind_of(Some("text/html; charset=utf-8"), b""),
            Some(Kind::Html)
        );
        assert_eq!(
            kind_of(Some("application/xhtml+xml"), b""),
            Some(Kind::Html)
        );
        assert_eq!(kind_of(Some("text/plain"), b""), text);
        assert_eq!(kind_of(Some("Application/JSON"), b""), text);
        assert_eq!(kind_of(Some("application/xml"), b""), text);
        assert_eq!(kind_of(Some("application/ld+json"), b""), text);
        assert_eq!(kind_of(Some("application/atom+xml"), b""), text);
        assert_eq!(kind_of(Some("image/png"), b""), None);
        assert_eq!(kind_of(Some("application/pdf"), b""), None);
        assert_eq!(kind_of(Some("application/octet-stream"), b""), None);
        assert_eq!(kind_of(None, b"  <!DOCTYPE html><p>x"), Some(Kind::Html));
        assert_eq!(kind_of(None, b"plain"), text);
        assert_eq!(kind_of(None, b"\x89PNG\0\0"), None);
    }
}
