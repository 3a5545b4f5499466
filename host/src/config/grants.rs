//! The grants of `[tools.<name>]` that name other things: the channels a
//! tool's sessions capability reaches, the principals it may send as, and
//! the tools its reminders may call. Parsed and checked with the config;
//! used by `caps::sessions` and `caps::reminders`.

use serde::{Deserialize, Serialize};

/// The channels a tool may reach: exact names, or prefixes ending in `*`
/// (`*` alone is every channel).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channels(Vec<String>);

impl Channels {
    /// Parse a grant's patterns, naming the first that is not one.
    pub fn parse(patterns: &[String]) -> anyhow::Result<Self> {
        for pattern in patterns {
            let name = pattern.strip_suffix('*').unwrap_or(pattern);
            let bad = |why: &str| anyhow::anyhow!("channel pattern {pattern:?} {why}");
            if name.contains('*') {
                return Err(bad("may have `*` only at its end"));
            }
            if name.contains(':') {
                return Err(bad(
                    "may not contain `:` (it separates channel and key in a continuation token)",
                ));
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

    /// Whether `channel` matches one of the patterns.
    pub fn admits(&self, channel: &str) -> bool {
        self.0
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => channel.starts_with(prefix),
                None => pattern == channel,
            })
    }

    /// Whether no channel is granted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The patterns, sorted.
    pub fn patterns(&self) -> &[String] {
        &self.0
    }
}

/// The principals a tool may send session messages as, besides its call's
/// own (`send_as`): principal ids (an auth's `user`, `id`, `email`, `name`
/// or `principal`), or prefixes ending in `*` (`*` alone is every one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Principals(Vec<String>);

impl Principals {
    /// Parse a grant's patterns, naming the first that is not one.
    pub fn parse(patterns: &[String]) -> anyhow::Result<Self> {
        for pattern in patterns {
            let name = pattern.strip_suffix('*').unwrap_or(pattern);
            let bad = |why: &str| anyhow::anyhow!("principal pattern {pattern:?} {why}");
            if name.contains('*') {
                return Err(bad("may have `*` only at its end"));
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

    /// Whether the principal `id` matches one of the patterns.
    pub fn admits(&self, id: &str) -> bool {
        self.0
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => id.starts_with(prefix),
                None => pattern == id,
            })
    }

    /// The patterns, sorted.
    pub fn patterns(&self) -> &[String] {
        &self.0
    }
}

/// A tool's `reminders` grant: it may schedule messages, and calls of the
/// tools listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemindersGrant {
    /// The tools a reminder may call (none by default).
    #[serde(default)]
    pub tools: Vec<String>,
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
