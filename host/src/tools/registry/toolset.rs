//! The built-in toolset's tools, loaded from the components the host embeds.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use super::tool::{Described, Kind};
use super::{Origin, Tool, component};
use crate::bash::Bash;
use crate::config::toolset::BashSettings;
use crate::config::{Config, ToolPolicy};
use crate::sandbox::code::Code;
use crate::sandbox::engine::ToolEngine;
use crate::toolset;

/// Load and check the toolset tool `name` from the component the host embeds.
pub async fn load_toolset_tool(
    engine: &ToolEngine,
    name: &str,
    config: &Config,
) -> Result<Tool, String> {
    let bytes = toolset::component(name)
        .ok_or_else(|| format!("`{name}` is not a toolset tool this host embeds"))?;
    let compiled = engine
        .compile(bytes.to_vec())
        .await
        .map_err(|e| format!("{e:#}"))?;
    let (mut tools, _) = component::load_component(engine, compiled, name, config).await?;
    let tool = tools
        .pop()
        .filter(|t| matches!(t.code(), Some(Code::Contract(_))))
        .ok_or_else(|| format!("toolset `{name}` does not implement the contract"))?;
    Ok(tool.in_toolset().at(toolset_path(name), None))
}

/// How a toolset tool's source is shown: the crate it is built from.
pub(super) fn toolset_path(name: &str) -> PathBuf {
    PathBuf::from("toolset").join(name)
}

/// A sandbox probed under some settings: it, or why it does not work.
type Probed = (BashSettings, Result<Arc<Bash>, String>);

/// The sandboxes probed in this process, by their settings: a reload with
/// the same settings does not probe again.
static PROBED: Mutex<Vec<Probed>> = Mutex::new(Vec::new());

/// The toolset's `bash` under `settings` and `policy`, if its sandbox works
/// here; why not, when it does not.
pub async fn load_bash(settings: &BashSettings, policy: ToolPolicy) -> Result<Tool, String> {
    let known = PROBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(probed, _)| probed == settings)
        .map(|(_, bash)| bash.clone());
    let bash = match known {
        Some(bash) => bash,
        None => {
            let bash = Bash::probe(settings).await.map(Arc::new);
            PROBED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((settings.clone(), bash.clone()));
            bash
        }
    }?;
    let (input_schema, validator) =
        crate::tool::check_object_schema("input", &crate::bash::input_schema().to_string())
            .map_err(|e| e.to_string())?;
    let described = Described {
        metadata: crate::tool::ToolMetadata {
            description: crate::bash::description(&policy.grants.http),
            input_schema,
            output_schema: None,
            effect: crate::tool::EffectDecl::Fixed(crate::tool::Effect::Write),
            time_args: Vec::new(),
            has_dry_run_result: false,
        },
        validator,
        output_validator: None,
    };
    let tool = Tool::new(
        "bash".into(),
        Origin::Toolset,
        Kind::Bash(bash),
        described,
        policy,
    );
    Ok(tool.at(toolset_path("bash"), None))
}
