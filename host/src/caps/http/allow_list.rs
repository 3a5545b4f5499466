//! The `http` grant parsed: the origins a tool may reach.
//!
//! An entry is `scheme://host[:port]`; `*.domain` matches every subdomain, a
//! missing port means the scheme's default, and `*://*:*` allows everything
//! (a bare `*` is refused so nobody allows everything by accident). An entry
//! naming an IP address literally is the only way to reach an address that
//! is not globally routable (the capability enforces both). The lock
//! records its [`AllowList::lock_entry`].

use std::net::IpAddr;

/// Origins a tool may reach, parsed from its `http` grant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Origin>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: Option<String>,
    host: HostPattern,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Any,
    Exact(String),
    Subdomains(String),
    Ip(IpAddr),
}

/// Why an allow-list entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowListError {
    /// A bare `*`.
    #[error("`*` is not an origin: write \"*://*:*\" to allow every origin")]
    BareWildcard,
    /// Not of the form `scheme://host[:port]`.
    #[error(
        "{entry:?} is not an origin: expected scheme://host[:port], e.g. \"https://api.example.com\""
    )]
    Malformed {
        /// The entry as written.
        entry: String,
    },
    /// A scheme other than http, https or `*`.
    #[error("{entry:?} has scheme {scheme:?}: expected http, https or *")]
    Scheme {
        /// The entry as written.
        entry: String,
        /// The scheme found.
        scheme: String,
    },
}

impl AllowList {
    /// Parse the entries of an `http` grant.
    pub fn parse(entries: &[impl AsRef<str>]) -> Result<Self, AllowListError> {
        let entries = entries
            .iter()
            .map(|e| Origin::parse(e.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self { entries })
    }

    /// The entries in canonical form (`scheme://host:port`, lower case,
    /// default ports written out).
    pub fn canonical(&self) -> Vec<String> {
        self.entries.iter().map(Origin::to_string).collect()
    }

    /// The lock's entry: the canonical entries, sorted, each once.
    pub fn lock_entry(&self) -> Vec<String> {
        let mut entries = self.canonical();
        entries.sort();
        entries.dedup();
        entries
    }

    /// Whether nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a request to `scheme://host:port` is allowed.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        self.entries.iter().any(|o| o.matches(scheme, &host, port))
    }

    /// Whether an entry names `ip` literally (not through a wildcard) for
    /// `scheme` and `port`: the only way a tool may reach an address that is
    /// not globally routable, such as `http://127.0.0.1:8080`.
    pub fn names_ip(&self, scheme: &str, ip: IpAddr, port: u16) -> bool {
        self.entries.iter().any(|o| {
            matches!(o.host, HostPattern::Ip(named) if named == ip)
                && o.scheme
                    .as_deref()
                    .is_none_or(|s| s.eq_ignore_ascii_case(scheme))
                && o.port.is_none_or(|p| p == port)
        })
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.scheme.as_deref().unwrap_or("*"))?;
        f.write_str("://")?;
        match &self.host {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Exact(host) => f.write_str(host)?,
            HostPattern::Subdomains(domain) => write!(f, "*.{domain}")?,
            HostPattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            HostPattern::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => f.write_str(":*"),
        }
    }
}

impl Origin {
    fn parse(entry: &str) -> Result<Self, AllowListError> {
        let malformed = || AllowListError::Malformed {
            entry: entry.to_string(),
        };
        if entry.trim() == "*" {
            return Err(AllowListError::BareWildcard);
        }
        let (scheme, rest) = entry.split_once("://").ok_or_else(malformed)?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "*" => None,
            s @ ("http" | "https") => Some(s.to_string()),
            other => {
                return Err(AllowListError::Scheme {
                    entry: entry.to_string(),
                    scheme: other.to_string(),
                });
            }
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return Err(malformed());
        }
        let (host, port) = split_host_port(rest).ok_or_else(malformed)?;
        let port = match port {
            Some("*") => None,
            Some(p) => Some(p.parse::<u16>().map_err(|_| malformed())?),
            None => match scheme.as_deref() {
                Some("http") => Some(80),
                Some("https") => Some(443),
                _ => None,
            },
        };
        let host = host.to_ascii_lowercase();
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(domain) = host.strip_prefix("*.") {
            if domain.is_empty() || domain.contains('*') {
                return Err(malformed());
            }
            HostPattern::Subdomains(domain.to_string())
        } else if host.contains('*') {
            return Err(malformed());
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            HostPattern::Ip(ip)
        } else {
            HostPattern::Exact(host)
        };
        Ok(Self { scheme, host, port })
    }

    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        let scheme_ok = self
            .scheme
            .as_deref()
            .is_none_or(|s| s.eq_ignore_ascii_case(scheme));
        let port_ok = self.port.is_none_or(|p| p == port);
        let host_ok = match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => h == host,
            HostPattern::Subdomains(d) => host
                .strip_suffix(d.as_str())
                .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('.')),
            HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
        };
        scheme_ok && port_ok && host_ok
    }
}

/// Split `host[:port]`, with IPv6 literals in brackets.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    if let Some(v6) = s.strip_prefix('[') {
        let (host, rest) = v6.split_once(']')?;
        return match rest {
            "" => Some((host, None)),
            _ => Some((host, Some(rest.strip_prefix(':')?))),
        };
    }
    match s.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host, Some(port))),
        Some(_) => None,
        None => Some((s, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(entries).unwrap()
    }

    #[test]
    fn exact_origin_is_port_exact() {
        let l = list(&["https://api.example.com"]);
        assert!(l.allows("https", "api.example.com", 443));
        assert!(l.allows("https", "API.example.com", 443));
        assert!(!l.allows("https", "api.example.com", 8443));
        assert!(!l.allows("http", "api.example.com", 443));
        assert!(!l.allows("https", "example.com", 443));
    }

    #[test]
    fn canonical_form_parses_back_to_the_same_list() {
        let l = list(&[
            "HTTPS://API.example.com/",
            "http://*.example.com:8080",
            "*://*:*",
            "http://[::1]:3000",
            "https://10.0.0.1",
        ]);
        assert_eq!(
            l.canonical(),
            [
                "https://api.example.com:443",
                "http://*.example.com:8080",
                "*://*:*",
                "http://[::1]:3000",
                "https://10.0.0.1:443",
            ]
        );
        assert_eq!(AllowList::parse(&l.canonical()).unwrap(), l);
    }

    #[test]
    fn subdomain_wildcard_excludes_apex_and_lookalikes() {
        let l = list(&["https://*.example.com:8443"]);
        assert!(l.allows("https", "a.example.com", 8443));
        assert!(l.allows("https", "a.b.example.com", 8443));
        assert!(!l.allows("https", "example.com", 8443));
        assert!(!l.allows("https", "evilexample.com", 8443));
        assert!(!l.allows("https", "a.example.com", 443));
    }

    #[test]
    fn everything_must_be_explicit() {
        assert_eq!(
            AllowList::parse(&["*"]).unwrap_err(),
            AllowListError::BareWildcard
        );
        let all = list(&["*://*:*"]);
        assert!(all.allows("http", "anything.test", 1));
        assert!(matches!(
            AllowList::parse(&["api.example.com"]),
            Err(AllowListError::Malformed { .. })
        ));
        assert!(matches!(
            AllowList::parse(&["ftp://x"]),
            Err(AllowListError::Scheme { .. })
        ));
        assert!(AllowList::parse(&["https://x/path"]).is_err());
        assert!(AllowList::parse(&["https://a*b.com"]).is_err());
    }

    #[test]
    fn ip_literals() {
        let l = list(&["http://127.0.0.1:8080", "http://[::1]:8080"]);
        assert!(l.allows("http", "127.0.0.1", 8080));
        assert!(l.allows("http", "[::1]", 8080));
        assert!(!l.allows("http", "127.0.0.2", 8080));
        assert!(AllowList::default().is_empty());
    }

    #[test]
    fn literal_entries_name_their_address_for_their_scheme_and_port() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let l = list(&[
            "http://127.0.0.1:8080",
            "https://[::1]",
            "*://10.0.0.7:*",
            "*://*:*",
            "https://*.example.com",
        ]);
        assert!(l.names_ip("http", ip("127.0.0.1"), 8080));
        assert!(!l.names_ip("https", ip("127.0.0.1"), 8080));
        assert!(!l.names_ip("http", ip("127.0.0.1"), 8081));
        assert!(!l.names_ip("http", ip("127.0.0.2"), 8080));
        // The mapped form of a named address is a different address.
        assert!(!l.names_ip("http", ip("::ffff:127.0.0.1"), 8080));
        assert!(l.names_ip("https", ip("::1"), 443));
        assert!(!l.names_ip("https", ip("::1"), 8443));
        assert!(l.names_ip("http", ip("10.0.0.7"), 1));
        assert!(l.names_ip("https", ip("10.0.0.7"), 65535));
        // Wildcards never name an address.
        assert!(!l.names_ip("http", ip("10.0.0.8"), 80));
        assert!(!l.names_ip("https", ip("169.254.169.254"), 443));
    }
}
