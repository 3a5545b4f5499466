//! Resources components offer (the contract's optional `resources`
//! export): what a resource and a template are, the checks of what a
//! component lists when it loads, and how an address finds its template.
//! Reading one is [`Host::read_resource`](crate::host::Host::read_resource).

use std::collections::BTreeSet;

use percent_encoding::percent_decode_str;
use regex::Regex;
use serde::Serialize;

use crate::bindings;
use crate::tool;

/// The most resources one component may list.
pub const MAX_RESOURCES: usize = 256;
/// The most resource templates one component may list.
pub const MAX_RESOURCE_TEMPLATES: usize = 32;
/// The longest address or template, in bytes.
pub const MAX_URI_BYTES: usize = 2048;
/// The longest media type, in bytes.
pub const MAX_MEDIA_TYPE_BYTES: usize = 255;
/// The most expressions one template may hold.
pub const MAX_TEMPLATE_EXPRESSIONS: usize = 16;
/// The most contents one read may return.
pub const MAX_READ_CONTENTS: usize = 256;

/// The values of a template's expressions an address matched, in the
/// template's order: `(name, value)`.
pub type TemplateValues = Vec<(String, String)>;

/// A resource at a fixed address, as checked at load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpec {
    /// Its address, unique on the host.
    pub uri: String,
    /// About it, for people and the model.
    #[serde(flatten)]
    pub about: About,
}

/// A family of resources whose addresses follow a template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateSpec {
    /// The template, as the component wrote it; unique on the host.
    pub uri_template: String,
    /// About its resources.
    #[serde(flatten)]
    pub about: About,
    /// The template, parsed.
    #[serde(skip)]
    pub template: UriTemplate,
}

/// What a resource or a template says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct About {
    /// A short name.
    pub name: String,
    /// A title for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

/// The contents of one resource, as a read returned them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// Its address.
    pub uri: String,
    /// Its media type, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// What it holds.
    pub data: ResourceData,
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceData {
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// No enabled tool offers the address, or the component found nothing
    /// there.
    #[error("no resource at `{uri}`{}", .tool.as_ref().map(|t| format!(" (tool `{t}` found none)")).unwrap_or_default())]
    NotFound {
        /// The address asked for (cut when long).
        uri: String,
        /// The tool whose component was asked, when one was.
        tool: Option<String>,
    },
    /// The component refused, failed or went past a limit.
    #[error("reading `{uri}` (tool `{tool}`) failed: {reason}")]
    Failed {
        /// The address.
        uri: String,
        /// The tool whose component offers it.
        tool: String,
        /// What happened.
        reason: String,
    },
}

impl ResourceError {
    /// A stable code for the surfaces: `resource_not_found` or
    /// `resource_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "resource_not_found",
            Self::Failed { .. } => "resource_failed",
        }
    }
}

/// An RFC 6570 template of simple `{name}` expressions between literal
/// text, two expressions never side by side.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    parts: Vec<Part>,
    /// The template as a regular expression, one lazy group an expression:
    /// matched in time linear in the address (`regex` never backtracks).
    pattern: Regex,
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for UriTemplate {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(String),
}

impl UriTemplate {
    /// Parse `text`, saying what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_URI_BYTES {
            return Err(format!(
                "it is {} bytes; at most {MAX_URI_BYTES} are allowed",
                text.len()
            ));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(0) if rest.starts_with('{') => {
                    let end = rest
                        .find('}')
                        .ok_or("it has a `{` that no `}` closes".to_string())?;
                    let name = &rest[1..end];
                    if !is_variable_name(name) {
                        return Err(format!(
                            "`{{{name}}}` is not a simple expression: write `{{name}}` with 1-64 \
                             characters of A-Z, a-z, 0-9 and `_` (operators such as `+`, `/` or \
                             `?` and lists are not supported)"
                        ));
                    }
                    if matches!(parts.last(), Some(Part::Expression(_))) {
                        return Err(format!(
                            "`{{{name}}}` follows another expression: put literal text between \
                             two expressions"
                        ));
                    }
                    if parts
                        .iter()
                        .any(|p| matches!(p, Part::Expression(n) if n == name))
                    {
                        return Err(format!("it uses `{{{name}}}` twice"));
                    }
                    parts.push(Part::Expression(name.to_string()));
                    rest = &rest[end + 1..];
                }
                Some(0) => return Err("it has a `}` that no `{` opens".into()),
                found => {
                    let end = found.unwrap_or(rest.len());
                    parts.push(Part::Literal(rest[..end].to_string()));
                    rest = &rest[end..];
                }
            }
        }
        let expressions = parts
            .iter()
            .filter(|p| matches!(p, Part::Expression(_)))
            .count();
        if expressions > MAX_TEMPLATE_EXPRESSIONS {
            return Err(format!(
                "it holds {expressions} expressions; at most {MAX_TEMPLATE_EXPRESSIONS} are \
                 allowed"
            ));
        }
        let pattern = Self::pattern(&parts)?;
        Ok(Self { parts, pattern })
    }

    /// The regular expression `parts` make: literals as they are, each
    /// expression one or more characters other than `/`, `?` and `#`,
    /// as few as let the rest match (the earliest split, left to right).
    fn pattern(parts: &[Part]) -> Result<Regex, String> {
        let mut pattern = String::from("^");
        for part in parts {
            match part {
                Part::Literal(text) => pattern.push_str(&regex::escape(text)),
                Part::Expression(_) => pattern.push_str("([^/?#]+?)"),
            }
        }
        pattern.push('$');
        Regex::new(&pattern).map_err(|e| format!("it cannot be matched: {e}"))
    }

    /// Whether its scheme is literal text (no expression before the `:`
    /// that ends it): a template cannot claim every scheme.
    fn has_fixed_scheme(&self) -> bool {
        matches!(self.parts.first(), Some(Part::Literal(text)) if text.contains(':'))
    }

    /// The template with each expression replaced by `x`: checked as an
    /// address is.
    fn example(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Literal(text) => text.as_str(),
                Part::Expression(_) => "x",
            })
            .collect()
    }

    /// The values of the expressions when `uri` matches, percent-decoded,
    /// in the template's order. An expression matches one or more
    /// characters other than `/`, `?` and `#`; of the ways an address can
    /// split, the one giving the earliest expressions the fewest characters
    /// is taken, and each of its values must decode to UTF-8. An address
    /// longer than [`MAX_URI_BYTES`] matches nothing, and matching takes
    /// time linear in the address.
    pub fn matches(&self, uri: &str) -> Option<TemplateValues> {
        if uri.len() > MAX_URI_BYTES {
            return None;
        }
        let captures = self.pattern.captures(uri)?;
        let names = self.parts.iter().filter_map(|part| match part {
            Part::Expression(name) => Some(name),
            Part::Literal(_) => None,
        });
        names
            .zip(captures.iter().skip(1))
            .map(|(name, value)| {
                let value = percent_decode_str(value?.as_str()).decode_utf8().ok()?;
                Some((name.clone(), value.into_owned()))
            })
            .collect()
    }
}

fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= tool::MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What is wrong with `uri` as an address: an absolute URI (`scheme:…`)
/// of at most [`MAX_URI_BYTES`] with no spaces or control characters.
pub fn uri_problem(uri: &str) -> Option<String> {
    if uri.len() > MAX_URI_BYTES {
        return Some(format!(
            "is {} bytes; at most {MAX_URI_BYTES} are allowed",
            uri.len()
        ));
    }
    if let Some(c) = uri.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!(
            "holds U+{:04X}; spaces and control characters are not allowed",
            u32::from(c)
        ));
    }
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme);
    let valid = scheme.is_some_and(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    (!valid).then(|| "is not an absolute URI: it must start with a scheme such as `file:`".into())
}

/// What is wrong with a media type: at most [`MAX_MEDIA_TYPE_BYTES`],
/// with no spaces or control characters.
fn media_type_problem(media_type: &str) -> Option<String> {
    if media_type.is_empty() || media_type.len() > MAX_MEDIA_TYPE_BYTES {
        return Some(format!("must be 1-{MAX_MEDIA_TYPE_BYTES} bytes"));
    }
    media_type
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
        .then(|| "holds a space or a control character".into())
}

/// Check what a component listed at load: its resources and templates.
pub(crate) fn check(
    resources: Vec<bindings::ResourceInfo>,
    templates: Vec<bindings::ResourceTemplate>,
) -> Result<(Vec<ResourceSpec>, Vec<ResourceTemplateSpec>), String> {
    if resources.len() > MAX_RESOURCES {
        return Err(format!(
            "offers {} resources; at most {MAX_RESOURCES} are allowed",
            resources.len()
        ));
    }
    if templates.len() > MAX_RESOURCE_TEMPLATES {
        return Err(format!(
            "offers {} resource templates; at most {MAX_RESOURCE_TEMPLATES} are allowed",
            templates.len()
        ));
    }
    let mut uris = BTreeSet::new();
    let resources = resources
        .into_iter()
        .map(|r| {
            let what = format!("resource {}", shown(&r.uri));
            if let Some(problem) = uri_problem(&r.uri) {
                return Err(format!("{what}: its address {problem}"));
            }
            if !uris.insert(r.uri.clone()) {
                return Err(format!("offers the {what} twice"));
            }
            let about = check_about(&what, r.name, r.title, r.description, r.media_type)?;
            Ok(ResourceSpec { uri: r.uri, about })
        })
        .collect::<Result<_, String>>()?;
    let mut seen = BTreeSet::new();
    let templates = templates
        .into_iter()
        .map(|t| {
            let what = format!("resource template {}", shown(&t.uri_template));
            if !seen.insert(t.uri_template.clone()) {
                return Err(format!("offers the {what} twice"));
            }
            let template = UriTemplate::parse(&t.uri_template)
                .map_err(|problem| format!("{what}: {problem}"))?;
            if let Some(problem) = uri_problem(&template.example()) {
                return Err(format!("{what}: it {problem}"));
            }
            if !template.has_fixed_scheme() {
                return Err(format!(
                    "{what}: its scheme must be literal text, not an expression"
                ));
            }
            let about = check_about(&what, t.name, t.title, t.description, t.media_type)?;
            Ok(ResourceTemplateSpec {
                uri_template: t.uri_template,
                about,
                template,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok((resources, templates))
}

fn check_about(
    what: &str,
    name: String,
    title: Option<String>,
    description: Option<String>,
    media_type: Option<String>,
) -> Result<About, String> {
    if name.trim().is_empty() {
        return Err(format!("{what}: its name is empty"));
    }
    for (field, text) in [
        ("name", Some(&name)),
        ("title", title.as_ref()),
        ("description", description.as_ref()),
    ] {
        if let Some(problem) = text.and_then(|t| tool::text_problem(t)) {
            return Err(format!("{what}: its {field} {problem}"));
        }
    }
    if let Some(problem) = media_type.as_deref().and_then(media_type_problem) {
        return Err(format!("{what}: its media type {problem}"));
    }
    Ok(About {
        name,
        title,
        description,
        media_type,
    })
}

/// `uri` quoted for an error message, cut when long.
pub fn shown(uri: &str) -> String {
    const SHOWN_CHARS: usize = 200;
    let cut: String = uri.chars().take(SHOWN_CHARS).collect();
    let more = if cut.len() < uri.len() { "…" } else { "" };
    format!("`{}{more}`", cut.escape_debug())
}

/// Check what a read returned and convert it; `max_bytes` bounds its size.
pub(crate) fn check_contents(
    raw: Vec<bindings::ResourceContents>,
    max_bytes: usize,
) -> Result<Vec<ResourceContents>, String> {
    if raw.len() > MAX_READ_CONTENTS {
        return Err(format!(
            "it returned {} contents; at most {MAX_READ_CONTENTS} are allowed",
            raw.len()
        ));
    }
    let size: usize = raw
        .iter()
        .map(|c| {
            let data = match &c.data {
                bindings::ResourceData::Text(text) => text.len(),
                bindings::ResourceData::Blob(bytes) => bytes.len(),
            };
            c.uri.len() + c.media_type.as_ref().map_or(0, String::len) + data
        })
        .sum();
    if size > max_bytes {
        return Err(format!(
            "output cap hit: the contents are {size} bytes; at most {max_bytes} are allowed \
             (max_output_bytes)"
        ));
    }
    raw.into_iter()
        .map(|c| {
            if let Some(problem) = uri_problem(&c.uri) {
                return Err(format!(
                    "a content's address {}: it {problem}",
                    shown(&c.uri)
                ));
            }
            if let Some(problem) = c.media_type.as_deref().and_then(media_type_problem) {
                return Err(format!("the media type of {} {problem}", shown(&c.uri)));
            }
            Ok(ResourceContents {
                uri: c.uri,
                media_type: c.media_type,
                data: match c.data {
                    bindings::ResourceData::Text(text) => ResourceData::Text(text),
                    bindings::ResourceData::Blob(bytes) => ResourceData::Blob(bytes),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn templates_match_one_segment_per_expression() {
        assert_eq!(
            values("test://template/{id}/data", "test://template/123/data"),
            pairs(&[("id", "123")])
        );
        assert_eq!(
            values("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            values("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            values("notes://{folder}/{id}", "notes://work/a%20b"),
            pairs(&[("folder", "work"), ("id", "a b")])
        );
        // An expression backs off to let the literal after it match.
        assert_eq!(
            values("x://{a}-{b}-end", "x://1-2-3-end"),
            pairs(&[("a", "1"), ("b", "2-3")])
        );
        assert_eq!(values("x://{a}", "x://%FF"), None, "not UTF-8");
        assert_eq!(values("x://{a}", "y://b"), None);
        assert_eq!(values("x://fixed", "x://fixed"), pairs(&[]));
    }

    #[test]
    fn matching_is_linear_and_long_addresses_match_nothing() {
        // Every split of the address is a candidate for a backtracking
        // matcher: 16 expressions over 2 KiB of dashes (the time it takes
        // is held by the adversarial suite's deadline checks).
        let template: String = (0..MAX_TEMPLATE_EXPRESSIONS)
            .map(|i| format!("{{v{i}}}-"))
            .collect();
        let template = UriTemplate::parse(&format!("x:{template}end")).unwrap();
        let dashes = "-".repeat(MAX_URI_BYTES - 8);
        let uri = format!("x:{dashes}!");
        assert_eq!(template.matches(&uri), None);
        assert_eq!(
            template.matches(&format!("x:{dashes}end")).map(|v| v.len()),
            Some(MAX_TEMPLATE_EXPRESSIONS)
        );
        let one = UriTemplate::parse("x:{a}").unwrap();
        assert_eq!(
            one.matches(&format!("x:{}", "a".repeat(MAX_URI_BYTES))),
            None
        );
        let err = UriTemplate::parse(&format!("x:{}", "a".repeat(MAX_URI_BYTES))).unwrap_err();
        assert!(err.contains("at most 2048"), "{err}");
    }

    #[test]
    fn templates_are_simple_expressions_apart() {
        let err = |t| UriTemplate::parse(t).unwrap_err();
        assert!(err("x://{+path}").contains("not a simple expression"));
        assert!(err("x://{a,b}").contains("not a simple expression"));
        assert!(err("x://{a}{b}").contains("follows another expression"));
        assert!(err("x://{a}/{a}").contains("twice"));
        assert!(err("x://{a").contains("no `}` closes"));
        assert!(err("x://a}").contains("no `{` opens"));
        let many: String = (0..=MAX_TEMPLATE_EXPRESSIONS)
            .map(|i| format!("{{v{i}}}/"))
            .collect();
        assert!(err(&format!("x://{many}")).contains("at most 16"));
    }

    #[test]
    fn listings_are_checked() {
        let resource = |uri: &str| bindings::ResourceInfo {
            uri: uri.into(),
            name: "n".into(),
            title: None,
            description: None,
            media_type: Some("text/plain".into()),
        };
        let template = |t: &str| bindings::ResourceTemplate {
            uri_template: t.into(),
            name: "n".into(),
            title: None,
            description: None,
            media_type: None,
        };
        let (listed, templates) = check(
            vec![resource("test://static-text")],
            vec![template("test://template/{id}/data")],
        )
        .unwrap();
        assert_eq!(listed[0].uri, "test://static-text");
        assert_eq!(
            templates[0].template.matches("test://template/7/data"),
            pairs(&[("id", "7")])
        );
        let err = |r, t| check(r, t).unwrap_err();
        assert!(err(vec![resource("no scheme")], vec![]).contains("holds U+0020"));
        assert!(err(vec![resource("relative/path")], vec![]).contains("not an absolute URI"));
        assert!(err(vec![resource("a:b"), resource("a:b")], vec![]).contains("twice"));
        assert!(err(vec![], vec![template("{scheme}://x")]).contains("scheme must be literal"));
        assert!(err(vec![], vec![template("{path}")]).contains("not an absolute URI"));
        assert!(err(vec![], vec![template("x://{a}{b}")]).contains("`x://{a}{b}`"));
        let mut hidden = resource("a:b");
        hidden.description = Some("\u{1b}[2J".into());
        assert!(err(vec![hidden], vec![]).contains("its description holds"));
        let mut spaced = resource("a:b");
        spaced.media_type = Some("text/ plain".into());
        assert!(err(vec![spaced], vec![]).contains("media type"));
        let long = format!("a:{}", "b".repeat(MAX_URI_BYTES));
        assert!(err(vec![resource(&long)], vec![]).contains("at most 2048"));
        let many = (0..=MAX_RESOURCES)
            .map(|i| resource(&format!("a:{i}")))
            .collect();
        assert!(err(many, vec![]).contains("at most 256"));
    }

    #[test]
    fn contents_are_bounded() {
        let text = |uri: &str, text: &str| bindings::ResourceContents {
            uri: uri.into(),
            media_type: Some("text/plain".into()),
            data: bindings::ResourceData::Text(text.into()),
        };
        let ok = check_contents(vec![text("a:b", "hello")], 100).unwrap();
        assert_eq!(ok[0].data, ResourceData::Text("hello".into()));
        let big = check_contents(vec![text("a:b", &"x".repeat(100))], 100).unwrap_err();
        assert!(big.contains("output cap hit"), "{big}");
        let bad = check_contents(vec![text("nope", "x")], 100).unwrap_err();
        assert!(bad.contains("not an absolute URI"), "{bad}");
    }
}
