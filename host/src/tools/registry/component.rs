//! A component file or embedded component loaded as tools: compiled (or
//! taken from the compile cache), pre-instantiated, then checked as one
//! contract tool or as a plain component's functions.

use std::path::Path;

use super::{Tool, contract, plain};
use crate::bindings::{ContractError, ContractPre};
use crate::config::Config;
use crate::files::FileStamp;
use crate::sandbox::code::{CodeTier, Compiled};
use crate::sandbox::engine::{ContentGate, Tiering, ToolEngine};
use crate::sandbox::tiering::Upgrade;
use crate::tool;

/// Load and check one component file: the tool `name` (its slug) if it
/// implements the contract, or one tool per exported function if it is a
/// plain component.
pub async fn load_tool(
    engine: &ToolEngine,
    path: &Path,
    name: &str,
    config: &Config,
) -> Result<Vec<Tool>, String> {
    let (tools, _) = load_file_tools(engine, path, name, config, Tiering::Optimized, None).await?;
    Ok(tools)
}

/// [`load_tool`], compiling as `tiering` says; with baseline code, also
/// what its optimized compile needs.
pub(super) async fn load_file_tools(
    engine: &ToolEngine,
    path: &Path,
    name: &str,
    config: &Config,
    tiering: Tiering,
    gate: Option<ContentGate>,
) -> Result<(Vec<Tool>, Option<Upgrade>), String> {
    tool::check_name(name).map_err(|e| e.to_string())?;
    // Stamped before reading: a write in between makes the next reload read it again.
    let stamp = FileStamp::of(path);
    let compiled = engine
        .load_file(path, stamp, tiering, gate)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let (tools, upgrade) = load_component(engine, compiled, name, config).await?;
    let tools = tools
        .into_iter()
        .map(|tool| tool.at(path.to_path_buf(), stamp))
        .collect();
    Ok((tools, upgrade))
}

/// Pre-instantiate a compiled component, then check it as the tool `name`
/// (contract) or as one tool per function (plain component). For baseline
/// code, also what its optimized compile needs.
pub(super) async fn load_component(
    engine: &ToolEngine,
    mut compiled: Compiled,
    name: &str,
    config: &Config,
) -> Result<(Vec<Tool>, Option<Upgrade>), String> {
    let baseline_of = compiled.baseline_of.take();
    let tier = match baseline_of {
        Some(_) => CodeTier::Baseline,
        None => CodeTier::Optimized,
    };
    let tools = check_component(engine, compiled, tier, name, config).await?;
    let upgrade = baseline_of.map(|source| Upgrade {
        slug: name.to_string(),
        source,
        cells: tools.iter().filter_map(Tool::code_cell).cloned().collect(),
        memory_bytes: tools
            .iter()
            .map(|t| t.policy.memory_bytes)
            .max()
            .unwrap_or_default(),
    });
    Ok((tools, upgrade))
}

/// [`load_component`]'s checks, for code of either tier.
async fn check_component(
    engine: &ToolEngine,
    compiled: Compiled,
    tier: CodeTier,
    name: &str,
    config: &Config,
) -> Result<Vec<Tool>, String> {
    let component_engine = compiled.component.engine();
    let imports: Vec<String> = compiled
        .component
        .component_type()
        .imports(component_engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let pre = engine
        .instantiate_pre(&compiled.component)
        .map_err(|e| format!("{e:#}"))?;
    let contract = match ContractPre::new(pre.clone()) {
        Ok(contract) => contract,
        Err(ContractError::Missing(_)) => {
            return plain::plain_tools(&compiled, pre, tier, name, imports, config);
        }
        Err(error) => return Err(error.to_string()),
    };
    contract::contract_tool(
        engine,
        contract,
        compiled.sha256,
        tier,
        name,
        imports,
        config,
    )
    .await
}
