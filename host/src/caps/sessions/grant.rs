//! The `sessions` and `send_as` grants of `[tools.<name>]`: the channels a
//! tool's sessions capability reaches and the principals it may send as,
//! each a list of names or prefixes, parsed and checked with the config.

/// Names, or prefixes ending in `*` (`*` alone is every name), sorted:
/// what [`Channels`] and [`Principals`] are made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Patterns(Vec<String>);

impl Patterns {
    /// Parse `patterns` of `what` (for errors), refusing those `also`
    /// says why not.
    fn parse(
        patterns: &[String],
        what: &str,
        also: impl Fn(&str) -> Option<&'static str>,
    ) -> anyhow::Result<Self> {
        for pattern in patterns {
            let name = pattern.strip_suffix('*').unwrap_or(pattern);
            let bad = |why: &str| anyhow::anyhow!("{what} pattern {pattern:?} {why}");
            if name.contains('*') {
                return Err(bad("may have `*` only at its end"));
            }
            if let Some(why) = also(name) {
                return Err(bad(why));
            }
            if name.is_empty() && !pattern.ends_with('*') || pattern.len() > 256 {
                return Err(bad("must be 1 to 256 characters"));
            }
            if name.chars().any(char::is_control) {
                return Err(bad("may not contain control characters"));
            }
        }
        let mut patterns = patterns.to_vec();
        patterns.sort();
        patterns.dedup();
        Ok(Self(patterns))
    }

    fn admits(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => pattern == name,
            })
    }
}

/// The channels a tool may reach: exact names, or prefixes ending in `*`
/// (`*` alone is every channel).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channels(Patterns);

impl Channels {
    /// Parse a grant's patterns, naming the first that is not one.
    pub fn parse(patterns: &[String]) -> anyhow::Result<Self> {
        Patterns::parse(patterns, "channel", |name| {
            name.contains(':').then_some(
                "may not contain `:` (it separates channel and key in a continuation token)",
            )
        })
        .map(Self)
    }

    /// Whether `channel` matches one of the patterns.
    pub fn admits(&self, channel: &str) -> bool {
        self.0.admits(channel)
    }

    /// Whether no channel is granted.
    pub fn is_empty(&self) -> bool {
        self.0.0.is_empty()
    }

    /// The patterns, sorted.
    pub fn patterns(&self) -> &[String] {
        &self.0.0
    }
}

/// The principals a tool may send session messages as, besides its call's
/// own (`send_as`): principal ids (an auth's `user`, `id`, `email`, `name`
/// or `principal`), or prefixes ending in `*` (`*` alone is every one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Principals(Patterns);

impl Principals {
    /// Parse a grant's patterns, naming the first that is not one.
    pub fn parse(patterns: &[String]) -> anyhow::Result<Self> {
        Patterns::parse(patterns, "principal", |_| None).map(Self)
    }

    /// Whether the principal `id` matches one of the patterns.
    pub fn admits(&self, id: &str) -> bool {
        self.0.admits(id)
    }

    /// The patterns, sorted.
    pub fn patterns(&self) -> &[String] {
        &self.0.0
    }
}

#[cfg(test)]
mod tests {
    use super::{Channels, Principals};

    #[test]
    fn channel_patterns_are_names_or_prefixes() {
        let channels = Channels::parse(&["support".into(), "ops-*".into()]).unwrap();
        assert!(channels.admits("support"));
        assert!(channels.admits("ops-eu"));
        assert!(!channels.admits("supports"));
        assert!(!channels.admits("ops"));
        assert!(Channels::parse(&["*".into()]).unwrap().admits("anything"));
        for bad in ["", "a*b", "a:b", "\u{7}"] {
            let err = Channels::parse(&[bad.into()]).unwrap_err().to_string();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn principal_patterns_are_ids_or_prefixes() {
        let principals = Principals::parse(&["support-bot".into(), "alerts-*".into()]).unwrap();
        assert!(principals.admits("support-bot"));
        assert!(principals.admits("alerts-eu"));
        assert!(!principals.admits("victim"));
        assert!(!Principals::default().admits("anyone"));
        for bad in ["", "a*b", "\u{7}"] {
            let err = Principals::parse(&[bad.into()]).unwrap_err().to_string();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}
