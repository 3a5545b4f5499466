//! Custom tools: declared in `toolhost.toml` with a schema and no
//! component, answered by the client of a session; and agent-execution
//! tools, whose script the agent harness runs.

use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use super::tool::{Described, Kind};
use super::{Origin, Tool};
use crate::config::agent_tools::AgentToolSpec;
use crate::config::{CustomToolSpec, ToolPolicy};
use crate::tool::{self, Effect, EffectDecl, ToolMetadata};

/// Check a custom tool's declaration.
pub(super) fn custom_tool(
    name: &str,
    spec: &CustomToolSpec,
    policy: ToolPolicy,
) -> Result<Tool, String> {
    tool::check_name(name).map_err(|e| e.to_string())?;
    tool::check_description(&spec.description).map_err(|e| e.to_string())?;
    let (input_schema, validator) =
        tool::check_object_schema("input", &spec.input_schema.to_string())
            .map_err(|e| e.to_string())?;
    let described = Described {
        metadata: ToolMetadata {
            description: spec.description.clone(),
            input_schema,
            output_schema: None,
            effect: EffectDecl::Fixed(spec.effect.unwrap_or(Effect::Write)),
            time_args: Vec::new(),
            has_dry_run_result: false,
        },
        validator,
        output_validator: None,
    };
    let tool = Tool::new(
        name.to_string(),
        Origin::Custom,
        Kind::Custom,
        described,
        policy,
    );
    Ok(tool.at(PathBuf::from(crate::config::CONFIG_FILE), None))
}

/// Check an agent-execution tool's declaration: a custom tool's contract
/// plus the script the agent harness runs, which its digest pins.
pub(super) fn agent_tool(
    name: &str,
    spec: &AgentToolSpec,
    policy: ToolPolicy,
) -> Result<Tool, String> {
    let contract = CustomToolSpec {
        description: spec.description.clone(),
        input_schema: spec.input_schema.clone(),
        effect: spec.effect,
    };
    let Tool {
        metadata,
        validator,
        policy,
        ..
    } = custom_tool(name, &contract, policy)?;
    let script: Arc<str> = Arc::from(spec.script());
    let digest = format!("{:x}", Sha256::digest(script.as_bytes()));
    let described = Described {
        metadata,
        validator,
        output_validator: None,
    };
    let tool = Tool::new(
        name.to_string(),
        Origin::Agent,
        Kind::AgentScript(script),
        described,
        policy,
    );
    Ok(tool
        .at(PathBuf::from(crate::config::CONFIG_FILE), None)
        .with_digest(digest))
}
