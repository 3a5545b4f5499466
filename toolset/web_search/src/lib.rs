//! `web_search`: ask the search engine the operator configured and return
//! its hits as search-result blocks.
//!
//! The host gives the component the engine's kind and base URL as
//! environment variables (from `[toolset] web_search = { provider, url }`)
//! and an HTTP grant of that origin only. SearXNG's JSON API is asked:
//! `GET <url>/search?q=…&format=json`, whose `results[]` carry `url`,
//! `title` and `content`; it has no count parameter, so hits are cut here.

use toolhost_sdk::http::{ErrorKind, Request};
use toolhost_sdk::prelude::*;
use toolset_common::{check_range, cut_bytes};

/// The variable naming the engine's kind.
const PROVIDER_VAR: &str = "TOOLHOST_WEB_SEARCH_PROVIDER";
/// The variable holding the engine's base URL.
const URL_VAR: &str = "TOOLHOST_WEB_SEARCH_URL";
/// The most hits one call may ask for.
const MAX_RESULTS: usize = 20;
/// The longest query, in bytes.
const MAX_QUERY_BYTES: usize = 2_000;
/// The most body bytes read from the engine.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// The longest title kept, in bytes.
const MAX_TITLE_BYTES: usize = 300;
/// The longest snippet kept, in bytes.
const MAX_SNIPPET_BYTES: usize = 2_000;

/// What to search for.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// What to search the web for.
    query: String,
    /// The most hits to return (default 5, at most 20).
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1, max = 20))]
    max_results: usize,
}

fn default_max_results() -> usize {
    5
}

/// One hit, as the structured result lists it.
#[derive(Serialize, JsonSchema)]
struct Hit {
    /// The page's URL.
    url: String,
    /// The page's title.
    title: String,
    /// The engine's snippet of the page.
    snippet: String,
}

/// What `web_search` returns.
#[derive(Serialize, JsonSchema)]
struct SearchOutput {
    /// The query asked.
    query: String,
    /// The hits, best first.
    results: Vec<Hit>,
}

/// A hit as SearXNG sends it: anything may be missing or of another type.
#[derive(Deserialize)]
struct Sent {
    url: Option<Value>,
    title: Option<Value>,
    content: Option<Value>,
}

struct WebSearch;

impl Tool for WebSearch {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Search the web and return the best hits, each with its URL, title and a
        snippet. `query` is what to search for (as to a search engine) and
        `max_results` the most hits to return (default 5, at most 20). The
        search engine is the one the operator configured; fetch a hit's page
        with web_fetch when its host is allowed.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<SearchOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let max_results = check_range("max_results", input.max_results, 1, MAX_RESULTS)?;
        let query = input.query.trim();
        if query.is_empty() {
            return Err(ToolError::invalid_input("`query` is empty"));
        }
        if query.len() > MAX_QUERY_BYTES {
            return Err(ToolError::invalid_input(format!(
                "`query` is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
                query.len()
            )));
        }
        let (provider, base) = (std::env::var(PROVIDER_VAR), std::env::var(URL_VAR));
        let (Ok(provider), Ok(base)) = (provider, base) else {
            return Err(ToolError::failed(
                "no search engine is configured: the operator sets `[toolset] web_search = \
                 { provider = \"searxng\", url = \"…\" }` in toolhost.toml",
            ));
        };
        if provider != "searxng" {
            return Err(ToolError::failed(format!(
                "the configured search provider {provider:?} is not one web_search speaks \
                 (searxng)"
            )));
        }
        let hits = searxng(base.trim_end_matches('/'), query, max_results)?;
        let mut output = Output::text(format!("{} results for {query:?}.", hits.len()));
        for hit in &hits {
            output = output.with_search_result(&hit.url, &hit.title, &hit.snippet);
        }
        let structured = SearchOutput {
            query: query.to_string(),
            results: hits,
        };
        let Value::Object(structured) = serde_json::to_value(structured)? else {
            return Err(ToolError::failed("the result is not a JSON object"));
        };
        Ok(output.with_structured(structured))
    }
}

/// Ask the SearXNG instance at `base` for `query`: at most `max` hits.
fn searxng(base: &str, query: &str, max: usize) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{base}/search?q={}&format=json", encode(query));
    let response = Request::new("GET", url.as_str())
        .header("accept", "application/json")
        .max_body_bytes(MAX_BODY_BYTES)
        .send()
        .map_err(|err| match err.kind() {
            ErrorKind::Denied => ToolError::failed(format!(
                "the search engine at {base} cannot be reached: {err} (the operator's \
                 `[toolset] web_search.url` must name it as its address is reached, an IP \
                 address for one on a private network)"
            )),
            _ => ToolError::failed(format!("the search engine at {base} failed: {err}")),
        })?;
    if response.status == 403 {
        return Err(ToolError::failed(format!(
            "the SearXNG instance at {base} refused a JSON search (HTTP 403): its settings.yml \
             must list `json` in `search.formats`"
        )));
    }
    if !response.is_success() {
        return Err(ToolError::failed(format!(
            "the search engine at {base} answered HTTP status {}",
            response.status
        )));
    }
    if response.truncated {
        return Err(ToolError::failed(format!(
            "the search engine at {base} answered more than {MAX_BODY_BYTES} bytes"
        )));
    }
    let body: Value = serde_json::from_slice(&response.body).map_err(|err| {
        ToolError::failed(format!(
            "the search engine at {base} did not answer JSON ({err}): is it a SearXNG \
             instance with `json` in `search.formats`?"
        ))
    })?;
    let Some(sent) = body.get("results").and_then(Value::as_array) else {
        return Err(ToolError::failed(format!(
            "the search engine at {base} answered JSON without a `results` list"
        )));
    };
    Ok(sent
        .iter()
        .filter_map(|hit| serde_json::from_value::<Sent>(hit.clone()).ok())
        .filter_map(hit)
        .take(max)
        .collect())
}

/// A hit as returned, if `sent` has a web URL: its title and snippet cut
/// to size, missing ones empty.
fn hit(sent: Sent) -> Option<Hit> {
    let text = |value: Option<Value>, max: usize| match value {
        Some(Value::String(text)) => cut_bytes(text.trim(), max).0.to_string(),
        _ => String::new(),
    };
    let Some(Value::String(url)) = sent.url else {
        return None;
    };
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) || url.len() > 4096 {
        return None;
    }
    Some(Hit {
        url,
        title: text(sent.title, MAX_TITLE_BYTES),
        snippet: text(sent.content, MAX_SNIPPET_BYTES),
    })
}

/// `text` percent-encoded for a query string: every byte but the
/// unreserved ones.
fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

export_tool!(WebSearch);
