//! The built-in toolset's tools, loaded from the components the host embeds.

use std::path::PathBuf;

use super::{Tool, component};
use crate::config::Config;
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
