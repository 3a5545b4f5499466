//! Load a tools folder into checked, pre-instantiated tools.
//!
//! Every `.wasm` file is one tool named by its file slug. A tool that fails
//! its checks is reported by file and reason while the others still load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::Value;

use wasmtime::component::InstancePre;

use crate::bindings::{ContractPre, types};
use crate::code::Compiled;
use crate::config::toolset::{COMPONENT_TOOLS, is_toolset_name};
use crate::config::{Config, CustomToolSpec, ToolPolicy};
use crate::engine::{CodeTier, ContentGate, Tiering, ToolEngine};
use crate::files::FileStamp;
use crate::instance::{Instance, Pre};
use crate::lock::Lockfile;
use crate::plain::{self, PlainFunction};
use crate::state::CallState;
use crate::tiering::{Code, CodeCell, Upgrade};
use crate::tool::{self, Effect, EffectDecl, MAX_TOOLS, ToolMetadata};
use crate::toolset;

/// How long a tool's `metadata` may take at load.
const METADATA_DEADLINE: Duration = Duration::from_secs(10);

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
    name: String,
    origin: Origin,
    path: PathBuf,
    sha256: String,
    metadata: ToolMetadata,
    policy: ToolPolicy,
    imports: Vec<String>,
    validator: jsonschema::Validator,
    output_validator: Option<jsonschema::Validator>,
    /// The component file's size and time when it was read (reloads skip
    /// files that still match); `None` for a custom tool.
    stamp: Option<FileStamp>,
    /// The pre-instantiated component (and the function, for a function of
    /// a plain component); baseline code until its optimized compile is in.
    code: CodeCell,
    /// For a function of a plain component: its export path.
    plain_export: Option<String>,
}

/// A plain component's function, ready to instantiate and call.
pub(crate) struct PlainCall {
    /// The component, its imports resolved.
    pub pre: InstancePre<CallState>,
    /// The function.
    pub function: PlainFunction,
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
        self.origin == Origin::Custom
    }

    /// For a function of a plain component: its export path
    /// (`interface#function`, or the function's name at the top level).
    pub fn plain_export(&self) -> Option<&str> {
        self.plain_export.as_deref()
    }

    /// What a call instantiates now.
    pub(crate) fn code(&self) -> Code {
        self.code.get()
    }

    /// Which compiler made the code it runs now: a tool a reload brought
    /// in runs baseline code until its optimized compile is swapped in.
    pub fn code_tier(&self) -> CodeTier {
        self.code.tier()
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

/// A file that did not load, and why.
#[derive(Debug, Clone, Serialize)]
pub struct LoadFailure {
    /// The file (or `toolhost.toml` for a config problem).
    pub file: PathBuf,
    /// The tool name it would have had, if known.
    pub tool: Option<String>,
    /// Why, in words.
    pub reason: String,
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.tool {
            Some(tool) => write!(
                f,
                "{} (tool `{tool}`): {}",
                self.file.display(),
                self.reason
            ),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// A toolset tool that is enabled but cannot run here, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Unavailable {
    /// Its name.
    pub name: String,
    /// Why it cannot run, in words for the caller.
    pub reason: String,
}

/// The tools a host serves.
#[derive(Debug, Default)]
pub struct Registry {
    tools: BTreeMap<String, Arc<Tool>>,
    unavailable: Vec<Unavailable>,
    failures: Vec<LoadFailure>,
    /// Components loaded as baseline code, waiting for their optimized compile.
    upgrades: Vec<Upgrade>,
    /// Names two files claim: no version of them is kept from a last load.
    contested: std::collections::BTreeSet<String>,
}

impl Registry {
    /// Load every `.wasm` in `dir`. Fails only when the folder cannot be read
    /// or holds more than [`MAX_TOOLS`] tools; a bad tool is a [`LoadFailure`].
    pub async fn load(engine: &ToolEngine, dir: &Path, config: &Config) -> anyhow::Result<Self> {
        Self::load_reusing(engine, dir, config, None).await
    }

    /// [`Registry::load`], reusing from `previous` every tool whose file has
    /// not changed and whose policy the config leaves as it was: a reload
    /// re-checks only what changed. A changed or new component is compiled
    /// with the baseline compiler first when there is a `previous`; its
    /// optimized compile is then one of the registry's upgrades (`take_upgrades`).
    pub async fn load_reusing(
        engine: &ToolEngine,
        dir: &Path,
        config: &Config,
        previous: Option<&Registry>,
    ) -> anyhow::Result<Self> {
        let tiering = match previous {
            Some(_) => Tiering::BaselineFirst,
            None => Tiering::Optimized,
        };
        Self::load_tiered(engine, dir, config, previous, tiering, None).await
    }

    /// [`Registry::load_reusing`], compiling what the cache does not hold
    /// as `tiering` says.
    pub(crate) async fn load_tiered(
        engine: &ToolEngine,
        dir: &Path,
        config: &Config,
        previous: Option<&Registry>,
        tiering: Tiering,
        lock: Option<&Lockfile>,
    ) -> anyhow::Result<Self> {
        let files = tool_files(dir)?;
        let toolset = config.declared_toolset();
        let toolset_tools: Vec<&str> = toolset
            .map(|set| {
                COMPONENT_TOOLS
                    .iter()
                    .map(|(name, _)| *name)
                    .filter(|name| set.resolve(name).enabled)
                    .collect()
            })
            .unwrap_or_default();
        let count = files.len() + config.custom_tools.len() + toolset_tools.len();
        anyhow::ensure!(
            count <= MAX_TOOLS,
            "{} holds {} tools, toolhost.toml declares {} custom tools and the toolset \
             enables {}: {count} in all; at most {MAX_TOOLS} are allowed (remove some)",
            dir.display(),
            files.len(),
            config.custom_tools.len(),
            toolset_tools.len(),
        );
        let slugs: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|path| (slug(path), path.clone()))
            .collect();
        let mut registry = Self::default();
        for path in files {
            let name = slug(&path);
            if let Some(kept) = previous.and_then(|p| p.unchanged(&path, config)) {
                for tool in kept {
                    registry.insert_from_file(tool);
                }
                continue;
            }
            let gate = lock.map(|lock| {
                let gate = lock.file_gate(&name);
                Box::new(move |sha256: &str| gate.check(sha256)) as ContentGate
            });
            match load_file_tools(engine, &path, &name, config, tiering, gate).await {
                Ok((tools, upgrade)) => {
                    for tool in tools {
                        registry.insert_from_file(Arc::new(tool));
                    }
                    registry.upgrades.extend(upgrade);
                }
                Err(reason) => registry.failures.push(LoadFailure {
                    file: path,
                    tool: Some(name),
                    reason,
                }),
            }
        }
        registry.refuse_names_of_other_files(&slugs);
        for name in toolset_tools {
            let loaded = match config.policy_for(name) {
                Ok(policy) => {
                    let kept = previous
                        .and_then(|p| p.tools.get(name))
                        .filter(|t| t.origin == Origin::Toolset && t.policy == policy);
                    match kept {
                        Some(kept) => {
                            registry.tools.insert(name.to_string(), kept.clone());
                            continue;
                        }
                        None => load_toolset_tool(engine, name, config).await,
                    }
                }
                Err(e) => Err(format!("{e:#}")),
            };
            match loaded {
                Ok(tool) => {
                    registry.tools.insert(name.to_string(), Arc::new(tool));
                }
                Err(reason) => registry.failures.push(LoadFailure {
                    file: toolset_path(name),
                    tool: Some(name.to_string()),
                    reason,
                }),
            }
        }
        if let Some(set) = toolset {
            registry.unavailable = set
                .unavailable()
                .map(|(name, reason)| Unavailable {
                    name: name.to_string(),
                    reason: reason.to_string(),
                })
                .collect();
            for key in set.ignored_keys() {
                tracing::warn!(
                    "toolhost.toml: [toolset] configs.{key} names no toolset tool; it is kept \
                     but ignored"
                );
            }
        }
        for (name, spec) in &config.custom_tools {
            let file = PathBuf::from(crate::config::CONFIG_FILE);
            let loaded = if registry.tools.contains_key(name) {
                Err(format!(
                    "custom tool `{name}` has the name of the component tool {}",
                    dir.join(format!("{name}.wasm")).display()
                ))
            } else {
                config
                    .policy_for(name)
                    .map_err(|e| format!("{e:#}"))
                    .and_then(|policy| custom_tool(name, spec, policy))
            };
            match loaded {
                Ok(tool) => {
                    registry.tools.insert(name.clone(), Arc::new(tool));
                }
                Err(reason) => registry.failures.push(LoadFailure {
                    file,
                    tool: Some(name.clone()),
                    reason: format!("[custom_tools.{name}]: {reason}"),
                }),
            }
        }
        anyhow::ensure!(
            registry.tools.len() <= MAX_TOOLS,
            "{} tools loaded (plain components give one tool per exported function); at most \
             {MAX_TOOLS} are allowed (remove some)",
            registry.tools.len()
        );
        let missing: Vec<&str> = config
            .tools
            .keys()
            .filter(|name| {
                let declared = registry.tools.contains_key(*name)
                    || registry
                        .failures
                        .iter()
                        .any(|f| f.tool.as_deref() == Some(name))
                    || (toolset.is_some() && is_toolset_name(name));
                !declared
            })
            .map(String::as_str)
            .collect();
        anyhow::ensure!(
            missing.is_empty(),
            "toolhost.toml configures tools that are not in {}: {} (a grant for a tool \
             that does not exist is an error; remove the [tools.<name>] entry or add the tool)",
            dir.display(),
            missing
                .iter()
                .map(|n| format!("[tools.{n}]"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(registry)
    }

    /// An enabled tool by name.
    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.get(name).filter(|t| t.policy.enabled)
    }

    /// The enabled tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values().filter(|t| t.policy.enabled)
    }

    /// Every loaded tool, disabled ones included.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values()
    }

    /// The toolset tools that are enabled but have no sandboxed equivalent.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
    }

    /// Why `name` cannot be called though it is known: it did not load, or
    /// it is a toolset tool with no sandboxed equivalent. `None` for a tool
    /// that is loaded, and for a name nobody knows.
    pub fn not_callable_reason(&self, name: &str) -> Option<String> {
        self.failures
            .iter()
            .find(|f| f.tool.as_deref() == Some(name))
            .map(|f| format!("it did not load: {}", f.reason))
            .or_else(|| {
                let unavailable = self.unavailable.iter().find(|u| u.name == name)?;
                Some(unavailable.reason.clone())
            })
    }

    /// The files that did not load.
    pub fn failures(&self) -> &[LoadFailure] {
        &self.failures
    }

    /// The components this load compiled as baseline code, for the caller
    /// to optimize (see `crate::tiering`).
    pub(crate) fn take_upgrades(&mut self) -> Vec<Upgrade> {
        std::mem::take(&mut self.upgrades)
    }

    /// The tools this registry loaded from `path`, if the file is untouched
    /// since (same size and modification time) and the config still gives
    /// each of them the same policy.
    fn unchanged(&self, path: &Path, config: &Config) -> Option<Vec<Arc<Tool>>> {
        let stamp = FileStamp::of(path)?;
        let tools: Vec<Arc<Tool>> = self
            .tools
            .values()
            .filter(|t| t.origin == Origin::File && t.path == path)
            .cloned()
            .collect();
        let same = !tools.is_empty()
            && tools.iter().all(|t| {
                t.stamp == Some(stamp) && config.policy_for(&t.name).is_ok_and(|p| p == t.policy)
            });
        same.then_some(tools)
    }

    /// Add a tool loaded from a file, unless another file's tool has its
    /// name. A plain component's function displaces the holder when the
    /// name is the holder's file name: [`Self::refuse_names_of_other_files`]
    /// then refuses both.
    fn insert_from_file(&mut self, tool: Arc<Tool>) {
        let displaces =
            |holder: &Tool| tool.plain_export.is_some() && holder.plain_export.is_none();
        if let Some(holder) = self
            .tools
            .get(&tool.name)
            .filter(|holder| !displaces(holder))
        {
            self.failures.push(LoadFailure {
                file: tool.path.clone(),
                tool: Some(tool.name.clone()),
                reason: format!(
                    "the name `{}` is already taken by {}",
                    tool.name,
                    holder.path.display()
                ),
            });
            return;
        }
        self.tools.insert(tool.name.clone(), tool);
    }

    /// Refuse both sides where a plain component's function tool is named
    /// like another file's slug (`git.wasm` exporting `push` is `git_push`,
    /// beside `git_push.wasm`): whichever loaded first would otherwise take
    /// `[tools.git_push]`'s grants and secrets.
    fn refuse_names_of_other_files(&mut self, slugs: &BTreeMap<String, PathBuf>) {
        let contested: Vec<(String, PathBuf, String)> = self
            .tools
            .values()
            .filter_map(|t| {
                let export = t.plain_export.clone()?;
                let file = slugs.get(&t.name).filter(|file| **file != t.path)?;
                Some((t.name.clone(), file.clone(), export))
            })
            .collect();
        for (name, file, export) in contested {
            let Some(function) = self.tools.remove(&name) else {
                continue;
            };
            self.failures
                .retain(|f| f.tool.as_deref() != Some(name.as_str()));
            let reason = format!(
                "the name `{name}` is claimed twice: by {} (its file name) and by `{export}` \
                 exported by {} (a plain component's function); rename one, so that \
                 [tools.{name}] grants only the tool it was written for",
                file.display(),
                function.path.display(),
            );
            self.contested.insert(name.clone());
            for path in [file, function.path.clone()] {
                self.failures.push(LoadFailure {
                    file: path,
                    tool: Some(name.clone()),
                    reason: reason.clone(),
                });
            }
        }
    }

    /// Refuse every tool that differs from `lock` (or has no entry in it):
    /// it leaves the tools and becomes a [`LoadFailure`] saying what changed.
    pub fn enforce_lock(&mut self, lock: &Lockfile) {
        let refused: Vec<(String, String)> = self
            .tools
            .values()
            .filter_map(|tool| Some((tool.name.clone(), lock.refusal(tool)?)))
            .collect();
        for (name, reason) in refused {
            if let Some(tool) = self.tools.remove(&name) {
                self.failures.push(LoadFailure {
                    file: tool.path.clone(),
                    tool: Some(name),
                    reason,
                });
            }
        }
    }

    /// Keep `previous`'s version of every tool that failed to load this
    /// time but loaded before (its file was replaced by a broken one, or by
    /// one that differs from `lock`), if that version still matches `lock`.
    pub fn keep_last_good(&mut self, previous: &Registry, lock: Option<&Lockfile>) {
        let accepted = |tool: &Tool| lock.is_none_or(|lock| lock.refusal(tool).is_none());
        for failure in &self.failures {
            // By name, and by file: a plain component's tools are named
            // after its functions.
            let kept = previous.tools.values().filter(|tool| {
                failure.tool.as_deref() == Some(tool.name.as_str())
                    || (tool.origin == Origin::File && tool.path == failure.file)
            });
            for tool in kept {
                if !self.tools.contains_key(&tool.name)
                    && !self.contested.contains(&tool.name)
                    && accepted(tool)
                {
                    self.tools.insert(tool.name.clone(), tool.clone());
                }
            }
        }
    }
}

/// The `.wasm` files of a folder, sorted.
fn tool_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read tools folder {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wasm") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The tool name of a file: its stem.
pub fn slug(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

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
async fn load_file_tools(
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
    let (mut tools, upgrade) = load_component(engine, compiled, name, config).await?;
    for tool in &mut tools {
        tool.path = path.to_path_buf();
        tool.stamp = stamp;
    }
    Ok((tools, upgrade))
}

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
    let (mut tools, _) = load_component(engine, compiled, name, config).await?;
    let mut tool = tools
        .pop()
        .filter(|t| matches!(t.code(), Code::Contract(_)))
        .ok_or_else(|| format!("toolset `{name}` does not implement the contract"))?;
    tool.origin = Origin::Toolset;
    tool.path = toolset_path(name);
    Ok(tool)
}

/// How a toolset tool's source is shown: the crate it is built from.
fn toolset_path(name: &str) -> PathBuf {
    PathBuf::from("toolset").join(name)
}

/// Pre-instantiate a compiled component, then check it as the tool `name`
/// (contract) or as one tool per function (plain component). For baseline
/// code, also what its optimized compile needs.
async fn load_component(
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
        cells: tools.iter().map(|t| t.code.clone()).collect(),
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
    let Ok(contract) = ContractPre::new(pre.clone()) else {
        return plain_tools(&compiled, pre, tier, name, imports, config);
    };
    let policy = config.policy_for(name).map_err(|e| format!("{e:#}"))?;
    if policy.description.is_some() || policy.effect.is_some() {
        return Err(format!(
            "[tools.{name}] sets `description` or `effect`, which only functions of plain \
             components take; `{name}` implements the toolhost contract and declares its own"
        ));
    }
    let raw = read_metadata(engine, &contract, policy.memory_bytes).await?;
    let (metadata, validator, output_validator) = check_metadata(raw)?;
    Ok(vec![Tool {
        name: name.to_string(),
        origin: Origin::File,
        path: PathBuf::new(),
        sha256: compiled.sha256,
        metadata,
        policy,
        imports,
        validator,
        output_validator,
        stamp: None,
        code: CodeCell::new(Code::Contract(contract), tier),
        plain_export: None,
    }])
}

/// The tools of a plain component: one per function it exports.
fn plain_tools(
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
                          `toolhost:tool/tool@0.1.0`) and exports no function that can be a tool"
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
                check_output_schema(output_text.as_deref()).map_err(fail)?;
            Ok(Tool {
                name,
                origin: Origin::File,
                path: PathBuf::new(),
                sha256: compiled.sha256.clone(),
                metadata: ToolMetadata {
                    description,
                    input_schema,
                    output_schema,
                    effect: EffectDecl::Fixed(policy.effect.unwrap_or(Effect::Write)),
                    time_args: Vec::new(),
                    has_dry_run_result: false,
                },
                policy,
                imports: imports.clone(),
                validator,
                output_validator,
                stamp: None,
                plain_export: Some(function.export_path()),
                code: CodeCell::new(
                    Code::Plain(Arc::new(PlainCall {
                        pre: pre.clone(),
                        function,
                    })),
                    tier,
                ),
            })
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

/// Check a custom tool's declaration.
fn custom_tool(name: &str, spec: &CustomToolSpec, policy: ToolPolicy) -> Result<Tool, String> {
    tool::check_name(name).map_err(|e| e.to_string())?;
    tool::check_description(&spec.description).map_err(|e| e.to_string())?;
    let (input_schema, validator) =
        tool::check_object_schema("input", &spec.input_schema.to_string())
            .map_err(|e| e.to_string())?;
    Ok(Tool {
        name: name.to_string(),
        origin: Origin::Custom,
        path: PathBuf::from(crate::config::CONFIG_FILE),
        sha256: String::new(),
        metadata: ToolMetadata {
            description: spec.description.clone(),
            input_schema,
            output_schema: None,
            effect: EffectDecl::Fixed(spec.effect.unwrap_or(Effect::Write)),
            time_args: Vec::new(),
            has_dry_run_result: false,
        },
        policy,
        imports: Vec::new(),
        validator,
        output_validator: None,
        stamp: None,
        code: CodeCell::new(Code::None, CodeTier::Optimized),
        plain_export: None,
    })
}

async fn read_metadata(
    engine: &ToolEngine,
    pre: &ContractPre<CallState>,
    memory_bytes: usize,
) -> Result<types::ToolMetadata, String> {
    let mut instance =
        Instance::for_load(engine, Pre::Contract(pre), memory_bytes, METADATA_DEADLINE)
            .await
            .map_err(|e| format!("cannot instantiate: {e}"))?;
    instance
        .metadata()
        .await
        .map_err(|e| format!("`metadata` failed: {e}"))
}

/// The checked metadata with its compiled input and output schemas.
type Checked = (
    ToolMetadata,
    jsonschema::Validator,
    Option<jsonschema::Validator>,
);

/// Check raw metadata and compile the input and output schemas.
fn check_metadata(raw: types::ToolMetadata) -> Result<Checked, String> {
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
    Ok((
        ToolMetadata {
            description: raw.description,
            input_schema,
            output_schema,
            effect,
            time_args: raw.time_args,
            has_dry_run_result: raw.has_dry_run_result,
        },
        validator,
        output_validator,
    ))
}

/// Check an optional output schema and compile it.
fn check_output_schema(
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
