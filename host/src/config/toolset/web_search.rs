//! `[toolset] web_search`: the search engine the toolset's `web_search`
//! asks. Without it, `web_search` is listed as unavailable, saying so.
//!
//! ```toml
//! [toolset]
//! type = "agent_toolset"
//! web_search = { provider = "searxng", url = "http://127.0.0.1:8888" }
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::caps::http::AllowList;
use crate::caps::workspace::Env;

/// The search engines `web_search` speaks.
pub const PROVIDERS: &[&str] = &["searxng"];

/// The variable giving the component the engine's kind.
const PROVIDER_VAR: &str = "TOOLHOST_WEB_SEARCH_PROVIDER";
/// The variable giving the component the engine's base URL.
const URL_VAR: &str = "TOOLHOST_WEB_SEARCH_URL";

/// Why `web_search` is unavailable when no engine is configured.
pub const NOT_CONFIGURED: &str = "no search engine is configured for the toolset's \
    `web_search`: set `web_search = { provider = \"searxng\", url = \"…\" }` in `[toolset]` \
    (a SearXNG instance with `json` in its `search.formats`)";

/// The engine `web_search` asks, as `[toolset] web_search` names it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearch {
    /// The engine's kind: `searxng`.
    pub provider: String,
    /// Its base URL: `<url>/search?q=…&format=json` is asked.
    pub url: String,
}

impl WebSearch {
    /// Check it: a provider `web_search` speaks, and an `http(s)` URL with
    /// a host and no credentials, query or fragment.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            PROVIDERS.contains(&self.provider.as_str()),
            "`web_search.provider` = {:?} is not a search engine web_search speaks: expected \
             one of {}",
            self.provider,
            PROVIDERS.join(", ")
        );
        let uri: http::Uri = self.url.parse().map_err(|e| {
            anyhow::anyhow!(
                "`web_search.url` = {:?} is not a URL ({e}): expected e.g. \
                 \"https://search.example.org\"",
                self.url
            )
        })?;
        anyhow::ensure!(
            matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some(),
            "`web_search.url` = {:?} must be an absolute http:// or https:// URL with a host",
            self.url
        );
        let authority = uri.authority().map_or("", http::uri::Authority::as_str);
        anyhow::ensure!(
            !authority.contains('@') && uri.query().is_none() && !self.url.contains('#'),
            "`web_search.url` = {:?} must hold no credentials, query or fragment: web_search \
             adds `/search?q=…&format=json` to it",
            self.url
        );
        AllowList::parse(&[self.origin()])
            .map_err(|e| anyhow::anyhow!("`web_search.url` = {:?}: {e}", self.url))?;
        Ok(())
    }

    /// The origin the component may reach: the URL's `scheme://host[:port]`
    /// (an IP address written in it admits that private address too).
    pub fn origin(&self) -> String {
        let Ok(uri) = self.url.parse::<http::Uri>() else {
            return String::new();
        };
        match (uri.scheme_str(), uri.authority()) {
            (Some(scheme), Some(authority)) => format!("{scheme}://{authority}"),
            _ => String::new(),
        }
    }

    /// What the component is told: the engine's kind and base URL.
    pub fn env(&self) -> Env {
        Env::from(BTreeMap::from([
            (PROVIDER_VAR.to_string(), self.provider.clone()),
            (
                URL_VAR.to_string(),
                self.url.trim_end_matches('/').to_string(),
            ),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(provider: &str, url: &str) -> WebSearch {
        WebSearch {
            provider: provider.into(),
            url: url.into(),
        }
    }

    #[test]
    fn an_engine_is_admitted_by_its_origin_only() {
        let searx = engine("searxng", "http://127.0.0.1:8888/searx/");
        searx.validate().unwrap();
        assert_eq!(searx.origin(), "http://127.0.0.1:8888");
        assert_eq!(
            engine("searxng", "https://search.example.org").origin(),
            "https://search.example.org"
        );
    }

    #[test]
    fn a_bad_engine_is_refused_naming_the_field() {
        for (provider, url, names) in [
            ("google", "https://x.org", "web_search.provider"),
            ("searxng", "not a url", "web_search.url"),
            ("searxng", "ftp://x.org", "web_search.url"),
            ("searxng", "/search", "web_search.url"),
            ("searxng", "https://user:pw@x.org", "credentials"),
            ("searxng", "https://x.org/?q=1", "query"),
            ("searxng", "https://x.org/#top", "fragment"),
        ] {
            let refused = engine(provider, url).validate().unwrap_err().to_string();
            assert!(refused.contains(names), "{url}: {refused}");
        }
    }
}
