//! Plain components: one tool per exported function, described by the
//! operator in `toolhost.toml` or by a placeholder.

use std::sync::Arc;

use serde_json::Value;
use wasmtime::component::InstancePre;

use super::tool::{Described, Kind};
use super::{Origin, Tool, contract};
use crate::config::Config;
use crate::plain::{self, PlainFunction};
use crate::sandbox::code::{Code, CodeCell, CodeTier, Compiled, PlainCall};
use crate::sandbox::state::CallState;
use crate::tool::{self, Effect, EffectDecl, ToolMetadata};

/// The tools of a plain component: one per function it exports.
pub(super) fn plain_tools(
    compiled: &Compiled,
    pre: InstancePre<CallState>,
    tier: CodeTier,
    slug: &str,
    imports: Vec<String>,
    config: &Config,
) -> Result<Vec<Tool>, String> {
    let component = &compiled.component;
    let (functions, skipped) = plain::functions(component.engine(), component, slug);
    if functions.is_empty() {
        let mut reason = "does not implement the toolhost contract (it must export \
                          `toolhost:tool/tool@0.2.2`, or an earlier version) and exports no \
                          function that can be a tool"
            .to_string();
        for skip in &skipped {
            reason.push_str(&format!("; `{}`: {}", skip.export, skip.reason));
        }
        return Err(reason);
    }
    for skip in &skipped {
        tracing::info!("{slug}: `{}` is not a tool: {}", skip.export, skip.reason);
    }
    functions
        .into_iter()
        .map(|function| {
            let name = function.name.clone();
            let fail =
                |e: String| format!("function `{}` (tool `{name}`): {e}", function.export_path());
            tool::check_name(&name).map_err(|e| fail(e.to_string()))?;
            let policy = config
                .policy_for(&name)
                .map_err(|e| fail(format!("{e:#}")))?;
            let description = match &policy.description {
                Some(description) => description.clone(),
                None => placeholder_description(&function, slug),
            };
            tool::check_description(&description).map_err(|e| fail(e.to_string()))?;
            let (input_schema, validator) =
                tool::check_object_schema("input", &function.input_schema.to_string())
                    .map_err(|e| fail(e.to_string()))?;
            let output_text = function.output_schema.as_ref().map(Value::to_string);
            let (output_schema, output_validator) =
                contract::check_output_schema(output_text.as_deref()).map_err(fail)?;
            let described = Described {
                metadata: ToolMetadata {
                    description,
                    input_schema,
                    output_schema,
                    effect: EffectDecl::Fixed(policy.effect.unwrap_or(Effect::Write)),
                    time_args: Vec::new(),
                    has_dry_run_result: false,
                },
                validator,
                output_validator,
            };
            let kind = Kind::Plain {
                export: function.export_path(),
                code: CodeCell::new(
                    Code::Plain(Arc::new(PlainCall {
                        pre: pre.clone(),
                        function,
                    })),
                    tier,
                ),
            };
            let tool = Tool::new(name, Origin::File, kind, described, policy);
            Ok(tool.of_component(compiled.sha256.clone(), imports.clone()))
        })
        .collect()
}

/// What a plain component's function says of itself when nobody described
/// it (toolchains drop WIT doc comments from components).
fn placeholder_description(function: &PlainFunction, slug: &str) -> String {
    let params: Vec<&str> = function
        .params
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    format!(
        "Calls `{}`, exported by {slug}.wasm, which carries no description. It takes {}. \
         Describe it with `[tools.{}] description = \"...\"` in toolhost.toml.",
        function.export_path(),
        if params.is_empty() {
            "no parameters".to_string()
        } else {
            format!("the parameters {}", params.join(", "))
        },
        function.name
    )
}
