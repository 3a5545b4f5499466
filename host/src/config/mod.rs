//! `toolhost.toml`: the operator's settings and grants, parsed strictly.
//!
//! Every table rejects unknown keys, naming the key and its line. What a
//! tool gets is its `[tools.<name>]` entry over `[defaults]` over the built-in
//! defaults, which deny every capability.

pub mod agent;
pub mod agent_tools;
mod limits;
pub mod mcp;
pub mod redacted;
#[cfg(test)]
mod reference;
pub mod registries;
mod server;
pub mod state;
mod telemetry;
mod tool;
pub mod toolset;
pub mod trust;

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;

use self::agent::AgentSpec;
pub use self::limits::*;
use self::mcp::McpServer;
pub use self::server::*;
pub use self::telemetry::*;
pub use self::tool::*;
use self::toolset::{Toolset, Toolsets};
use crate::caps::Grants;
use crate::caps::http::AllowList;
use crate::caps::sessions::{Channels, Principals};
pub use crate::usage::{DEFAULT_HOST_MEMORY_MB, DEFAULT_MAX_HANDLES};

/// The file name looked for in a host directory.
pub const CONFIG_FILE: &str = "toolhost.toml";
/// A call's deadline when none is configured.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// A call's memory cap when none is configured: sized for the Python and JS examples.
pub const DEFAULT_MEMORY_MB: u64 = 128;
/// The largest memory cap a tool may be given.
pub const MAX_MEMORY_MB: u64 = 4096;
/// The longest deadline a tool may be given.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The whole `toolhost.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The agent's slug, used in HTTP routes.
    #[serde(default)]
    pub name: Option<String>,
    /// Settings for every tool, unless a tool's own entry overrides them.
    #[serde(default)]
    pub defaults: ToolSettings,
    /// Per-tool settings, by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSettings>,
    /// Custom tools, by name: declared here, run by the client that calls them.
    #[serde(default)]
    pub custom_tools: BTreeMap<String, CustomToolSpec>,
    /// Settings of the HTTP server (`toolhost serve`).
    #[serde(default)]
    pub server: ServerSettings,
    /// Host-wide limits on calls, for every surface.
    #[serde(default)]
    pub limits: HostLimits,
    /// The built-in toolset and the MCP toolsets, when declared
    /// (`[toolset]` or `[[toolset]]`).
    #[serde(default, deserialize_with = "crate::config::toolset::one_or_many")]
    pub toolset: Toolsets,
    /// The MCP servers whose tools the MCP toolsets mount.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Where call spans and metrics are exported over OTLP, if anywhere.
    #[serde(default)]
    pub telemetry: TelemetrySettings,
    /// Agent-execution tools, by name: scripts the agent harness runs.
    #[serde(default)]
    pub agent_tools: BTreeMap<String, agent_tools::AgentToolSpec>,
    /// Named agents beside the default one (`[agents.<name>]`).
    #[serde(default)]
    pub agents: BTreeMap<String, AgentSpec>,
    /// Where shared state lives: embedded files, or Redis for several
    /// servers (`[state]`). Read when the host starts.
    #[serde(default)]
    pub state: state::StateSettings,
    /// Tools from OCI registries, by name: each a reference pinned to its
    /// manifest's digest (`toolhost add` writes them, `toolhost update`
    /// moves them).
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// How OCI registries are spoken to (`[registries]`).
    #[serde(default)]
    pub registries: registries::RegistrySettings,
    /// Whose signatures tools from registries must carry, by scope
    /// (`[trust."<scope>"]`).
    #[serde(default)]
    pub trust: BTreeMap<String, trust::TrustSettings>,
}

/// A custom tool: a name, a description and an input schema, but no
/// component. A call hands the input to the session's client, which runs it
/// and posts the result back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomToolSpec {
    /// Written for the model, as for any tool.
    pub description: String,
    /// A JSON Schema with `type = "object"`.
    pub input_schema: serde_json::Value,
    /// What its calls do; `write` when unset.
    #[serde(default)]
    pub effect: Option<crate::tool::Effect>,
}

/// Refuse `value`, the setting `key`, outside `range`, naming all three.
fn check_range<T>(key: &str, value: Option<T>, range: RangeInclusive<T>) -> anyhow::Result<()>
where
    T: PartialOrd + std::fmt::Display,
{
    if let Some(value) = value {
        anyhow::ensure!(
            range.contains(&value),
            "`{key}` = {value} is out of range: expected {} to {}",
            range.start(),
            range.end()
        );
    }
    Ok(())
}

impl Config {
    /// Parse `toolhost.toml` text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &Path) -> anyhow::Result<Self> {
        let mut config: Self =
            toml::from_str(text).with_context(|| format!("invalid {}", origin.display()))?;
        let dir = origin.parent().unwrap_or(Path::new("."));
        for (name, tool) in &mut config.agent_tools {
            tool.resolve(name, dir)
                .with_context(|| format!("invalid {}", origin.display()))?;
        }
        for (name, agent) in &mut config.agents {
            agent
                .read_files(name, dir)
                .with_context(|| format!("invalid {}", origin.display()))?;
        }
        for (scope, settings) in &mut config.trust {
            settings
                .read_keys(scope, dir)
                .with_context(|| format!("invalid {}", origin.display()))?;
        }
        config
            .validate()
            .with_context(|| format!("invalid {}", origin.display()))?;
        Ok(config)
    }

    /// Read `<dir>/toolhost.toml`, or the defaults when there is none.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        Self::load_with_text(dir).map(|(config, _)| config)
    }

    /// [`Config::load`], with the file's text (`None` when there is none).
    pub fn load_with_text(dir: &Path) -> anyhow::Result<(Self, Option<String>)> {
        let path = dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok((Self::parse(&text, &path)?, Some(text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Self::default(), None)),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// How this host treats OCI registries: `[registries]` and `[trust]`.
    pub fn registry_rules(&self) -> crate::oci::Rules {
        crate::oci::Rules {
            insecure: self.registries.insecure.clone(),
            trust: self
                .trust
                .iter()
                .map(|(scope, settings)| settings.trust(scope))
                .collect(),
        }
    }

    /// The file a host directory's config lives in.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(CONFIG_FILE)
    }

    /// The resolved policy of the tool `name`: its `[tools.<name>]` entry
    /// over what the toolset gives a toolset tool over `[defaults]`.
    pub fn policy_for(&self, name: &str) -> anyhow::Result<ToolPolicy> {
        let implied = self.declared_toolset().and_then(|t| t.settings_for(name));
        self.policy_over(name, implied.as_ref())
    }

    /// The resolved policy of the tool `name`: its `[tools.<name>]` entry
    /// over `implied` (what its toolset gives it) over `[defaults]`.
    pub(crate) fn policy_over(
        &self,
        name: &str,
        implied: Option<&ToolSettings>,
    ) -> anyhow::Result<ToolPolicy> {
        let layers: Vec<&ToolSettings> = self
            .tools
            .get(name)
            .into_iter()
            .chain(implied)
            .chain([&self.defaults])
            .collect();
        let http = AllowList::parse(&first(&layers, |s| s.http.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `http` grant for tool `{name}`"))?;
        let sessions = Channels::parse(&first(&layers, |s| s.sessions.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `sessions` grant for tool `{name}`"))?;
        let send_as = Principals::parse(&first(&layers, |s| s.send_as.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `send_as` grant for tool `{name}`"))?;
        Ok(ToolPolicy {
            enabled: first(&layers, |s| s.enabled).unwrap_or(true),
            permission: first(&layers, |s| s.permission).unwrap_or_default(),
            timeout: Duration::from_millis(
                first(&layers, |s| s.timeout_ms).unwrap_or(DEFAULT_TIMEOUT_MS),
            ),
            memory_bytes: usize::try_from(
                first(&layers, |s| s.memory_mb).unwrap_or(DEFAULT_MEMORY_MB),
            )
            .unwrap_or(usize::MAX)
            .saturating_mul(1024 * 1024),
            grants: Grants {
                workspace: first(&layers, |s| s.workspace).unwrap_or_default(),
                state: first(&layers, |s| s.state).unwrap_or_default(),
                artifacts: first(&layers, |s| s.artifacts).unwrap_or_default(),
                metrics: first(&layers, |s| s.metrics).unwrap_or_default(),
                sessions,
                send_as,
                reminders: first(&layers, |s| s.reminders.clone()),
                kv: first(&layers, |s| s.kv.clone()).unwrap_or_default(),
                http: Arc::new(http),
                env: first(&layers, |s| s.env.clone()).unwrap_or_default(),
                ask: first(&layers, |s| s.ask.clone()).unwrap_or_default(),
            },
            limits: ToolLimits {
                input_bytes: first(&layers, |s| s.max_input_bytes)
                    .unwrap_or(DEFAULT_MAX_INPUT_BYTES),
                output_bytes: first(&layers, |s| s.max_output_bytes)
                    .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES),
                stdio_bytes: first(&layers, |s| s.max_stdio_bytes)
                    .unwrap_or(DEFAULT_MAX_STDIO_BYTES),
                http_requests: first(&layers, |s| s.max_http_requests),
                http_response_bytes: first(&layers, |s| s.max_http_response_bytes),
                host: self.limits.host_budget(),
            },
            task: first(&layers, |s| s.task).unwrap_or_default(),
            description: self.tools.get(name).and_then(|s| s.description.clone()),
            effect: self.tools.get(name).and_then(|s| s.effect),
        })
    }

    /// The built-in toolset, if the config declares it.
    pub fn declared_toolset(&self) -> Option<&Toolset> {
        self.toolset.agent.as_ref()
    }

    /// The declared MCP server `name`.
    pub fn mcp_server(&self, name: &str) -> Option<&McpServer> {
        self.mcp_servers.iter().find(|s| s.name == name)
    }

    /// The largest memory cap any tool may get, for sizing the instance pool.
    pub fn max_memory_bytes(&self) -> usize {
        let mb = std::iter::once(&self.defaults)
            .chain(self.tools.values())
            .filter_map(|s| s.memory_mb)
            .chain([DEFAULT_MEMORY_MB])
            .max()
            .unwrap_or(DEFAULT_MEMORY_MB);
        usize::try_from(mb).unwrap_or(usize::MAX) * 1024 * 1024
    }

    /// Check every value; [`Config::parse`] does, and so does a host built
    /// from a config made in code.
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(name) = &self.name {
            anyhow::ensure!(
                is_slug(name),
                "`name` = {name:?} is not a slug: use 1-64 characters of a-z, 0-9, `-` and `_`"
            );
        }
        for (name, source) in &self.sources {
            crate::tool::check_name(name)
                .map_err(|e| anyhow::anyhow!("in [sources]: `{name}`: {e}"))?;
            let reference = crate::oci::Reference::parse(source)
                .map_err(|e| anyhow::anyhow!("in [sources]: `{name}`: {e}"))?;
            anyhow::ensure!(
                reference.digest.is_some(),
                "in [sources]: `{name}` = {source:?} is not pinned to a digest: run `toolhost \
                 add {source}` (or `toolhost update {name}`) to pin it"
            );
        }
        for (scope, settings) in &self.trust {
            trust::check_scope(scope, settings)?;
        }
        self.registries.validate()?;
        self.server.validate().context("in [server]")?;
        self.telemetry.validate()?;
        self.state.validate().context("in [state]")?;
        self.limits.validate().context("in [limits]")?;
        anyhow::ensure!(
            self.defaults.description.is_none() && self.defaults.effect.is_none(),
            "in [defaults]: `description` and `effect` describe one function of a plain \
             component; set them in its [tools.<name>] entry"
        );
        let sections = std::iter::once(("[defaults]".to_string(), &self.defaults))
            .chain(self.tools.iter().map(|(n, s)| (format!("[tools.{n}]"), s)));
        for (section, settings) in sections {
            settings
                .validate()
                .with_context(|| format!("in {section}"))?;
        }
        if let Some(toolset) = &self.toolset.agent {
            toolset.validate().context("in [toolset]")?;
        }
        mcp::cross_check(&self.mcp_servers, &self.toolset.mcp)?;
        for name in self.agents.keys() {
            check_agent_name(name).with_context(|| format!("in [agents.{name}]"))?;
        }
        let servers = (self
            .mcp_servers
            .iter()
            .map(|s| ("the default agent".to_string(), s)))
        .chain(self.agents.iter().flat_map(|(agent, spec)| {
            spec.mcp_servers
                .iter()
                .map(move |s| (format!("[agents.{agent}]"), s))
        }));
        mcp::check_shared(servers)?;
        Ok(())
    }

    /// The default agent's definition as the registry echoes it (see
    /// `AgentVersion::definition` in `crate::agents`).
    pub fn definition(&self) -> serde_json::Value {
        agent::default_definition(self)
    }

    /// The config an agent's tools are loaded with: this one's settings and
    /// per-tool grants, with the agent's toolsets, custom tools and MCP
    /// servers in place of the default agent's.
    pub fn for_agent(&self, spec: &AgentSpec) -> Config {
        Config {
            toolset: spec.toolsets(),
            custom_tools: spec.custom_tools(),
            agent_tools: spec.agent_tools.clone(),
            mcp_servers: spec.mcp_servers.clone(),
            agents: BTreeMap::new(),
            ..self.clone()
        }
    }
}

/// Whether `name` is 1-64 characters of a-z, 0-9, `-` and `_`.
fn is_slug(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// An agent's name is a directory name under the state directory and a
/// path segment of the HTTP API: a slug, and not the default agent's.
pub fn check_agent_name(name: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        is_slug(name),
        "the agent name {name:?} is not a slug: use 1-64 characters of a-z, 0-9, `-` and `_`"
    );
    anyhow::ensure!(
        name != crate::agent_pin::DEFAULT_AGENT,
        "`{name}` is the agent the tools folder and toolhost.toml make; name yours otherwise"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::workspace::DirAccess;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("toolhost.toml"))
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let err = parse("name = \"a\"\n[defaults]\ntimeout_ms = 5\ntimeuot_ms = 6\n").unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("timeuot_ms"), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
    }

    #[test]
    fn tool_entry_overrides_defaults() {
        let config = parse(
            r#"
            [defaults]
            permission = "always_ask"
            timeout_ms = 2000
            workspace = "read"
            [tools.echo]
            permission = "always_allow"
            memory_mb = 64
            "#,
        )
        .unwrap();
        let echo = config.policy_for("echo").unwrap();
        assert_eq!(echo.permission, Permission::AlwaysAllow);
        assert_eq!(echo.timeout, Duration::from_millis(2000));
        assert_eq!(echo.memory_bytes, 64 << 20);
        assert_eq!(echo.grants.workspace, DirAccess::Read);
        let other = config.policy_for("other").unwrap();
        assert_eq!(other.permission, Permission::AlwaysAsk);
        assert_eq!(other.memory_bytes, (DEFAULT_MEMORY_MB as usize) << 20);
    }

    #[test]
    fn debug_output_hides_env_values() {
        let config = parse("[tools.a]\nenv = { TOKEN = \"s3cret\" }\n").unwrap();
        let shown = format!("{config:?} {:?}", config.policy_for("a").unwrap());
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
    }

    #[test]
    fn defaults_deny_everything() {
        let policy = Config::default().policy_for("any").unwrap();
        assert!(policy.enabled);
        assert_eq!(policy.grants.workspace, DirAccess::None);
        assert!(policy.grants.kv.is_empty());
        assert!(policy.grants.http.is_empty());
        assert!(policy.grants.env.is_empty());
    }

    #[test]
    fn caps_resolve_per_tool() {
        let config = parse(
            "[defaults]\nmax_output_bytes = 2048\n[tools.a]\nmax_http_requests = 3\nmax_stdio_bytes = 0\n",
        )
        .unwrap();
        let a = config.policy_for("a").unwrap().limits;
        assert_eq!(a.output_bytes, 2048);
        assert_eq!(a.http_requests, Some(3));
        assert_eq!(a.http_response_bytes, None);
        assert_eq!(a.stdio_bytes, 0);
        assert_eq!(a.input_bytes, DEFAULT_MAX_INPUT_BYTES);
        assert!(parse("[defaults]\nmax_output_bytes = 0\n").is_err());
        assert!(parse("[defaults]\nmax_input_bytes = 999999999999\n").is_err());
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let err = parse("[tools.x]\nmemory_mb = 0\n").unwrap_err();
        assert!(format!("{err:#}").contains("[tools.x]"), "{err:#}");
        assert!(parse("[defaults]\ntimeout_ms = 0\n").is_err());
        assert!(parse("[defaults]\npermission = \"sometimes\"\n").is_err());
        assert!(parse("name = \"Has Spaces\"\n").is_err());
        for key in ["session_history_mb", "history_mb"] {
            let err = parse(&format!("[server]\n{key} = 0\n")).unwrap_err();
            assert!(format!("{err:#}").contains(key), "{err:#}");
        }
        for key in ["max_sessions", "max_waiting_calls"] {
            let err = parse(&format!("[server]\n{key} = 0\n")).unwrap_err();
            assert!(format!("{err:#}").contains(key), "{err:#}");
            let ok = parse(&format!("[server]\n{key} = 5\n")).unwrap();
            let server = &ok.server;
            assert_eq!(
                server.max_sessions.or(server.max_waiting_calls),
                Some(5),
                "{key}"
            );
        }
    }

    #[test]
    fn telemetry_and_the_new_grants_are_checked() {
        let ok = parse(
            "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\nheaders = { x-api-key = \"k\" }\n\
             [tools.t]\nstate = \"read\"\nartifacts = \"write\"\nmetrics = true\n",
        )
        .unwrap();
        assert_eq!(ok.telemetry.export_interval(), Duration::from_secs(60));
        assert!(
            !format!("{:?}", ok.telemetry).contains("\"k\""),
            "header values stay hidden"
        );
        let policy = ok.policy_for("t").unwrap();
        assert_eq!(
            (
                policy.grants.state,
                policy.grants.artifacts,
                policy.grants.metrics
            ),
            (DirAccess::Read, DirAccess::Write, true)
        );
        for (text, expected) in [
            (
                "[telemetry]\notlp_endpoint = \"ftp://x\"\n",
                "not an http:// or https:// URL",
            ),
            (
                "[telemetry]\nexport_interval_ms = 5\n",
                "export_interval_ms",
            ),
            (
                "[telemetry]\nheaders = { \"bad header\" = \"v\" }\n",
                "is not a header name",
            ),
            ("[tools.t]\nstate = \"all\"\n", "state"),
            (
                "[limits]\nsession_artifacts_mb = 0\n",
                "session_artifacts_mb",
            ),
        ] {
            let err = format!("{:#}", parse(text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
