//! `[[mcp_servers]]`: the MCP servers whose tools the host mounts beside its
//! components, each through one `mcp_toolset` (`crate::config::toolset`).
//!
//! ```toml
//! [[mcp_servers]]
//! name = "tickets"
//! type = "stdio"                      # a process the host starts
//! command = "python3"
//! args = ["tickets.py"]
//! env = { TICKETS_DB = "tickets.db" }
//! cwd = "upstream"                     # relative to the host directory
//!
//! [[toolset]]
//! type = "mcp_toolset"
//! mcp_server_name = "tickets"
//! configs = [{ name = "close_ticket", permission_policy = "always_ask" }]
//! ```
//!
//! The two are checked against each other both ways, as the registry does:
//! a toolset must name a declared server, and every declared server must
//! be mounted by a toolset.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;

use super::toolset::McpToolset;
use crate::caps::http::AllowList;

/// How long starting a server and listing its tools may take by default.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;
/// The longest `startup_timeout_ms`.
pub const MAX_STARTUP_TIMEOUT_MS: u64 = 600_000;
/// The most MCP servers one host declares.
pub const MAX_MCP_SERVERS: usize = 32;
/// The request headers the MCP transport sets itself: `headers` and
/// `auth_headers` may not name them.
pub const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "last-event-id",
    "mcp-protocol-version",
];

/// One declared MCP server.
#[derive(Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Its name, which `mcp_server_name` refers to.
    pub name: String,
    /// How the host reaches it.
    pub transport: McpTransport,
    /// Whether its tools' annotations decide their effect (`readOnlyHint`,
    /// `idempotentHint` with an explicit `destructiveHint`); when `false`
    /// every tool is a write unless its `configs` entry sets `effect`.
    pub trust_annotations: bool,
    /// When its process starts.
    pub startup: Startup,
    /// How long starting it and listing its tools may take.
    pub startup_timeout: Duration,
    /// `None` for a server the operator declared (an IP literal in its
    /// `url` is reached as written); for one an agent made over the API
    /// declared, the origins `[server] agent_mcp_servers` allows: its every
    /// connection is screened as a tool's requests are (each address it
    /// resolves to globally routable, or named literally there), and none
    /// of its answers is quoted in an error.
    pub screened: Option<std::sync::Arc<AllowList>>,
}

/// How the host reaches an MCP server.
#[derive(Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A process the host starts, speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it (the host's own are not passed
        /// on, but `PATH`, `HOME`, `LANG` and `TMPDIR`).
        env: BTreeMap<String, String>,
        /// Its working directory, relative to the host directory.
        cwd: Option<PathBuf>,
    },
    /// A server reached over streamable HTTP.
    Url {
        /// Its endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
        /// Which request header (the key) carries which field of a
        /// session's `auth` (the value, a top-level string field).
        auth_headers: BTreeMap<String, String>,
    },
}

/// When a stdio server's process starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Startup {
    /// When the host first needs its tools: a whole load, or a call of one
    /// of them.
    #[default]
    Lazy,
    /// When the host starts, even for a one-shot command that calls
    /// another tool.
    Eager,
}

/// Headers and environment values may be secrets: `Debug` names them only.
impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("McpServer");
        s.field("name", &self.name);
        match &self.transport {
            McpTransport::Stdio {
                command, args, env, ..
            } => s
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>()),
            McpTransport::Url { url, headers, .. } => s
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>()),
        };
        s.finish_non_exhaustive()
    }
}

impl McpServer {
    /// Hold a server an agent made over the API declared to what
    /// `allowed` (`[server] agent_mcp_servers`) lets such agents reach.
    pub fn screen(&mut self, allowed: &AllowList) -> anyhow::Result<()> {
        if let McpTransport::Url { url, .. } = &self.transport {
            let uri: ::http::Uri = url
                .parse()
                .with_context(|| format!("mcp_servers `{}`: `url` is not a URL", self.name))?;
            let scheme = uri.scheme_str().unwrap_or_default();
            let port = uri
                .port_u16()
                .unwrap_or(if scheme == "https" { 443 } else { 80 });
            let host = uri.host().unwrap_or_default();
            anyhow::ensure!(
                allowed.allows(scheme, host, port),
                "mcp_servers `{}`: {} is not an origin an agent made over the API may reach; \
                 the operator lists those in `[server] agent_mcp_servers` of toolhost.toml ({})",
                self.name,
                crate::shown::quoted(url),
                match allowed.canonical().as_slice() {
                    [] => "it lists none".to_string(),
                    listed => format!("it lists {}", listed.join(", ")),
                }
            );
        }
        self.screened = Some(std::sync::Arc::new(allowed.clone()));
        Ok(())
    }

    /// How its tools are shown as a source: `mcp:<name>`.
    pub fn source(&self) -> PathBuf {
        source_of(&self.name)
    }

    /// The server as listings echo it: its name and how it is reached
    /// (`url`, or `command` and `args`), never header or environment
    /// values.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.transport {
            McpTransport::Url { url, .. } => {
                serde_json::json!({ "name": self.name, "type": "url", "url": url })
            }
            McpTransport::Stdio { command, args, .. } => serde_json::json!({
                "name": self.name, "type": "stdio", "command": command, "args": args,
            }),
        }
    }
}

/// How the tools of the server `name` are shown as a source.
pub fn source_of(name: &str) -> PathBuf {
    PathBuf::from(format!("mcp:{name}"))
}

/// An entry as written, before its fields are checked against its type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    auth_headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    trust_annotations: Option<bool>,
    #[serde(default)]
    startup: Option<Startup>,
    #[serde(default)]
    startup_timeout_ms: Option<u64>,
}

impl<'de> Deserialize<'de> for McpServer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawServer::deserialize(deserializer)?;
        raw.check()
            .map_err(|e| serde::de::Error::custom(format!("{e:#}")))
    }
}

impl RawServer {
    fn check(self) -> anyhow::Result<McpServer> {
        let at = format!("[[mcp_servers]] `{}`", self.name);
        anyhow::ensure!(
            crate::tool::is_identifier(&self.name),
            "{at}: `name` must be 1-64 characters of A-Z, a-z, 0-9, `_` and `-`"
        );
        let misplaced = |key: &str, set: bool, kind: &str| {
            anyhow::ensure!(
                !set,
                "{at}: `{key}` applies to a server of `type = \"{kind}\"`, and this one is of \
                 `type = \"{}\"`",
                self.kind
            );
            Ok(())
        };
        let transport = match self.kind.as_str() {
            "stdio" => {
                misplaced("url", self.url.is_some(), "url")?;
                misplaced("headers", self.headers.is_some(), "url")?;
                misplaced("auth_headers", self.auth_headers.is_some(), "url")?;
                let command = self
                    .command
                    .filter(|c| !c.trim().is_empty())
                    .with_context(|| format!("{at}: a stdio server needs a `command` to start"))?;
                if let Some(cwd) = &self.cwd {
                    anyhow::ensure!(
                        cwd.is_relative(),
                        "{at}: `cwd` = {} must be relative to the host directory",
                        cwd.display()
                    );
                }
                McpTransport::Stdio {
                    command,
                    args: self.args.unwrap_or_default(),
                    env: self.env.unwrap_or_default(),
                    cwd: self.cwd,
                }
            }
            "url" => {
                for (key, set) in [
                    ("command", self.command.is_some()),
                    ("args", self.args.is_some()),
                    ("env", self.env.is_some()),
                    ("cwd", self.cwd.is_some()),
                    ("startup", self.startup.is_some()),
                ] {
                    misplaced(key, set, "stdio")?;
                }
                let url = self
                    .url
                    .with_context(|| format!("{at}: a url server needs a `url`"))?;
                let parsed = http::Uri::try_from(url.as_str())
                    .ok()
                    .filter(|u| matches!(u.scheme_str(), Some("http" | "https")))
                    .filter(|u| u.host().is_some());
                anyhow::ensure!(
                    parsed.is_some(),
                    "{at}: `url` = {url:?} is not an http:// or https:// address"
                );
                let headers = self.headers.unwrap_or_default();
                let auth_headers = self.auth_headers.unwrap_or_default();
                for (table, name) in (headers.keys().map(|n| ("headers", n)))
                    .chain(auth_headers.keys().map(|n| ("auth_headers", n)))
                {
                    anyhow::ensure!(
                        http::HeaderName::try_from(name.as_str()).is_ok(),
                        "{at}: `{table}` names {name:?}, which is not an HTTP header name"
                    );
                    anyhow::ensure!(
                        !RESERVED_HEADERS
                            .iter()
                            .any(|r| name.eq_ignore_ascii_case(r)),
                        "{at}: `{table}` names `{name}`, which the MCP transport sets itself \
                         (reserved: {})",
                        RESERVED_HEADERS.join(", ")
                    );
                    anyhow::ensure!(
                        !(table == "auth_headers"
                            && headers.keys().any(|h| h.eq_ignore_ascii_case(name))),
                        "{at}: `{name}` is in both `headers` and `auth_headers`; keep one"
                    );
                }
                for (name, value) in &headers {
                    anyhow::ensure!(
                        http::HeaderValue::try_from(value.as_str()).is_ok(),
                        "{at}: the value of `headers.{name}` is not a valid header value"
                    );
                }
                McpTransport::Url {
                    url,
                    headers,
                    auth_headers,
                }
            }
            other => anyhow::bail!(
                "{at}: `type` = {other:?} is not a way to reach an MCP server: expected \
                 \"stdio\" or \"url\""
            ),
        };
        let timeout = self
            .startup_timeout_ms
            .unwrap_or(DEFAULT_STARTUP_TIMEOUT_MS);
        anyhow::ensure!(
            (1..=MAX_STARTUP_TIMEOUT_MS).contains(&timeout),
            "{at}: `startup_timeout_ms` = {timeout} must be between 1 and {MAX_STARTUP_TIMEOUT_MS}"
        );
        Ok(McpServer {
            name: self.name,
            transport,
            trust_annotations: self.trust_annotations.unwrap_or(true),
            startup: self.startup.unwrap_or_default(),
            startup_timeout: Duration::from_millis(timeout),
            screened: None,
        })
    }
}

/// Check the MCP servers every agent declares (each with who declares it)
/// together: agents share one connection per server name, so a name
/// declared twice must be declared alike, and the host reaches at most
/// [`MAX_MCP_SERVERS`] servers.
pub(crate) fn check_shared<'a>(
    servers: impl IntoIterator<Item = (String, &'a McpServer)>,
) -> anyhow::Result<()> {
    let mut seen: BTreeMap<&str, (String, &McpServer)> = BTreeMap::new();
    for (declarer, server) in servers {
        match seen.get(server.name.as_str()) {
            Some((first, held)) => anyhow::ensure!(
                *held == server,
                "the MCP server `{}` is declared differently by {first} and {declarer}: agents \
                 share one connection per server name, so give them different names",
                server.name
            ),
            None => {
                seen.insert(&server.name, (declarer, server));
            }
        }
    }
    anyhow::ensure!(
        seen.len() <= MAX_MCP_SERVERS,
        "the agents declare {} MCP servers together; a host reaches at most {MAX_MCP_SERVERS}",
        seen.len()
    );
    Ok(())
}

/// Check `servers` and `toolsets` against each other, both ways: every
/// toolset names a declared server, every server is mounted by a toolset,
/// and no name is declared twice.
pub(crate) fn cross_check(servers: &[McpServer], toolsets: &[McpToolset]) -> anyhow::Result<()> {
    anyhow::ensure!(
        servers.len() <= MAX_MCP_SERVERS,
        "{} [[mcp_servers]] are declared; at most {MAX_MCP_SERVERS} are allowed",
        servers.len()
    );
    for (index, server) in servers.iter().enumerate() {
        anyhow::ensure!(
            !servers[..index].iter().any(|s| s.name == server.name),
            "[[mcp_servers]] `{}` is declared twice; server names are unique",
            server.name
        );
    }
    let declared = || {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        match names.is_empty() {
            true => "none is declared".to_string(),
            false => format!("declared: {}", names.join(", ")),
        }
    };
    for toolset in toolsets {
        anyhow::ensure!(
            servers.iter().any(|s| s.name == toolset.server),
            "[[toolset]] mcp_toolset `{0}` names the MCP server `{0}`, which no [[mcp_servers]] \
             entry declares ({1})",
            toolset.server,
            declared()
        );
    }
    for server in servers {
        anyhow::ensure!(
            toolsets.iter().any(|t| t.server == server.name),
            "[[mcp_servers]] `{0}` is declared, but no [[toolset]] of type \"mcp_toolset\" \
             mounts it: add one with `mcp_server_name = \"{0}\"`, or remove the server",
            server.name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, std::path::Path::new("toolhost.toml"))
    }

    const STDIO: &str = "[[mcp_servers]]\nname = \"tickets\"\ntype = \"stdio\"\ncommand = \"python3\"\nargs = [\"t.py\"]\n";
    const MOUNT: &str = "[[toolset]]\ntype = \"mcp_toolset\"\nmcp_server_name = \"tickets\"\n";

    #[test]
    fn a_stdio_server_and_its_toolset_parse() {
        let config = parse(&format!(
            "{STDIO}{MOUNT}configs = [{{ name = \"close\", effect = \"write\", permission_policy = \"always_ask\" }}]\n"
        ))
        .unwrap();
        let server = &config.mcp_servers[0];
        assert!(
            matches!(&server.transport, McpTransport::Stdio { command, .. } if command == "python3")
        );
        assert!(server.trust_annotations);
        let toolset = &config.toolset.mcp[0];
        let close = toolset.settings.resolve("close");
        assert_eq!(close.effect, Some(crate::tool::Effect::Write));
        assert_eq!(close.permission, crate::config::Permission::AlwaysAsk);
        assert_eq!(toolset.unreported(&["open"]), ["close"]);
        assert_eq!(toolset.to_json()["mcp_server_name"], "tickets");
    }

    #[test]
    fn the_cross_check_runs_both_ways_and_names_both_sides() {
        let err = format!("{:#}", parse(STDIO).unwrap_err());
        assert!(
            err.contains("`tickets` is declared, but no [[toolset]]"),
            "{err}"
        );
        let err = format!("{:#}", parse(MOUNT).unwrap_err());
        assert!(
            err.contains("names the MCP server `tickets`") && err.contains("none is declared"),
            "{err}"
        );
        let err = format!(
            "{:#}",
            parse(&format!("{STDIO}{STDIO}{MOUNT}")).unwrap_err()
        );
        assert!(err.contains("declared twice"), "{err}");
        let err = format!(
            "{:#}",
            parse(&format!("{STDIO}{MOUNT}{MOUNT}")).unwrap_err()
        );
        assert!(err.contains("a second mcp_toolset"), "{err}");
    }

    #[test]
    fn fields_of_the_other_type_are_named() {
        let err = parse(&format!("{STDIO}url = \"https://x.test/mcp\"\n{MOUNT}")).unwrap_err();
        let err = format!("{err:#}");
        assert!(
            err.contains("`url` applies to a server of `type = \"url\"`"),
            "{err}"
        );
        let err = parse(&format!(
            "[[mcp_servers]]\nname = \"tickets\"\ntype = \"url\"\nurl = \"ftp://x\"\n{MOUNT}"
        ))
        .unwrap_err();
        assert!(format!("{err:#}").contains("not an http:// or https://"));
        let err = parse(&format!(
            "[[mcp_servers]]\nname = \"tickets\"\ntype = \"pipe\"\n{MOUNT}"
        ))
        .unwrap_err();
        assert!(format!("{err:#}").contains("expected \"stdio\" or \"url\""));
        let url =
            "[[mcp_servers]]\nname = \"tickets\"\ntype = \"url\"\nurl = \"https://x.test/mcp\"\n";
        let err = parse(&format!("{url}headers = {{ Accept = \"x\" }}\n{MOUNT}")).unwrap_err();
        assert!(
            format!("{err:#}").contains("which the MCP transport sets itself"),
            "{err:#}"
        );
        let err = parse(&format!(
            "{url}auth_headers = {{ \"a b\" = \"user\" }}\n{MOUNT}"
        ))
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("not an HTTP header name"),
            "{err:#}"
        );
        parse(&format!("{url}headers = {{ X-Team = \"a\" }}\nauth_headers = {{ Authorization = \"token\" }}\n{MOUNT}"))
            .unwrap();
    }

    #[test]
    fn effect_is_refused_in_the_builtin_toolset() {
        let err =
            parse("[toolset]\ntype = \"agent_toolset\"\nconfigs.read = { effect = \"write\" }\n")
                .unwrap_err();
        assert!(format!("{err:#}").contains("`effect` is set only for an MCP server's tools"));
    }
}
