//! A loaded tool: its name and origin, checked metadata, compiled
//! schemas, policy, and the code a call instantiates.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::code::{Code, CodeCell, CodeTier};
use crate::config::ToolPolicy;
use crate::files::FileStamp;
use crate::prompts::PromptSpec;
use crate::tool::ToolMetadata;

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A component file in the tools folder.
    File,
    /// The built-in toolset, embedded in the host.
    Toolset,
    /// A custom tool declared in `toolhost.toml`, answered by the client.
    Custom,
}

/// A loaded, checked tool, ready to instantiate.
pub struct Tool {
    pub(super) name: String,
    pub(super) origin: Origin,
    pub(super) path: PathBuf,
    pub(super) sha256: String,
    pub(super) metadata: ToolMetadata,
    pub(super) policy: ToolPolicy,
    pub(super) imports: Vec<String>,
    pub(super) validator: jsonschema::Validator,
    pub(super) output_validator: Option<jsonschema::Validator>,
    /// The component file's size and time when it was read (reloads skip
    /// files that still match); `None` for a custom tool.
    pub(super) stamp: Option<FileStamp>,
    /// What a call of it runs.
    pub(super) kind: Kind,
    /// The prompts its component offers.
    pub(super) prompts: Vec<PromptSpec>,
}

/// What calling a tool runs.
pub(super) enum Kind {
    /// A component that implements the contract: its code, baseline until
    /// its optimized compile is in.
    Contract(CodeCell),
    /// A function of a plain component.
    Plain {
        /// Its export path (`interface#function`, or the function's name).
        export: String,
        /// The component and the function, baseline until optimized.
        code: CodeCell,
    },
    /// A custom tool: no code, the client of a session answers it.
    Custom,
}

/// A tool's checked metadata with its compiled input and output schemas.
pub(super) struct Described {
    /// The metadata.
    pub(super) metadata: ToolMetadata,
    /// The input schema, compiled.
    pub(super) validator: jsonschema::Validator,
    /// The output schema, compiled, if one is declared.
    pub(super) output_validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// The tool `name` of `kind` from `origin`, as `described` and allowed
    /// `policy`; its component's digest and imports, and its file, are set
    /// by [`Self::of_component`] and [`Self::at`].
    pub(super) fn new(
        name: String,
        origin: Origin,
        kind: Kind,
        described: Described,
        policy: ToolPolicy,
    ) -> Self {
        Self {
            name,
            origin,
            path: PathBuf::new(),
            sha256: String::new(),
            metadata: described.metadata,
            policy,
            imports: Vec::new(),
            validator: described.validator,
            output_validator: described.output_validator,
            stamp: None,
            kind,
            prompts: Vec::new(),
        }
    }

    /// The same tool, offering `prompts`.
    pub(super) fn with_prompts(mut self, prompts: Vec<PromptSpec>) -> Self {
        self.prompts = prompts;
        self
    }

    /// The prompts its component offers (MCP `prompts/list`).
    pub fn prompts(&self) -> &[PromptSpec] {
        &self.prompts
    }

    /// The same tool, made of the component with content `sha256` that
    /// imports `imports`.
    pub(super) fn of_component(mut self, sha256: String, imports: Vec<String>) -> Self {
        self.sha256 = sha256;
        self.imports = imports;
        self
    }

    /// The same tool, shown as coming from `path` (stamped `stamp` when it
    /// is a file a reload may skip).
    pub(super) fn at(mut self, path: PathBuf, stamp: Option<FileStamp>) -> Self {
        self.path = path;
        self.stamp = stamp;
        self
    }

    /// The same tool, as one of the built-in toolset's.
    pub(super) fn in_toolset(mut self) -> Self {
        self.origin = Origin::Toolset;
        self
    }

    /// The cell holding its code, for the tiering to swap: `None` for a
    /// custom tool.
    pub(super) fn code_cell(&self) -> Option<&CodeCell> {
        match &self.kind {
            Kind::Contract(code) | Kind::Plain { code, .. } => Some(code),
            Kind::Custom => None,
        }
    }

    /// The name the model sees.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it comes from.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The component file it was loaded from (`toolset/<name>` for a
    /// toolset tool, `toolhost.toml` for a custom tool).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hex SHA-256 of the component.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The checked metadata.
    pub fn metadata(&self) -> &ToolMetadata {
        &self.metadata
    }

    /// What the operator allows it.
    pub fn policy(&self) -> &ToolPolicy {
        &self.policy
    }

    /// Whether it is a custom tool: declared in `toolhost.toml`, answered
    /// by the client, with no component.
    pub fn is_custom(&self) -> bool {
        matches!(self.kind, Kind::Custom)
    }

    /// For a function of a plain component: its export path
    /// (`interface#function`, or the function's name at the top level).
    pub fn plain_export(&self) -> Option<&str> {
        match &self.kind {
            Kind::Plain { export, .. } => Some(export),
            Kind::Contract(_) | Kind::Custom => None,
        }
    }

    /// What a call instantiates now: `None` for a custom tool.
    pub(crate) fn code(&self) -> Option<Code> {
        self.code_cell().map(CodeCell::get)
    }

    /// Which compiler made the code it runs now: a tool a reload brought
    /// in runs baseline code until its optimized compile is swapped in.
    pub fn code_tier(&self) -> CodeTier {
        self.code_cell().map_or(CodeTier::Optimized, CodeCell::tier)
    }

    /// The interfaces the component imports: what it could ask for.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// The tool as surfaces list it: name, description, schemas, effect,
    /// time arguments, dry-run support, permission, whether it is enabled
    /// and whether it is a custom tool.
    pub fn to_json(&self) -> serde_json::Value {
        let meta = &self.metadata;
        serde_json::json!({
            "name": self.name,
            "description": meta.description,
            "inputSchema": meta.input_schema,
            "outputSchema": meta.output_schema,
            "effect": meta.effect.to_string(),
            "timeArgs": meta.time_args,
            "hasDryRunResult": meta.has_dry_run_result,
            "permission": self.policy.permission,
            "enabled": self.policy.enabled,
            "custom": self.is_custom(),
            "origin": self.origin,
            "prompts": self.prompts,
        })
    }

    /// Validate an input against the input schema.
    pub(crate) fn validate(&self, input: &serde_json::Value) -> Vec<crate::error::InputError> {
        schema_errors(&self.validator, input)
    }

    /// Validate a structured result against the declared output schema
    /// (none declared: nothing to check).
    pub fn validate_output(&self, output: &serde_json::Value) -> Vec<crate::error::InputError> {
        self.output_validator
            .as_ref()
            .map(|v| schema_errors(v, output))
            .unwrap_or_default()
    }
}

fn schema_errors(
    validator: &jsonschema::Validator,
    value: &serde_json::Value,
) -> Vec<crate::error::InputError> {
    validator
        .iter_errors(value)
        .map(|e| crate::error::InputError {
            pointer: e.instance_path().to_string(),
            message: e.to_string(),
        })
        .collect()
}
