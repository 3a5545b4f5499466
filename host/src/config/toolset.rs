//! `[toolset]`: the built-in toolset (file and web tools shipped inside the
//! binary as components, `crate::toolset`) as `toolhost.toml` declares it
//! with `[toolset]` (or `[[toolset]]`) and configures it by
//! `default_config` + `configs`, and the table of its tools' names.
//!
//! ```toml
//! [toolset]
//! type = "agent_toolset"            # or the dated "agent_toolset_20260401"
//! default_config = { enabled = true, permission_policy = "always_allow" }
//! configs = [{ name = "write", permission_policy = "always_ask" }]
//! http = ["https://docs.rs"]         # what web_fetch may fetch, and bash reach
//! web_search = { provider = "searxng", url = "http://127.0.0.1:8888" }
//! ```
//!
//! The two `configs` forms do not accept the same names: the array form only
//! the built-in names of [`ARRAY_FORM_NAMES`] (anything else is an error);
//! the table form anything, so `list` and `delete` can be named only there,
//! and keys that are no toolset tool are kept but ignored, with a warning.
//!
//! `[[toolset]]` entries of `type = "mcp_toolset"` mount the tools of an MCP
//! server declared in `[[mcp_servers]]` (`crate::config::mcp`), configured
//! the same way; their `configs` name the tools the server reports (checked
//! when the server is listed) and may set each tool's `effect`.

use std::collections::BTreeMap;

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Permission, ToolSettings};
use crate::caps::http::AllowList;
use crate::caps::workspace::{DirAccess, Env};
use crate::tool::Effect;

/// The canonical toolset type, the one stored.
pub const TOOLSET_TYPE: &str = "agent_toolset";
/// The dated form of the type, accepted and echoed back in listings.
pub const TOOLSET_TYPE_DATED: &str = "agent_toolset_20260401";

/// The toolset tools that run as components, with the workspace access
/// each is granted unless `[tools.<name>]` says otherwise.
pub const COMPONENT_TOOLS: &[(&str, DirAccess)] = &[
    ("read", DirAccess::Read),
    ("write", DirAccess::Write),
    ("edit", DirAccess::Write),
    ("list", DirAccess::Read),
    ("delete", DirAccess::Write),
    ("glob", DirAccess::Read),
    ("grep", DirAccess::Read),
    ("web_fetch", DirAccess::None),
    ("web_search", DirAccess::None),
];

/// The toolset tools the host runs itself (not as components), with the
/// workspace access each is granted: `bash`, in an OS sandbox.
pub const NATIVE_TOOLS: &[(&str, DirAccess)] = &[("bash", DirAccess::Write)];

/// The names the array form of `configs` accepts (the registry's built-in
/// names; `list` and `delete` are not among them).
pub const ARRAY_FORM_NAMES: &[&str] = &[
    "bash",
    "edit",
    "read",
    "write",
    "glob",
    "grep",
    "web_fetch",
    "web_search",
];

/// Whether `name` is a toolset tool (a component or an unavailable one).
pub fn is_toolset_name(name: &str) -> bool {
    COMPONENT_TOOLS
        .iter()
        .chain(NATIVE_TOOLS)
        .any(|(tool, _)| *tool == name)
}

/// The type of a toolset of an MCP server's tools.
pub const MCP_TOOLSET_TYPE: &str = "mcp_toolset";

/// Every toolset `toolhost.toml` declares: the built-in one at most once,
/// and one per MCP server.
#[derive(Debug, Clone, Default)]
pub struct Toolsets {
    /// The built-in toolset, if declared.
    pub agent: Option<Toolset>,
    /// The MCP toolsets, in the order written.
    pub mcp: Vec<McpToolset>,
}

impl Toolsets {
    /// The declared toolsets as the registry echoes them (stored form,
    /// dated type): the built-in one first, then the MCP ones in order.
    pub fn to_json(&self) -> Vec<serde_json::Value> {
        (self.agent.iter().map(Toolset::to_json))
            .chain(self.mcp.iter().map(McpToolset::to_json))
            .collect()
    }
}

/// An `mcp_toolset`: the tools of one declared MCP server, configured by
/// `default_config` + `configs` like the built-in toolset.
#[derive(Debug, Clone)]
pub struct McpToolset {
    /// The `[[mcp_servers]]` entry whose tools it mounts.
    pub server: String,
    /// `default_config` and `configs` (`http` is always empty).
    pub settings: Toolset,
}

impl McpToolset {
    /// The toolset as listings echo it.
    pub fn to_json(&self) -> Value {
        let mut json = self.settings.to_json();
        json["type"] = json!(MCP_TOOLSET_TYPE);
        json["mcp_server_name"] = json!(self.server);
        if let Some(map) = json.as_object_mut() {
            map.remove("http");
        }
        json
    }

    /// The names its `configs` give that are not among `reported` (the
    /// tools the server reports): an error in the array form, ignored in
    /// the table form.
    pub fn unreported<'a>(&'a self, reported: &[&str]) -> Vec<&'a str> {
        let named: Vec<&str> = match &self.settings.configs {
            Configs::Array(entries) => entries.iter().map(|(name, _)| name.as_str()).collect(),
            Configs::Table { tools, .. } => tools.keys().map(String::as_str).collect(),
        };
        named
            .into_iter()
            .filter(|name| !reported.contains(name))
            .collect()
    }
}

/// One declared toolset, as stored (canonical type, configs as written).
#[derive(Debug, Clone, Default)]
pub struct Toolset {
    /// The baseline for every tool in the set.
    pub default_config: ToolConfig,
    /// Per-tool overrides, in the form they were written.
    pub configs: Configs,
    /// Origins `web_fetch` may fetch from (the toolset's HTTP allow-list).
    pub http: Vec<String>,
    /// The search engine `web_search` asks, if one is configured.
    pub web_search: Option<WebSearch>,
    /// How `bash`'s sandbox is made.
    pub bash: BashSettings,
}

/// `enabled` and `permission_policy` of the toolset or of one tool (and,
/// for an MCP server's tool, its `effect`); unset fields inherit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolConfig {
    /// Whether the tool is handed to the agent at all.
    pub enabled: Option<bool>,
    /// Whether its calls wait for an approval.
    pub permission_policy: Option<Permission>,
    /// What an MCP server's tool's calls do, over what its annotations say.
    pub effect: Option<Effect>,
}

/// `configs`, in one of its two forms.
#[derive(Debug, Clone)]
pub enum Configs {
    /// `configs = [{ name = "write", … }]`: names checked against
    /// [`ARRAY_FORM_NAMES`].
    Array(Vec<(String, ToolConfig)>),
    /// `configs.list = { … }`: any key; those that name no toolset tool are
    /// kept (as written) but ignored.
    Table {
        /// Entries for toolset tools.
        tools: BTreeMap<String, ToolConfig>,
        /// Entries for names that are no toolset tool.
        ignored: BTreeMap<String, Value>,
    },
}

impl Default for Configs {
    fn default() -> Self {
        Self::Array(Vec::new())
    }
}

impl Configs {
    /// The configured entries, in either form.
    fn entries(&self) -> Vec<&ToolConfig> {
        match self {
            Self::Array(entries) => entries.iter().map(|(_, config)| config).collect(),
            Self::Table { tools, .. } => tools.values().collect(),
        }
    }
}

/// A tool's resolved toolset configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// Whether it is listed and callable.
    pub enabled: bool,
    /// Whether calls need approval.
    pub permission: Permission,
    /// The effect set for it, if any (MCP toolsets only).
    pub effect: Option<Effect>,
}

impl Toolset {
    /// The configuration of the tool `name`: its `configs` entry over
    /// `default_config` over enabled + always_allow.
    pub fn resolve(&self, name: &str) -> Resolved {
        let own = match &self.configs {
            Configs::Array(entries) => entries
                .iter()
                .find(|(tool, _)| tool == name)
                .map(|(_, config)| *config),
            Configs::Table { tools, .. } => tools.get(name).copied(),
        }
        .unwrap_or_default();
        Resolved {
            enabled: own.enabled.or(self.default_config.enabled).unwrap_or(true),
            permission: own
                .permission_policy
                .or(self.default_config.permission_policy)
                .unwrap_or_default(),
            effect: own.effect.or(self.default_config.effect),
        }
    }

    /// The settings a toolset tool gets from the toolset: its resolved
    /// `enabled` and permission, and its implied grants (workspace access
    /// by what it does, HTTP only for `web_fetch` and `bash` (through its
    /// proxy), nothing else). A
    /// `[tools.<name>]` entry overrides them; `None` if `name` is no
    /// toolset component.
    pub fn settings_for(&self, name: &str) -> Option<ToolSettings> {
        let (_, workspace) = COMPONENT_TOOLS
            .iter()
            .chain(NATIVE_TOOLS)
            .find(|(tool, _)| *tool == name)?;
        let resolved = self.resolve(name);
        let (http, env) = match (name, &self.web_search) {
            ("web_fetch" | "bash", _) => (self.http.clone(), Env::default()),
            ("web_search", Some(engine)) => (vec![engine.origin()], engine.env()),
            _ => (Vec::new(), Env::default()),
        };
        Some(ToolSettings {
            enabled: Some(resolved.enabled),
            permission: Some(resolved.permission),
            workspace: Some(*workspace),
            kv: Some(Vec::new()),
            http: Some(http),
            env: Some(env),
            ..ToolSettings::default()
        })
    }

    /// The component tools this toolset enables that can run here (all
    /// but `web_search` without a search engine).
    pub fn components(&self) -> impl Iterator<Item = &'static str> + '_ {
        COMPONENT_TOOLS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| self.resolve(name).enabled)
            .filter(|name| *name != "web_search" || self.web_search.is_some())
    }

    /// Whether this toolset enables `bash` (which runs only where its
    /// sandbox does: [`crate::bash`]).
    pub fn enables_bash(&self) -> bool {
        self.resolve("bash").enabled
    }

    /// The component tools this toolset enables that cannot run for want
    /// of configuration (`web_search` without a search engine), with why.
    pub fn unavailable(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.web_search
            .is_none()
            .then_some(("web_search", web_search::NOT_CONFIGURED))
            .into_iter()
            .filter(|(name, _)| self.resolve(name).enabled)
    }

    /// The table-form keys that name no toolset tool (kept, ignored).
    pub fn ignored_keys(&self) -> Vec<&str> {
        match &self.configs {
            Configs::Table { ignored, .. } => ignored.keys().map(String::as_str).collect(),
            Configs::Array(_) => Vec::new(),
        }
    }

    /// The toolset as listings echo it: the dated type, `default_config`
    /// with its defaults filled in, `configs` in the form it was written.
    pub fn to_json(&self) -> Value {
        let configs = match &self.configs {
            Configs::Array(entries) => Value::Array(
                entries
                    .iter()
                    .map(|(name, config)| {
                        let mut entry = config.to_json();
                        entry.insert("name".into(), json!(name));
                        Value::Object(entry)
                    })
                    .collect(),
            ),
            Configs::Table { tools, ignored } => Value::Object(
                tools
                    .iter()
                    .map(|(name, config)| (name.clone(), Value::Object(config.to_json())))
                    .chain(ignored.iter().map(|(k, v)| (k.clone(), v.clone())))
                    .collect(),
            ),
        };
        let defaults = ToolConfig {
            enabled: Some(self.default_config.enabled.unwrap_or(true)),
            permission_policy: Some(self.default_config.permission_policy.unwrap_or_default()),
            effect: self.default_config.effect,
        };
        let mut echoed = json!({
            "type": TOOLSET_TYPE_DATED,
            "default_config": defaults.to_json(),
            "configs": configs,
            "http": self.http,
        });
        if let Some(engine) = &self.web_search {
            echoed["web_search"] = json!({ "provider": engine.provider, "url": engine.url });
        }
        echoed
    }

    /// Check the HTTP allow-list and the search engine.
    pub(crate) fn validate(&self) -> anyhow::Result<()> {
        AllowList::parse(&self.http).context("invalid `http` entry")?;
        if let Some(engine) = &self.web_search {
            engine.validate()?;
        }
        self.bash.validate()?;
        Ok(())
    }
}

impl ToolConfig {
    fn to_json(self) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        if let Some(enabled) = self.enabled {
            map.insert("enabled".into(), json!(enabled));
        }
        if let Some(policy) = self.permission_policy {
            map.insert("permission_policy".into(), json!({ "type": policy }));
        }
        if let Some(effect) = self.effect {
            map.insert("effect".into(), json!(effect));
        }
        map
    }
}

/// Deserialize `toolset` from a `[toolset]` table or a `[[toolset]]` array:
/// the built-in toolset at most once, and any number of MCP toolsets.
pub(crate) fn one_or_many<'de, D>(deserializer: D) -> Result<Toolsets, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error as _;
    let value = toml::Value::deserialize(deserializer)?;
    let entries = match value {
        toml::Value::Array(entries) => entries,
        table @ toml::Value::Table(_) => vec![table],
        other => {
            return Err(D::Error::custom(format!(
                "`toolset` must be a table ([toolset]) or an array of tables ([[toolset]]), \
                 not a {}",
                other.type_str()
            )));
        }
    };
    let mut toolsets = Toolsets::default();
    let mut agents = 0;
    for (index, entry) in entries.into_iter().enumerate() {
        let at = entry_label(&entry, index);
        match parse_entry(entry, &at).map_err(|e| D::Error::custom(format!("{e:#}")))? {
            Entry::Agent(toolset) => {
                agents += 1;
                toolsets.agent.get_or_insert(toolset);
            }
            Entry::Mcp(toolset) => {
                if toolsets.mcp.iter().any(|t| t.server == toolset.server) {
                    return Err(D::Error::custom(format!(
                        "in [[toolset]] #{}: a second mcp_toolset for the MCP server `{}`; \
                         declare one toolset per server",
                        index + 1,
                        toolset.server
                    )));
                }
                toolsets.mcp.push(toolset);
            }
        }
    }
    if agents > 1 {
        return Err(D::Error::custom(format!(
            "{agents} toolsets of type `agent_toolset` are declared; declare `agent_toolset` once"
        )));
    }
    Ok(toolsets)
}

/// One parsed `[[toolset]]` entry.
pub(super) enum Entry {
    Agent(Toolset),
    Mcp(McpToolset),
}

/// A toolset entry as written, before its names are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolset {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    default_config: Option<toml::Value>,
    #[serde(default)]
    configs: Option<toml::Value>,
    #[serde(default)]
    http: Option<Vec<String>>,
    #[serde(default)]
    web_search: Option<WebSearch>,
    #[serde(default)]
    bash: Option<BashSettings>,
    #[serde(default)]
    mcp_server_name: Option<String>,
}

/// One `enabled` + `permission_policy` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolConfig {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    permission_policy: Option<toml::Value>,
    #[serde(default)]
    effect: Option<Effect>,
}

/// How errors name the `index`th `[[toolset]]` entry (the only one, for a
/// `[toolset]` table).
fn entry_label(value: &toml::Value, index: usize) -> String {
    let kind = value.get("type").and_then(toml::Value::as_str);
    let server = value.get("mcp_server_name").and_then(toml::Value::as_str);
    match (kind, server) {
        (Some(MCP_TOOLSET_TYPE), Some(server)) => format!("[[toolset]] mcp_toolset `{server}`"),
        _ if index == 0 => "[toolset]".to_string(),
        _ => format!("[[toolset]] #{}", index + 1),
    }
}

/// Parse one toolset entry, named `at` in errors.
pub(super) fn parse_entry(value: toml::Value, at: &str) -> anyhow::Result<Entry> {
    let at = at.to_string();
    let raw = RawToolset::deserialize(value).with_context(|| format!("in {at}"))?;
    let agent = raw.kind == TOOLSET_TYPE || raw.kind == TOOLSET_TYPE_DATED;
    anyhow::ensure!(
        agent || raw.kind == MCP_TOOLSET_TYPE,
        "in {at}: `type` = {:?} is not a toolset toolhost runs: expected {TOOLSET_TYPE:?} \
         (or its dated form {TOOLSET_TYPE_DATED:?}) or {MCP_TOOLSET_TYPE:?}",
        raw.kind
    );
    let configs = match raw.configs {
        None => Configs::default(),
        Some(toml::Value::Array(entries)) => parse_array_form(entries, &at, agent)?,
        Some(toml::Value::Table(table)) => parse_table_form(table, &at, agent)?,
        Some(other) => anyhow::bail!(
            "in {at}: `configs` must be an array of entries with a `name` or a table keyed by \
             tool name, not a {}",
            other.type_str()
        ),
    };
    let default_config = match raw.default_config {
        Some(value) => {
            let config =
                parse_tool_config(value).with_context(|| format!("in {at} default_config"))?;
            anyhow::ensure!(
                config.0.is_none(),
                "in {at} default_config: `name` belongs in a `configs` entry"
            );
            config.1
        }
        None => ToolConfig::default(),
    };
    if agent {
        anyhow::ensure!(
            raw.mcp_server_name.is_none(),
            "in {at}: `mcp_server_name` belongs to a toolset of `type = \"{MCP_TOOLSET_TYPE}\"`"
        );
        let effects = std::iter::once(&default_config).chain(configs.entries());
        anyhow::ensure!(
            effects.into_iter().all(|c| c.effect.is_none()),
            "in {at}: `effect` is set only for an MCP server's tools; the built-in tools' \
             effects are fixed"
        );
        return Ok(Entry::Agent(Toolset {
            default_config,
            configs,
            http: raw.http.unwrap_or_default(),
            web_search: raw.web_search,
            bash: raw.bash.unwrap_or_default(),
        }));
    }
    let server = raw.mcp_server_name.with_context(|| {
        format!(
            "in {at}: a toolset of `type = \"{MCP_TOOLSET_TYPE}\"` needs `mcp_server_name`, \
             the name of an [[mcp_servers]] entry"
        )
    })?;
    anyhow::ensure!(
        raw.http.is_none() && raw.web_search.is_none() && raw.bash.is_none(),
        "in {at}: `http`, `web_search` and `bash` belong to the built-in toolset (web_fetch's \
         allow-list, web_search's engine, bash's sandbox); an MCP server's tools reach what \
         the server reaches"
    );
    Ok(Entry::Mcp(McpToolset {
        server,
        settings: Toolset {
            default_config,
            configs,
            http: Vec::new(),
            web_search: None,
            bash: BashSettings::default(),
        },
    }))
}

/// The array form: every entry named; for the built-in toolset
/// (`builtin`), only by the names of [`ARRAY_FORM_NAMES`]; for an MCP
/// toolset, by any name (checked against the server's tools when it is
/// listed).
fn parse_array_form(entries: Vec<toml::Value>, at: &str, builtin: bool) -> anyhow::Result<Configs> {
    let mut parsed: Vec<(String, ToolConfig)> = Vec::new();
    for (index, entry) in entries.into_iter().enumerate() {
        let at = format!("in {at} configs[{index}]");
        let (name, config) = parse_tool_config(entry).context(at.clone())?;
        let name =
            name.with_context(|| format!("{at}: every entry of the array form needs a `name`"))?;
        anyhow::ensure!(
            !builtin || ARRAY_FORM_NAMES.contains(&name.as_str()),
            "{at}: `name` = {name:?} is not accepted in the array form; accepted names: {}. \
             `list` and `delete` can be configured only in the table form, e.g. \
             `configs.{name} = {{ enabled = true }}`",
            ARRAY_FORM_NAMES.join(", ")
        );
        anyhow::ensure!(
            !parsed.iter().any(|(seen, _)| *seen == name),
            "{at}: `{name}` is configured twice"
        );
        parsed.push((name, config));
    }
    Ok(Configs::Array(parsed))
}

/// The table form: keyed by tool name; for the built-in toolset
/// (`builtin`), keys that are no toolset tool are kept but ignored.
fn parse_table_form(table: toml::Table, at: &str, builtin: bool) -> anyhow::Result<Configs> {
    let mut tools = BTreeMap::new();
    let mut ignored = BTreeMap::new();
    for (name, value) in table {
        if !builtin || is_toolset_name(&name) {
            let (inner, config) =
                parse_tool_config(value).with_context(|| format!("in {at} configs.{name}"))?;
            anyhow::ensure!(
                inner.is_none(),
                "in {at} configs.{name}: the table form takes the name from the key; remove \
                 `name`"
            );
            tools.insert(name, config);
        } else {
            let value =
                serde_json::to_value(value).with_context(|| format!("in {at} configs.{name}"))?;
            ignored.insert(name, value);
        }
    }
    Ok(Configs::Table { tools, ignored })
}

fn parse_tool_config(value: toml::Value) -> anyhow::Result<(Option<String>, ToolConfig)> {
    let raw = RawToolConfig::deserialize(value)?;
    let permission_policy = raw.permission_policy.map(parse_policy).transpose()?;
    Ok((
        raw.name,
        ToolConfig {
            enabled: raw.enabled,
            permission_policy,
            effect: raw.effect,
        },
    ))
}

/// `"always_ask"` or `{ type = "always_ask" }` (the registry's shape).
fn parse_policy(value: toml::Value) -> anyhow::Result<Permission> {
    let name = match &value {
        toml::Value::String(name) => Some(name.as_str()),
        toml::Value::Table(table) if table.len() == 1 => {
            table.get("type").and_then(toml::Value::as_str)
        }
        _ => None,
    };
    match name {
        Some("always_allow") => Ok(Permission::AlwaysAllow),
        Some("always_ask") => Ok(Permission::AlwaysAsk),
        _ => anyhow::bail!(
            "`permission_policy` = {value} is not a policy: expected \"always_allow\" or \
             \"always_ask\" (or {{ type = \"always_ask\" }})"
        ),
    }
}

mod bash;
#[cfg(test)]
mod tests;
mod web_search;

pub use bash::BashSettings;
pub use web_search::WebSearch;
