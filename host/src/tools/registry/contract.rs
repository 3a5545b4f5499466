//! Components that implement the toolhost contract: one tool each, which
//! describes itself through `metadata`.

use std::time::Duration;

use serde_json::Value;

use super::tool::{Described, Kind, Offered};
use super::{Origin, Tool};
use crate::bindings::{ContractPre, Prompt, ResourceInfo, ResourceTemplate, types};
use crate::config::Config;
use crate::sandbox::code::{Code, CodeCell, CodeTier, Pre};
use crate::sandbox::engine::ToolEngine;
use crate::sandbox::instance::Instance;
use crate::sandbox::state::CallState;
use crate::tool::{self, Effect, EffectDecl, ToolMetadata};

/// Check a component that implements the contract as the tool `name`: its
/// `metadata` read in a fresh instance, its schemas compiled.
pub(super) async fn contract_tool(
    engine: &ToolEngine,
    contract: ContractPre<CallState>,
    sha256: String,
    tier: CodeTier,
    name: &str,
    imports: Vec<String>,
    config: &Config,
) -> Result<Vec<Tool>, String> {
    let policy = config.policy_for(name).map_err(|e| format!("{e:#}"))?;
    if policy.description.is_some() || policy.effect.is_some() {
        return Err(format!(
            "[tools.{name}] sets `description` or `effect`, which only functions of plain \
             components take; `{name}` implements the toolhost contract and declares its own"
        ));
    }
    let listed = read_metadata(engine, &contract, policy.memory_bytes).await?;
    let (resources, resource_templates) =
        crate::resources::check(listed.resources, listed.templates)?;
    let offered = Offered {
        prompts: crate::prompts::check(listed.prompts)?,
        resources,
        resource_templates,
    };
    let kind = Kind::Contract(CodeCell::new(Code::Contract(contract), tier));
    let tool = Tool::new(
        name.to_string(),
        Origin::File,
        kind,
        check_metadata(listed.metadata)?,
        policy,
    );
    Ok(vec![
        tool.of_component(sha256, imports).with_offered(offered),
    ])
}

/// How long a tool's `metadata` (and its lists of prompts and resources)
/// may take at load.
const METADATA_DEADLINE: Duration = Duration::from_secs(10);

/// What a component says of itself at load.
struct Listed {
    metadata: types::ToolMetadata,
    prompts: Vec<Prompt>,
    resources: Vec<ResourceInfo>,
    templates: Vec<ResourceTemplate>,
}

/// The tool's metadata and the prompts and resources it offers, read in
/// one instance.
async fn read_metadata(
    engine: &ToolEngine,
    pre: &ContractPre<CallState>,
    memory_bytes: usize,
) -> Result<Listed, String> {
    let mut instance =
        Instance::for_load(engine, Pre::Contract(pre), memory_bytes, METADATA_DEADLINE)
            .await
            .map_err(|e| format!("cannot instantiate: {e}"))?;
    let metadata = instance
        .metadata()
        .await
        .map_err(|e| format!("`metadata` failed: {e}"))?;
    let prompts = instance
        .list_prompts()
        .await
        .map_err(|e| format!("`list-prompts` failed: {e}"))?;
    let (resources, templates) = instance
        .list_resources()
        .await
        .map_err(|e| format!("listing its resources failed: {e}"))?;
    Ok(Listed {
        metadata,
        prompts,
        resources,
        templates,
    })
}

/// Check raw metadata and compile the input and output schemas.
fn check_metadata(raw: types::ToolMetadata) -> Result<Described, String> {
    tool::check_description(&raw.description).map_err(|e| e.to_string())?;
    let input_text = raw
        .input_schema
        .as_deref()
        .unwrap_or(r#"{"type":"object"}"#);
    let (input_schema, validator) =
        tool::check_object_schema("input", input_text).map_err(|e| e.to_string())?;
    let (output_schema, output_validator) = check_output_schema(raw.output_schema.as_deref())?;
    tool::check_time_args(&input_schema, &raw.time_args).map_err(|e| e.to_string())?;
    let effect = match raw.effect {
        types::EffectDeclaration::Fixed(e) => EffectDecl::Fixed(effect_from_guest(e)),
        types::EffectDeclaration::ByInput => EffectDecl::ByInput,
    };
    Ok(Described {
        metadata: ToolMetadata {
            description: raw.description,
            input_schema,
            output_schema,
            effect,
            time_args: raw.time_args,
            has_dry_run_result: raw.has_dry_run_result,
        },
        validator,
        output_validator,
    })
}

/// Check an optional output schema and compile it.
pub(super) fn check_output_schema(
    text: Option<&str>,
) -> Result<(Option<Value>, Option<jsonschema::Validator>), String> {
    let Some(text) = text else {
        return Ok((None, None));
    };
    let (schema, validator) =
        tool::check_object_schema("output", text).map_err(|e| e.to_string())?;
    Ok((Some(schema), Some(validator)))
}

/// The host's effect for the guest's.
pub(crate) fn effect_from_guest(effect: types::Effect) -> Effect {
    match effect {
        types::Effect::Read => Effect::Read,
        types::Effect::Idempotent => Effect::Idempotent,
        types::Effect::Write => Effect::Write,
    }
}
