//! Tools of MCP servers: each tool a mounted server lists, checked like any
//! other tool (name rules and reserved names, description, object input
//! schema), configured by its `mcp_toolset` (`enabled`, `permission_policy`,
//! `effect`), and advertised under the name the server gives it.
//!
//! Its effect comes from its annotations unless the toolset sets one:
//! `readOnlyHint: true` is a read, `idempotentHint: true` with an explicit
//! `destructiveHint` is idempotent, anything else a write; a server
//! declared with `trust_annotations = false` gives only writes. Annotations
//! are the server's word: the host cannot enforce them (docs/SECURITY.md).

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations};
use sha2::{Digest, Sha256};

use super::tool::{Described, Kind, Mounted};
use super::{LoadFailure, Origin, Registry, Tool};
use crate::caps::Grants;
use crate::config::mcp::source_of;
use crate::config::toolset::{Configs, McpToolset};
use crate::config::{CONFIG_FILE, Config, ToolSettings};
use crate::tool::{self, Effect, EffectDecl, ToolMetadata};
use crate::upstream::{Upstream, Upstreams};

/// What each mounted server listed: its connection and its tools, or why
/// it could not be listed.
pub(super) type Listing = BTreeMap<String, (Arc<Upstream>, Result<Vec<McpTool>, String>)>;

/// List the tools of every server `config` declares, all at once.
pub(super) async fn list(upstreams: &Upstreams, config: &Config) -> Listing {
    let servers = upstreams.for_config(config);
    let listed = futures::future::join_all(servers.values().map(|u| u.list_tools())).await;
    servers
        .into_iter()
        .zip(listed)
        .map(|((name, upstream), tools)| (name, (upstream, tools)))
        .collect()
}

impl Registry {
    /// Add the tools of every MCP toolset, from `listing`; a server that
    /// could not be listed, and a tool that fails its checks or whose name
    /// is taken, is a [`LoadFailure`] naming its source.
    pub(super) fn mount_upstreams(&mut self, config: &Config, listing: &Listing) {
        for toolset in &config.toolset.mcp {
            let source = source_of(&toolset.server);
            let Some((server, listed)) = listing.get(&toolset.server) else {
                continue;
            };
            let tools = match listed {
                Ok(tools) => tools,
                Err(reason) => {
                    self.failures.push(LoadFailure {
                        file: source,
                        tool: None,
                        reason: format!("MCP server `{}`: {reason}", toolset.server),
                    });
                    continue;
                }
            };
            let reported: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            self.check_configs_named(toolset, &reported);
            for definition in tools {
                let name = definition.name.to_string();
                let loaded = match self.tools.get(&name) {
                    Some(holder) => Err(format!(
                        "the name `{name}` is already taken by {} (no tool shadows another; \
                         disable one of them in its toolset, or rename it at its source)",
                        holder.path.display()
                    )),
                    None => upstream_tool(server, toolset, definition, config),
                };
                match loaded {
                    Ok(tool) => {
                        self.tools.insert(name, Arc::new(tool));
                    }
                    Err(reason) => self.failures.push(LoadFailure {
                        file: source.clone(),
                        tool: Some(name),
                        reason,
                    }),
                }
            }
        }
    }

    /// An array-form `configs` entry must name a tool the server reports;
    /// a table-form key that names none is ignored, with a warning.
    fn check_configs_named(&mut self, toolset: &McpToolset, reported: &[&str]) {
        let unreported = toolset.unreported(reported);
        if unreported.is_empty() {
            return;
        }
        let at = format!("[[toolset]] mcp_toolset `{}`", toolset.server);
        let listed = match reported.is_empty() {
            true => "it reports none".to_string(),
            false => format!("it reports: {}", reported.join(", ")),
        };
        match &toolset.settings.configs {
            Configs::Array(_) => self.failures.push(LoadFailure {
                file: CONFIG_FILE.into(),
                tool: None,
                reason: format!(
                    "{at}: `configs` names {}, which the MCP server `{}` does not report ({listed})",
                    quoted(&unreported),
                    toolset.server
                ),
            }),
            Configs::Table { .. } => tracing::warn!(
                "{at}: configs.{} names no tool of the server ({listed}); it is kept but ignored",
                unreported.join(", configs.")
            ),
        }
    }
}

/// The host's tool for the server's tool `definition`.
fn upstream_tool(
    server: &Arc<Upstream>,
    toolset: &McpToolset,
    definition: &McpTool,
    config: &Config,
) -> Result<Tool, String> {
    let name = definition.name.as_ref();
    tool::check_name(name).map_err(|e| e.to_string())?;
    refuse_sandbox_settings(name, config)?;
    let description = definition.description.as_deref().unwrap_or_default();
    tool::check_description(description).map_err(|e| e.to_string())?;
    let input_text = serde_json::Value::Object((*definition.input_schema).clone()).to_string();
    let (input_schema, validator) =
        tool::check_object_schema("input", &input_text).map_err(|e| e.to_string())?;
    let (output_schema, output_validator) = match &definition.output_schema {
        Some(schema) => {
            let text = serde_json::Value::Object((**schema).clone()).to_string();
            let (schema, validator) =
                tool::check_object_schema("output", &text).map_err(|e| e.to_string())?;
            (Some(schema), Some(validator))
        }
        None => (None, None),
    };
    let resolved = toolset.settings.resolve(name);
    let trusted = server.spec().trust_annotations;
    let effect = resolved
        .effect
        .unwrap_or_else(|| effect_of(definition.annotations.as_ref(), trusted));
    let implied = ToolSettings {
        enabled: Some(resolved.enabled),
        permission: Some(resolved.permission),
        ..ToolSettings::default()
    };
    let mut policy = config
        .policy_over(name, Some(&implied))
        .map_err(|e| format!("{e:#}"))?;
    policy.grants = Grants::default();
    let described = Described {
        metadata: ToolMetadata {
            description: description.to_string(),
            input_schema,
            output_schema,
            effect: EffectDecl::Fixed(effect),
            time_args: Vec::new(),
            has_dry_run_result: false,
        },
        validator,
        output_validator,
    };
    let annotations = serde_json::to_string(&definition.annotations).unwrap_or_default();
    let mounted = Mounted {
        server: server.clone(),
        annotations: hex::encode(Sha256::digest(annotations.as_bytes())),
    };
    let definition_text = serde_json::to_string(definition).map_err(|e| e.to_string())?;
    let digest = hex::encode(Sha256::digest(definition_text.as_bytes()));
    Ok(Tool::new(
        name.to_string(),
        Origin::Mcp,
        Kind::Upstream(mounted),
        described,
        policy,
    )
    .with_digest(digest)
    .at(source_of(&toolset.server), None))
}

/// The effect annotations give a tool, when they are trusted.
pub(crate) fn effect_of(annotations: Option<&ToolAnnotations>, trusted: bool) -> Effect {
    let Some(hints) = annotations.filter(|_| trusted) else {
        return Effect::Write;
    };
    if hints.read_only_hint == Some(true) {
        Effect::Read
    } else if hints.idempotent_hint == Some(true) && hints.destructive_hint.is_some() {
        Effect::Idempotent
    } else {
        Effect::Write
    }
}

/// A `[tools.<name>]` entry of an MCP server's tool may set its limits
/// (`timeout_ms`, `max_input_bytes`, `max_output_bytes`) and its
/// `enabled` and `permission`, but no grant: the tool runs in the server's
/// process, not in a sandbox the host grants things to.
fn refuse_sandbox_settings(name: &str, config: &Config) -> Result<(), String> {
    let Some(settings) = config.tools.get(name) else {
        return Ok(());
    };
    let set = [
        ("workspace", settings.workspace.is_some()),
        ("state", settings.state.is_some()),
        ("artifacts", settings.artifacts.is_some()),
        ("metrics", settings.metrics.is_some()),
        ("kv", settings.kv.is_some()),
        ("http", settings.http.is_some()),
        ("env", settings.env.is_some()),
        ("ask", settings.ask.is_some()),
        ("memory_mb", settings.memory_mb.is_some()),
        ("max_stdio_bytes", settings.max_stdio_bytes.is_some()),
        ("max_http_requests", settings.max_http_requests.is_some()),
        (
            "max_http_response_bytes",
            settings.max_http_response_bytes.is_some(),
        ),
        ("description", settings.description.is_some()),
        ("effect", settings.effect.is_some()),
    ];
    let keys: Vec<&str> = set.iter().filter(|(_, s)| *s).map(|(k, _)| *k).collect();
    if keys.is_empty() {
        return Ok(());
    }
    Err(format!(
        "[tools.{name}] sets {}, but `{name}` is an MCP server's tool: it runs in the server's \
         process, outside any sandbox, so the host has nothing of that kind to grant or \
         describe (set `effect` in its toolset's `configs`; `timeout_ms`, `max_input_bytes` \
         and `max_output_bytes` apply)",
        quoted(&keys)
    ))
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_follow_the_sdk_pages_rule() {
        let hints = |read: Option<bool>, idem: Option<bool>, destr: Option<bool>| {
            let mut a = ToolAnnotations::new();
            a.read_only_hint = read;
            a.idempotent_hint = idem;
            a.destructive_hint = destr;
            a
        };
        let read = hints(Some(true), None, None);
        assert_eq!(effect_of(Some(&read), true), Effect::Read);
        assert_eq!(effect_of(Some(&read), false), Effect::Write);
        let idem = hints(None, Some(true), Some(false));
        assert_eq!(effect_of(Some(&idem), true), Effect::Idempotent);
        let no_destructive = hints(None, Some(true), None);
        assert_eq!(effect_of(Some(&no_destructive), true), Effect::Write);
        assert_eq!(effect_of(None, true), Effect::Write);
    }
}
