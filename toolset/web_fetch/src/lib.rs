//! `web_fetch`: GET a web page and return it as readable text.

use toolhost_sdk::http::{self, ErrorKind, Request};
use toolhost_sdk::prelude::*;
use toolset_common::html::{self, Kind};
use toolset_common::{check_range, cut_bytes};

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;
/// The most text one call may ask for. A result carries the text twice (the
/// JSON block and the structured result): 400 kB keeps the largest under the
/// host's default 1 MiB output cap.
const MAX_TEXT_BYTES: usize = 400_000;
/// The body read for a text cap: HTML holds much more markup than text.
const BODY_BYTES_PER_TEXT_BYTE: usize = 4;
/// The most body bytes ever read.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What to fetch.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The absolute `http://` or `https://` URL to fetch.
    url: String,
    /// The most bytes of text to return (default 100000, at most 400000).
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 400000))]
    max_bytes: usize,
}

fn default_max_bytes() -> usize {
    100_000
}

/// What `web_fetch` returns.
#[derive(Serialize, JsonSchema)]
struct FetchOutput {
    /// The final URL, after redirects.
    url: String,
    /// The HTTP status (2xx).
    status: u16,
    /// The response's `Content-Type`, when it sent one.
    content_type: Option<String>,
    /// The HTML page's `<title>`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    /// The page's readable text (HTML reduced to text; other text types as
    /// they are).
    text: String,
    /// Whether the text was cut at `max_bytes` (or the body at its read cap).
    truncated: bool,
}

struct WebFetch;

impl Tool for WebFetch {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Fetch a web page or text document with GET and return it as readable
        text: HTML is reduced to its text (scripts, styles and markup dropped, the
        `<title>` returned apart), while JSON, XML and other text types come back
        as they are. `url` is the absolute http(s) URL (up to 5 redirects are
        followed; the final URL is returned) and `max_bytes` caps the returned
        text (default 100000, at most 400000; `truncated` says it was cut). Only
        hosts the operator allowed can be reached; images, PDFs and other binary
        content cannot be shown, and it does not run JavaScript, log in or submit
        forms.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<FetchOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let max_bytes = check_range("max_bytes", input.max_bytes, 1, MAX_TEXT_BYTES)?;
        let scheme = input
            .url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase());
        if !matches!(scheme.as_deref(), Some("http" | "https")) {
            return Err(ToolError::invalid_input(format!(
                "{:?} is not an absolute http:// or https:// URL",
                input.url
            )));
        }
        let body_cap = max_bytes
            .saturating_mul(BODY_BYTES_PER_TEXT_BYTE)
            .clamp(256 * 1024, MAX_BODY_BYTES);

        let mut url = input.url;
        for _ in 0..=MAX_REDIRECTS {
            let response = Request::new("GET", url.as_str())
                .max_body_bytes(body_cap)
                .send()
                .map_err(|err| fetch_error(&url, err))?;
            if let (true, Some(location)) = (response.is_redirect(), response.header("location")) {
                url = http::resolve(&url, location).map_err(|err| {
                    ToolError::failed(format!("{url} redirected to an unusable location: {err}"))
                })?;
                continue;
            }
            if !response.is_success() {
                return Err(ToolError::failed(format!(
                    "{url} returned HTTP status {}",
                    response.status
                )));
            }
            let content_type = response.header("content-type").map(str::to_string);
            let kind = html::kind_of(content_type.as_deref(), &response.body).ok_or_else(|| {
                ToolError::failed(format!(
                    "{url} returned {}, which web_fetch cannot show as text",
                    content_type
                        .as_deref()
                        .unwrap_or("a binary body with no content type")
                ))
            })?;
            let body = String::from_utf8_lossy(&response.body);
            let (title, text) = match kind {
                Kind::Html => {
                    let page = html::html_to_text(&body);
                    (page.title, page.text)
                }
                Kind::Text => (None, body.into_owned()),
            };
            let (text, cut) = cut_bytes(&text, max_bytes);
            let output = FetchOutput {
                url,
                status: response.status,
                content_type,
                title,
                text: text.to_string(),
                truncated: cut || response.truncated,
            };
            return Ok(serde_json::to_value(output)?.into());
        }
        Err(ToolError::failed(format!(
            "more than {MAX_REDIRECTS} redirects; the last one led to {url}"
        )))
    }
}

/// A failed request as a [`ToolError`]: a refusal names the host and how
/// the operator grants it.
fn fetch_error(url: &str, err: http::Error) -> ToolError {
    match err.kind() {
        ErrorKind::Denied => ToolError::failed(format!(
            "{} is not in the toolset's HTTP allow-list, so {url} cannot be fetched; the \
             operator grants hosts with `http = [...]` in the `[toolset]` table of \
             toolhost.toml ({err})",
            host_of(url)
        )),
        ErrorKind::InvalidRequest => ToolError::invalid_input(err),
        _ => err.into(),
    }
}

/// The host (with its port, if any) of an absolute URL.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

export_tool!(WebFetch);
