//! `fetch_url`: GET a web page, following redirects.

use toolhost_sdk::http::{self, Request};
use toolhost_sdk::prelude::*;

/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;

/// What to fetch.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The absolute http(s) URL to fetch.
    url: String,
    /// Keep at most this many bytes of the body (default 1 MiB).
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 16_777_216))]
    max_bytes: usize,
}

fn default_max_bytes() -> usize {
    1024 * 1024
}

struct FetchUrl;

impl Tool for FetchUrl {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Fetch a URL with GET and return its status, final URL (after up to 5
        redirects), content type and body as text, cut at `max_bytes`, and a
        link to the page. Use it to read a page or an API response from a host
        the operator allowed; other hosts are refused. It cannot send a body or
        other methods.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let mut url = input.url;
        for _ in 0..=MAX_REDIRECTS {
            let response = Request::new("GET", url.as_str())
                .max_body_bytes(input.max_bytes)
                .send()?;
            if let (true, Some(location)) = (response.is_redirect(), response.header("location")) {
                url = http::resolve(&url, location)?;
                continue;
            }
            let content_type = response.header("content-type").map(str::to_string);
            let mut output = Output::from(json!({
                "status": response.status,
                "url": url,
                "contentType": content_type,
                "body": response.text(),
                "truncated": response.truncated,
            }));
            // The page itself, for a client that would rather read it whole.
            output.content.push(Content::ResourceLink {
                uri: url,
                name: "page".into(),
                description: Some("The fetched page, at its final URL.".into()),
                media_type: content_type,
            });
            return Ok(output);
        }
        Err(ToolError::failed(format!(
            "more than {MAX_REDIRECTS} redirects; last Location: {url}"
        )))
    }
}

export_tool!(FetchUrl);
