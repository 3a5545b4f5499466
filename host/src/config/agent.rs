//! `[agents.<name>]`: named agents beside the default one, each a tool set
//! in the registry page's shape. The same definition arrives as JSON over
//! the HTTP API (`POST /<slug>/v1/agents`).
//!
//! ```toml
//! [agents.weather]
//! components = ["echo"]              # which files of the tools folder; "*" for all
//! tools = [
//!   { type = "agent_toolset", default_config = { enabled = false },
//!     configs = [{ name = "read", enabled = true }] },
//!   { type = "custom", name = "get_weather", description = "…",
//!     input_schema = { type = "object", properties = { location = { type = "string" } } } },
//!   { type = "mcp_toolset", mcp_server_name = "tickets" },
//! ]
//! mcp_servers = [{ name = "tickets", type = "url", url = "https://mcp.example.com/tickets" }]
//! # or: tools_file = "agents/weather.json" (a JSON `tools` array, relative to the host directory)
//! ```
//!
//! Every `tools` entry carries a `type`: `agent_toolset` (or its dated form),
//! `mcp_toolset` or `custom`; anything else is refused, as are more than
//! [`MAX_TOOLS`] entries. The toolset entries follow `[toolset]`'s rules
//! (`crate::config::toolset`), `mcp_toolset` and `mcp_servers` are checked
//! against each other both ways, and a custom tool needs an object input
//! schema, a description of at most 4096 characters and a name no built-in
//! tool has.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::CustomToolSpec;
use super::agent_tools::AgentToolSpec;
use super::mcp::{self, McpServer, McpTransport};
use super::toolset::{
    Entry, MCP_TOOLSET_TYPE, McpToolset, TOOLSET_TYPE, TOOLSET_TYPE_DATED, Toolset, Toolsets,
    parse_entry,
};
use crate::caps::http::AllowList;
use crate::tool::{self, MAX_TOOLS};

/// The largest `tools_file` read.
pub const MAX_TOOLS_FILE_BYTES: usize = 4 * 1024 * 1024;

/// The `type` of a custom tool entry.
pub const CUSTOM_TYPE: &str = "custom";
/// The `components` entry that selects every file of the tools folder.
pub const ALL_COMPONENTS: &str = "*";

/// One entry of an agent's `tools` array.
#[derive(Debug, Clone)]
pub enum AgentTool {
    /// The built-in toolset.
    Toolset(Toolset),
    /// The tools of one of the agent's MCP servers.
    Mcp(McpToolset),
    /// A tool the session's client runs.
    Custom {
        /// Its name.
        name: String,
        /// Its contract.
        spec: CustomToolSpec,
    },
}

/// Which files of the host's tools folder an agent serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Components {
    /// The files of these slugs (none when `components` is absent).
    Named(BTreeSet<String>),
    /// Every file (`components = ["*"]`).
    All,
}

/// A named agent: its `tools` array, its MCP servers and which folder
/// files it serves.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The `tools` array, in the order written.
    pub tools: Vec<AgentTool>,
    /// The MCP servers its `mcp_toolset` entries mount.
    pub mcp_servers: Vec<McpServer>,
    /// Which files of the tools folder it serves.
    pub components: Components,
    /// `tools_file`, when the array was read from a JSON file.
    pub tools_file: Option<PathBuf>,
    /// Its agent-execution tools (a toolhost key, as `[agent_tools.*]`).
    pub agent_tools: BTreeMap<String, AgentToolSpec>,
    /// The `mcp_servers` entries as written, for the echo.
    servers_as_written: Vec<Value>,
}

/// An agent definition as written, in TOML or JSON.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tools_file: Option<PathBuf>,
    #[serde(default)]
    mcp_servers: Vec<Value>,
    #[serde(default)]
    components: Option<Vec<String>>,
    #[serde(default)]
    agent_tools: BTreeMap<String, AgentToolSpec>,
}

impl<'de> Deserialize<'de> for AgentSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawAgent::deserialize(deserializer)?;
        raw.check()
            .map_err(|e| serde::de::Error::custom(format!("{e:#}")))
    }
}

impl AgentSpec {
    /// An agent posted over the HTTP API: the JSON body's `tools`,
    /// `mcp_servers` and `components` (other keys, such as `name`, are the
    /// caller's to take out first). Servers it declares must be `url` ones
    /// on origins `allowed` lists (`[server] agent_mcp_servers`), reached
    /// under its screening: starting a process, and reaching elsewhere, is
    /// for `toolhost.toml` alone.
    pub fn from_json(
        body: &serde_json::Map<String, Value>,
        allowed: &AllowList,
    ) -> anyhow::Result<Self> {
        let mut spec = Self::from_stored(body)?;
        let toolset_http = spec
            .toolsets()
            .agent
            .is_some_and(|set| !set.http.is_empty());
        anyhow::ensure!(
            !toolset_http,
            "the toolset's `http` (what web_fetch may fetch) is granted in toolhost.toml \
             ([tools.web_fetch] http), not over the API"
        );
        for server in &spec.mcp_servers {
            match &server.transport {
                McpTransport::Stdio { .. } => anyhow::bail!(
                    "mcp_servers `{}`: an agent made over the API may reach MCP servers only by \
                     `type = \"url\"`; servers the host starts as processes are declared in \
                     toolhost.toml",
                    server.name
                ),
                McpTransport::Url { headers, .. } if !headers.is_empty() => anyhow::bail!(
                    "mcp_servers `{}`: `headers` would keep their values with the agent, and \
                     secrets are never stored: send per-session secrets with `auth_headers` \
                     (from each session's `credentials`), or declare the server in \
                     toolhost.toml",
                    server.name
                ),
                McpTransport::Url { .. } => {}
            }
        }
        for server in &mut spec.mcp_servers {
            server.screen(allowed)?;
        }
        Ok(spec)
    }

    /// A definition as [`AgentSpec::to_stored_json`] wrote it, whichever
    /// way the agent was declared (a version is loaded again from it).
    pub fn from_stored(body: &serde_json::Map<String, Value>) -> anyhow::Result<Self> {
        let raw = RawAgent::deserialize(Value::Object(body.clone()))?;
        anyhow::ensure!(
            raw.tools_file.is_none(),
            "`tools_file` is read from the host directory, only by `toolhost.toml`; send \
             `tools` instead"
        );
        let mut spec = raw.check()?;
        for (name, tool) in &mut spec.agent_tools {
            anyhow::ensure!(
                tool.script_file.is_none(),
                "agent_tools `{name}`: `script_file` is read from the host directory, only by \
                 `toolhost.toml`; send `script` instead"
            );
            tool.resolve(name, Path::new("."))?;
        }
        Ok(spec)
    }

    /// Read `tools_file` and the agent-execution tools' `script_file`,
    /// relative to the host directory `dir` (for `toolhost.toml`'s agents).
    pub(super) fn read_files(&mut self, name: &str, dir: &Path) -> anyhow::Result<()> {
        for (tool_name, tool) in &mut self.agent_tools {
            tool.resolve(tool_name, dir)
                .with_context(|| format!("in [agents.{name}]"))?;
        }
        let Some(file) = &self.tools_file else {
            return Ok(());
        };
        let path = dir.join(file);
        let text = super::agent_tools::read_bounded(&path, MAX_TOOLS_FILE_BYTES)
            .with_context(|| format!("[agents.{name}] tools_file {}", path.display()))?;
        let entries: Vec<Value> = serde_json::from_str(&text).with_context(|| {
            format!(
                "[agents.{name}] tools_file {}: expected a JSON array of tool entries",
                path.display()
            )
        })?;
        self.tools = parse_tools(entries, &format!("{}", path.display()))?;
        cross_check(&self.tools, &self.mcp_servers)
    }

    /// Its toolsets, as the registry loads them.
    pub fn toolsets(&self) -> Toolsets {
        let mut toolsets = Toolsets::default();
        for entry in &self.tools {
            match entry {
                AgentTool::Toolset(set) => toolsets.agent = Some(set.clone()),
                AgentTool::Mcp(set) => toolsets.mcp.push(set.clone()),
                AgentTool::Custom { .. } => {}
            }
        }
        toolsets
    }

    /// Its custom tools, by name.
    pub fn custom_tools(&self) -> BTreeMap<String, CustomToolSpec> {
        self.tools
            .iter()
            .filter_map(|entry| match entry {
                AgentTool::Custom { name, spec } => Some((name.clone(), spec.clone())),
                _ => None,
            })
            .collect()
    }

    /// The definition as the registry echoes it: the `tools` array in the
    /// order written with the defaults filled in and the dated toolset
    /// type, `mcp_servers` (how each is reached, no secrets) and
    /// `components`.
    pub fn to_json(&self) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|entry| match entry {
                AgentTool::Toolset(set) => set.to_json(),
                AgentTool::Mcp(set) => set.to_json(),
                AgentTool::Custom { name, spec } => custom_json(name, spec),
            })
            .collect();
        let servers: Vec<Value> = self.mcp_servers.iter().map(McpServer::to_json).collect();
        let components = match &self.components {
            Components::All => vec![ALL_COMPONENTS.to_string()],
            Components::Named(slugs) => slugs.iter().cloned().collect(),
        };
        json!({
            "tools": tools,
            "mcp_servers": servers,
            "components": components,
            "agent_tools": agent_tools_json(&self.agent_tools),
        })
    }

    /// The definition as stored for an agent made over the API: what
    /// [`AgentSpec::from_json`] reads back, header values included.
    pub fn to_stored_json(&self) -> Value {
        let mut json = self.to_json();
        json["mcp_servers"] = Value::Array(self.servers_as_written.clone());
        json
    }
}

impl RawAgent {
    /// Check every entry; `tools_file` is read later, by the config's
    /// loader, which knows the host directory.
    fn check(self) -> anyhow::Result<AgentSpec> {
        anyhow::ensure!(
            !(self.tools.is_some() && self.tools_file.is_some()),
            "set `tools` or `tools_file`, not both"
        );
        let servers_as_written = self.mcp_servers.clone();
        let mcp_servers = self
            .mcp_servers
            .into_iter()
            .enumerate()
            .map(|(index, server)| {
                McpServer::deserialize(server).with_context(|| format!("in mcp_servers[{index}]"))
            })
            .collect::<anyhow::Result<Vec<McpServer>>>()?;
        let tools = parse_tools(self.tools.unwrap_or_default(), "tools")?;
        if self.tools_file.is_none() {
            cross_check(&tools, &mcp_servers)?;
        }
        let components = match self.components {
            None => Components::Named(BTreeSet::new()),
            Some(names) if names.iter().any(|n| n == ALL_COMPONENTS) => {
                anyhow::ensure!(
                    names.len() == 1,
                    "`components`: \"*\" selects every file of the tools folder; name no other \
                     beside it"
                );
                Components::All
            }
            Some(names) => {
                for name in &names {
                    anyhow::ensure!(
                        tool::is_identifier(name),
                        "`components` entry {name:?} is not a file's slug (the name of \
                         `tools/<slug>.wasm`: 1-64 characters of A-Z, a-z, 0-9, `_` and `-`)"
                    );
                }
                Components::Named(names.into_iter().collect())
            }
        };
        Ok(AgentSpec {
            tools,
            mcp_servers,
            components,
            tools_file: self.tools_file,
            agent_tools: self.agent_tools,
            servers_as_written,
        })
    }
}

/// Parse a `tools` array (`at` names it in errors).
fn parse_tools(entries: Vec<Value>, at: &str) -> anyhow::Result<Vec<AgentTool>> {
    anyhow::ensure!(
        entries.len() <= MAX_TOOLS,
        "{at}: {} tools are declared; an agent declares at most {MAX_TOOLS}",
        entries.len()
    );
    let mut tools = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        let label = format!("{at}[{index}]");
        let kind = match entry.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(other) => anyhow::bail!("{label}: `type` must be a string, not {other}"),
            None => anyhow::bail!(
                "{label}: every entry needs a `type`: {TOOLSET_TYPE:?}, {TOOLSET_TYPE_DATED:?}, \
                 {MCP_TOOLSET_TYPE:?} or {CUSTOM_TYPE:?}"
            ),
        };
        let parsed = match kind.as_str() {
            CUSTOM_TYPE => parse_custom(entry, &label)?,
            TOOLSET_TYPE | TOOLSET_TYPE_DATED | MCP_TOOLSET_TYPE => {
                let entry = toml::Value::try_from(&entry).map_err(|e| {
                    anyhow::anyhow!("{label}: a toolset entry holds plain values (no null): {e}")
                })?;
                match parse_entry(entry, &label)? {
                    Entry::Agent(set) => AgentTool::Toolset(set),
                    Entry::Mcp(set) => AgentTool::Mcp(set),
                }
            }
            other => anyhow::bail!(
                "{label}: `type` = {other:?} is not a tool type: expected {TOOLSET_TYPE:?} (or \
                 {TOOLSET_TYPE_DATED:?}), {MCP_TOOLSET_TYPE:?} or {CUSTOM_TYPE:?}"
            ),
        };
        tools.push(parsed);
    }
    check_unique(&tools)?;
    Ok(tools)
}

/// A custom tool entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCustom {
    #[serde(rename = "type")]
    _kind: String,
    name: String,
    description: Option<String>,
    input_schema: Value,
    #[serde(default)]
    effect: Option<crate::tool::Effect>,
}

fn parse_custom(entry: Value, at: &str) -> anyhow::Result<AgentTool> {
    let raw = RawCustom::deserialize(entry).with_context(|| format!("in {at}"))?;
    let name = raw.name;
    let at = format!("{at} (custom tool `{name}`)");
    tool::check_name(&name).with_context(|| at.clone())?;
    let description = raw
        .description
        .with_context(|| format!("{at}: `description` is required"))?;
    tool::check_description(&description).with_context(|| at.clone())?;
    tool::check_object_schema("input", &raw.input_schema.to_string())
        .with_context(|| at.clone())?;
    Ok(AgentTool::Custom {
        name,
        spec: CustomToolSpec {
            description,
            input_schema: raw.input_schema,
            effect: raw.effect,
        },
    })
}

/// At most one built-in toolset, one toolset per MCP server and one custom
/// tool per name.
fn check_unique(tools: &[AgentTool]) -> anyhow::Result<()> {
    let mut toolsets = 0;
    let mut servers = BTreeSet::new();
    let mut names = BTreeSet::new();
    for entry in tools {
        match entry {
            AgentTool::Toolset(_) => toolsets += 1,
            AgentTool::Mcp(set) => anyhow::ensure!(
                servers.insert(set.server.as_str()),
                "a second mcp_toolset for the MCP server `{}`; declare one toolset per server",
                set.server
            ),
            AgentTool::Custom { name, .. } => anyhow::ensure!(
                names.insert(name.as_str()),
                "the custom tool `{name}` is declared twice"
            ),
        }
    }
    anyhow::ensure!(
        toolsets <= 1,
        "{toolsets} entries of type `agent_toolset` are declared; declare it once"
    );
    Ok(())
}

/// `mcp_toolset` entries and `mcp_servers`, checked against each other.
fn cross_check(tools: &[AgentTool], servers: &[McpServer]) -> anyhow::Result<()> {
    let toolsets: Vec<McpToolset> = tools
        .iter()
        .filter_map(|entry| match entry {
            AgentTool::Mcp(set) => Some(set.clone()),
            _ => None,
        })
        .collect();
    mcp::cross_check(servers, &toolsets)
}

fn custom_json(name: &str, spec: &CustomToolSpec) -> Value {
    let mut json = json!({
        "type": CUSTOM_TYPE,
        "name": name,
        "description": spec.description,
        "input_schema": spec.input_schema,
    });
    if let Some(effect) = spec.effect {
        json["effect"] = json!(effect);
    }
    json
}

/// The default agent's definition as the registry echoes it: the declared
/// toolsets and the `[custom_tools.*]` as `custom` entries, its MCP
/// servers, and every file of the tools folder.
pub(crate) fn default_definition(config: &super::Config) -> Value {
    let tools: Vec<Value> = (config.toolset.to_json().into_iter())
        .chain(
            config
                .custom_tools
                .iter()
                .map(|(name, spec)| custom_json(name, spec)),
        )
        .collect();
    let servers: Vec<Value> = config.mcp_servers.iter().map(McpServer::to_json).collect();
    json!({
        "tools": tools,
        "mcp_servers": servers,
        "components": [ALL_COMPONENTS],
        "agent_tools": agent_tools_json(&config.agent_tools),
    })
}

/// Agent-execution tools as echoed (and stored): description, schema,
/// effect and script.
fn agent_tools_json(tools: &BTreeMap<String, AgentToolSpec>) -> Value {
    tools
        .iter()
        .map(|(name, tool)| {
            let mut json = json!({
                "description": tool.description,
                "input_schema": tool.input_schema,
                "script": tool.script(),
            });
            if let Some(effect) = tool.effect {
                json["effect"] = json!(effect);
            }
            (name.clone(), json)
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn parse_in(dir: &Path, text: &str) -> anyhow::Result<Config> {
        Config::parse(text, &dir.join("toolhost.toml"))
    }

    #[test]
    fn a_tools_file_is_read_from_the_host_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("agents")).unwrap();
        std::fs::write(
            dir.path().join("agents/weather.json"),
            r#"[{"type": "agent_toolset_20260401"},
                {"type": "custom", "name": "get_weather", "description": "Weather now.",
                 "input_schema": {"type": "object"}}]"#,
        )
        .unwrap();
        let config = parse_in(
            dir.path(),
            "[agents.weather]\ntools_file = \"agents/weather.json\"\n",
        )
        .unwrap();
        let weather = &config.agents["weather"];
        assert!(weather.toolsets().agent.is_some());
        assert!(weather.custom_tools().contains_key("get_weather"));
        assert_eq!(weather.components, Components::Named(BTreeSet::new()));

        std::fs::write(
            dir.path().join("agents/weather.json"),
            r#"[{"type": "bash_20250124"}]"#,
        )
        .unwrap();
        let err = parse_in(
            dir.path(),
            "[agents.weather]\ntools_file = \"agents/weather.json\"\n",
        )
        .unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("weather.json[0]") && text.contains("bash_20250124"),
            "{text}"
        );
    }

    #[test]
    fn names_and_shared_servers_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let err = parse_in(dir.path(), "[agents.default]\ntools = []\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("name yours otherwise"),
            "{err:#}"
        );
        let err = parse_in(dir.path(), "[agents.Weather]\ntools = []\n").unwrap_err();
        assert!(format!("{err:#}").contains("not a slug"), "{err:#}");
        let server = |url: &str| {
            format!(
                "tools = [{{ type = \"mcp_toolset\", mcp_server_name = \"t\" }}]\n\
                 mcp_servers = [{{ name = \"t\", type = \"url\", url = \"{url}\" }}]\n"
            )
        };
        let text = format!(
            "[agents.a]\n{}[agents.b]\n{}",
            server("https://one.example"),
            server("https://two.example")
        );
        let err = parse_in(dir.path(), &text).unwrap_err();
        assert!(
            format!("{err:#}").contains("declared differently by [agents.a] and [agents.b]"),
            "{err:#}"
        );
        let same = format!(
            "[agents.a]\n{}[agents.b]\n{}",
            server("https://one.example"),
            server("https://one.example")
        );
        parse_in(dir.path(), &same).unwrap();
    }

    #[test]
    fn components_select_files_or_all() {
        let dir = tempfile::tempdir().unwrap();
        let config = parse_in(dir.path(), "[agents.a]\ncomponents = [\"*\"]\n").unwrap();
        assert_eq!(config.agents["a"].components, Components::All);
        let err = parse_in(dir.path(), "[agents.a]\ncomponents = [\"*\", \"echo\"]\n").unwrap_err();
        assert!(format!("{err:#}").contains("name no other"), "{err:#}");
        let err = parse_in(dir.path(), "[agents.a]\ncomponents = [\"../x\"]\n").unwrap_err();
        assert!(format!("{err:#}").contains("not a file's slug"), "{err:#}");
    }
}
