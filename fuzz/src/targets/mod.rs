//! The five fuzz targets and what each driver needs to know about them.
//!
//! A target function takes any bytes and returns normally unless toolhost
//! broke a promise; then it panics with what was broken. Each builds its
//! fixture on first use and shares it between inputs.

mod arbitrary_json;
mod component;
mod config;
mod http_request;
mod mcp_message;
mod tool_input;

pub use component::component;
pub use config::config;
pub use http_request::http_request;
pub use mcp_message::mcp_message;
pub use tool_input::tool_input;

/// `haystack` with every `needle` replaced by `with`.
pub(crate) fn replace_all(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// A target as the runners see it.
pub struct Target {
    /// Its name: the cargo-fuzz target, and the folder of its corpus,
    /// regressions and artifacts.
    pub name: &'static str,
    /// Run one input.
    pub run: fn(&[u8]),
    /// The fewest executions per second the stable runner accepts, so a run
    /// cannot silently do nothing: about a tenth of what a debug build does
    /// on a two-core machine running two targets at once.
    pub min_execs_per_sec: f64,
    /// Tokens the mutator splices in: the input format's keywords, in
    /// lists (the JSON targets share `JSON_TOKENS`).
    pub dictionary: &'static [&'static [&'static [u8]]],
    /// Whether the input holds JSON worth mutating as JSON.
    pub json: bool,
    /// The largest input the mutator makes.
    pub max_len: usize,
    /// Seeds made at run time, beside the checked-in `corpus/<name>/`.
    pub extra_seeds: fn() -> Vec<Vec<u8>>,
}

impl Target {
    /// Every token of its dictionary.
    pub fn tokens(&self) -> impl Iterator<Item = &'static [u8]> {
        self.dictionary.iter().flat_map(|list| list.iter().copied())
    }
}

/// JSON's punctuation and keywords, in the dictionary of every target whose
/// input holds JSON.
pub(super) const JSON_TOKENS: &[&[u8]] = &[
    b"{", b"}", b"[", b"]", b"\"", b":", b",", b"null", b"true", b"false",
];

fn no_extra_seeds() -> Vec<Vec<u8>> {
    Vec::new()
}

/// Every target, in the order the runners take them.
pub const ALL: &[Target] = &[
    Target {
        name: "tool_input",
        run: tool_input,
        min_execs_per_sec: 500.0,
        dictionary: tool_input::DICTIONARY,
        json: true,
        max_len: 4096,
        extra_seeds: no_extra_seeds,
    },
    Target {
        name: "config",
        run: config,
        min_execs_per_sec: 500.0,
        dictionary: config::DICTIONARY,
        json: false,
        max_len: 4096,
        extra_seeds: no_extra_seeds,
    },
    Target {
        name: "http_request",
        run: http_request,
        min_execs_per_sec: 20.0,
        dictionary: http_request::DICTIONARY,
        json: true,
        max_len: 4096,
        extra_seeds: no_extra_seeds,
    },
    Target {
        name: "mcp_message",
        run: mcp_message,
        min_execs_per_sec: 100.0,
        dictionary: mcp_message::DICTIONARY,
        json: true,
        max_len: 4096,
        extra_seeds: no_extra_seeds,
    },
    Target {
        name: "component",
        run: component,
        min_execs_per_sec: 3.0,
        dictionary: component::DICTIONARY,
        json: false,
        max_len: 1 << 20,
        extra_seeds: component::extra_seeds,
    },
];

/// The target called `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    ALL.iter().find(|t| t.name == name)
}
