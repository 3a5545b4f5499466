//! A loaded tool: its name and origin, checked metadata, compiled
//! schemas, policy, and the code a call instantiates.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::ToolPolicy;
use crate::files::FileStamp;
use crate::prompts::PromptSpec;
use crate::resources::{ResourceSpec, ResourceTemplateSpec, TemplateValues};
use crate::sandbox::code::{Code, CodeCell, CodeTier};
use crate::tool::ToolMetadata;
use crate::upstream::Upstream;

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A component file in the tools folder.
    File,
    /// The built-in toolset, embedded in the host.
    Toolset,
    /// A custom tool declared in `toolhost.toml`, answered by the client.
    Custom,
    /// A tool of an MCP server (`[[mcp_servers]]`), mounted by an `mcp_toolset`.
    Mcp,
    /// An agent-execution tool (`[agent_tools.<name>]`): a script the
    /// agent harness runs; never the host.
    Agent,
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
    /// What its component offers MCP clients besides the tool.
    pub(super) offered: Offered,
}

/// The prompts and resources a tool's component offers, as checked at load.
#[derive(Debug, Clone, Default)]
pub(super) struct Offered {
    /// Its prompts.
    pub(super) prompts: Vec<PromptSpec>,
    /// Its resources at fixed addresses.
    pub(super) resources: Vec<ResourceSpec>,
    /// Its resource templates.
    pub(super) resource_templates: Vec<ResourceTemplateSpec>,
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
    /// An agent-execution tool: a script for the agent harness, never run
    /// by the host.
    AgentScript(Arc<str>),
    /// A tool of an MCP server: the server runs it.
    Upstream(Mounted),
    /// The toolset's `bash`: the host runs it in an OS sandbox.
    Bash(Arc<crate::bash::Bash>),
}

/// What calling an MCP server's tool needs besides its name, which is the
/// name the server gave it.
pub(super) struct Mounted {
    /// The server's connection.
    pub(super) server: Arc<Upstream>,
    /// The hex SHA-256 of its annotations as the server gave them.
    pub(super) annotations: String,
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
            offered: Offered::default(),
        }
    }

    /// The same tool, its component offering `offered`.
    pub(super) fn with_offered(mut self, offered: Offered) -> Self {
        self.offered = offered;
        self
    }

    /// The prompts its component offers (MCP `prompts/list`).
    pub fn prompts(&self) -> &[PromptSpec] {
        &self.offered.prompts
    }

    /// The resources at fixed addresses its component offers (MCP
    /// `resources/list`).
    pub fn resources(&self) -> &[ResourceSpec] {
        &self.offered.resources
    }

    /// The resource templates its component offers (MCP
    /// `resources/templates/list`).
    pub fn resource_templates(&self) -> &[ResourceTemplateSpec] {
        &self.offered.resource_templates
    }

    /// The values of the template `uri` matches, when it is an address
    /// this tool's component offers (none for a listed resource).
    pub fn offers_resource(&self, uri: &str) -> Option<TemplateValues> {
        if self.resources().iter().any(|r| r.uri == uri) {
            return Some(Vec::new());
        }
        self.resource_templates()
            .iter()
            .find_map(|t| t.template.matches(uri))
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

    /// The same tool, its definition hashing to `sha256` (an MCP server's
    /// tool has no component).
    pub(super) fn with_digest(mut self, sha256: String) -> Self {
        self.sha256 = sha256;
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
            Kind::Custom | Kind::AgentScript(_) | Kind::Upstream(_) | Kind::Bash(_) => None,
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
    /// toolset tool, `toolhost.toml` for a custom tool, `mcp:<server>` for
    /// an MCP server's tool).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hex SHA-256 of the component (of the definition, for an MCP
    /// server's tool).
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

    /// The script of an agent-execution tool, which the agent harness runs
    /// (the host refuses its calls); `None` for any other tool.
    pub fn agent_script(&self) -> Option<&str> {
        match &self.kind {
            Kind::AgentScript(script) => Some(script),
            _ => None,
        }
    }

    /// Whether a host surface may call it: neither a custom tool (answered
    /// by a session's client) nor an agent-execution tool.
    pub fn runs_on_host(&self) -> bool {
        !matches!(self.kind, Kind::Custom | Kind::AgentScript(_))
    }

    /// For a function of a plain component: its export path
    /// (`interface#function`, or the function's name at the top level).
    pub fn plain_export(&self) -> Option<&str> {
        match &self.kind {
            Kind::Plain { export, .. } => Some(export),
            Kind::Contract(_)
            | Kind::Custom
            | Kind::AgentScript(_)
            | Kind::Upstream(_)
            | Kind::Bash(_) => None,
        }
    }

    /// For the toolset's `bash`: the sandbox it runs in.
    pub fn bash(&self) -> Option<&Arc<crate::bash::Bash>> {
        match &self.kind {
            Kind::Bash(bash) => Some(bash),
            _ => None,
        }
    }

    /// For an MCP server's tool: the server that runs it.
    pub fn upstream(&self) -> Option<&Arc<Upstream>> {
        match &self.kind {
            Kind::Upstream(mounted) => Some(&mounted.server),
            _ => None,
        }
    }

    /// For an MCP server's tool: the hex SHA-256 of the annotations the
    /// server gave it.
    pub fn annotations_sha256(&self) -> Option<&str> {
        match &self.kind {
            Kind::Upstream(mounted) => Some(&mounted.annotations),
            _ => None,
        }
    }

    /// What a call instantiates now: `None` for a custom tool.
    pub(crate) fn code(&self) -> Option<Code> {
        self.code_cell().map(CodeCell::get)
    }

    /// The addresses its compiled code occupies now; `None` for a tool
    /// without a component.
    pub(crate) fn code_image(&self) -> Option<std::ops::Range<usize>> {
        self.code().map(|code| code.image())
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
            "execution": if self.agent_script().is_some() { "agent" } else { "server" },
            "origin": self.origin,
            "mcpServer": self.upstream().map(|u| u.spec().name.clone()),
            "prompts": self.prompts(),
            "resources": self.resources(),
            "resourceTemplates": self.resource_templates(),
        })
    }

    /// The tool as `toolhost inspect --json` and the HTTP API's tool page
    /// show it: [`Tool::to_json`] with its file, digest, the exported
    /// function of a plain component, and each import beside what its
    /// grants make of it.
    pub fn inspection(&self) -> serde_json::Value {
        let imports: Vec<serde_json::Value> = self
            .imports()
            .iter()
            .map(|i| {
                serde_json::json!({
                    "import": i,
                    "status": crate::caps::import_status(&self.policy().grants, i),
                })
            })
            .collect();
        let mut out = self.to_json();
        out["file"] = serde_json::json!(self.path());
        out["sha256"] = serde_json::json!(self.sha256());
        out["imports"] = serde_json::json!(imports);
        if let Some(function) = self.plain_export() {
            out["function"] = serde_json::json!(function);
        }
        out
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
