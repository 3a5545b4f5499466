//! Loading a tools folder: each origin's tools in turn (files, the toolset,
//! custom tools), the folder-wide checks (the tool limit, name clashes, a
//! grant for a tool that does not exist), and reuse of what a reload left
//! unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::scope::{Part, Scope};
use super::{
    LoadFailure, Origin, Registry, Tool, Unavailable, component, custom, mcp, slug, toolset,
};
use crate::config::Config;
use crate::config::agent::Components;
use crate::config::toolset::is_toolset_name;
use crate::files::FileStamp;
use crate::sandbox::engine::{Pins, Tiering, ToolEngine};
use crate::tool::MAX_TOOLS;
use crate::upstream::Upstreams;

/// How [`Registry::load_with`] loads a tools folder.
#[derive(Clone, Copy)]
pub(crate) struct LoadOptions<'a> {
    /// The folder of component files.
    pub(crate) dir: &'a Path,
    /// The settings the tools are loaded under.
    pub(crate) config: &'a Config,
    /// The registry a reload replaces: what is unchanged is reused from it.
    pub(crate) previous: Option<&'a Registry>,
    /// How a component the compile cache lacks is compiled.
    pub(crate) tiering: Tiering,
    /// What `tools.lock` pins, when there is one: a file that differs is
    /// refused before it is compiled.
    pub(crate) pins: Option<&'a dyn Pins>,
    /// What to load.
    pub(crate) scope: Scope<'a>,
    /// The MCP servers to list tools from; `None`: none.
    pub(crate) upstreams: Option<&'a Upstreams>,
    /// Where `[sources]` are pulled to and read from; `None`: they are not
    /// loaded (each is a failure saying so).
    pub(crate) sources: Option<&'a crate::oci::Sources>,
}

impl<'a> LoadOptions<'a> {
    /// Everything in `dir` under `config`, optimized, with no lock, no
    /// previous registry and no MCP server.
    pub(crate) fn new(dir: &'a Path, config: &'a Config) -> Self {
        Self {
            dir,
            config,
            previous: None,
            tiering: Tiering::Optimized,
            pins: None,
            scope: Scope::Everything,
            upstreams: None,
            sources: None,
        }
    }
}

/// Why a tools folder could not be loaded at all; a tool that fails its
/// checks is a [`LoadFailure`] instead, and the others still load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The folder could not be read.
    #[error("cannot read tools folder {}", .dir.display())]
    UnreadableFolder {
        /// The tools folder.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Files, custom tools and toolset tools together are past the limit.
    #[error(
        "{} holds {files} tools, toolhost.toml declares {custom} custom and agent-execution \
         tools and the toolset enables {toolset}: {} in all; at most {MAX_TOOLS} are allowed \
         (remove some)",
        .dir.display(),
        .files + .custom + .toolset
    )]
    TooManyDeclared {
        /// The tools folder.
        dir: PathBuf,
        /// Its `.wasm` files.
        files: usize,
        /// The custom and agent-execution tools `toolhost.toml` declares.
        custom: usize,
        /// The toolset tools it enables.
        toolset: usize,
    },
    /// The loaded tools are past the limit (a plain component gives one per
    /// function, an MCP server as many as it lists).
    #[error(
        "{loaded} tools loaded (plain components give one tool per exported function, MCP \
         servers as many as they list); at most {MAX_TOOLS} are allowed (remove some, or \
         disable some in their toolset)"
    )]
    TooManyLoaded {
        /// How many loaded.
        loaded: usize,
    },
    /// `toolhost.toml` configures tools that do not exist.
    #[error(
        "toolhost.toml configures tools that are not in {}: {} (a grant for a tool that does \
         not exist is an error; remove the [tools.<name>] entry or add the tool)",
        .dir.display(),
        .names.iter().map(|n| format!("[tools.{n}]")).collect::<Vec<_>>().join(", ")
    )]
    UnknownConfigured {
        /// The tools folder.
        dir: PathBuf,
        /// The `[tools.<name>]` entries naming no tool.
        names: Vec<String>,
    },
}

impl Registry {
    /// Load every `.wasm` in `dir`. Fails only when the folder cannot be read
    /// or holds more than [`MAX_TOOLS`] tools; a bad tool is a [`LoadFailure`].
    /// MCP servers are reached only through a [`crate::Host`]: here each
    /// declared one is a [`LoadFailure`].
    pub async fn load(engine: &ToolEngine, dir: &Path, config: &Config) -> Result<Self, LoadError> {
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
    ) -> Result<Self, LoadError> {
        let tiering = match previous {
            Some(_) => Tiering::BaselineFirst,
            None => Tiering::Optimized,
        };
        let options = LoadOptions {
            previous,
            tiering,
            ..LoadOptions::new(dir, config)
        };
        Self::load_with(engine, options).await
    }

    /// Load a tools folder as `options` say: reusing what `previous` holds,
    /// compiling what the cache does not hold as `tiering` says, loading
    /// only what `scope` needs, and listing the MCP servers' tools through
    /// `upstreams` (when a call of a file's, toolset or custom tool is all
    /// `scope` needs, no server is started).
    pub(crate) async fn load_with(
        engine: &ToolEngine,
        options: LoadOptions<'_>,
    ) -> Result<Self, LoadError> {
        let LoadOptions {
            dir,
            config,
            previous,
            tiering,
            pins,
            scope,
            upstreams,
            sources,
        } = options;
        let mut files = tool_files(dir)?;
        let mut registry = Self::default();
        // `[sources]` are the default agent's: a named agent selects from
        // the tools folder.
        let wanted: BTreeMap<String, String> = config
            .sources
            .iter()
            .filter(|(name, _)| match scope {
                Scope::Everything => true,
                Scope::Only(only) => *name == only,
                Scope::Agent(_) => false,
            })
            .map(|(name, source)| (name.clone(), source.clone()))
            .collect();
        if !wanted.is_empty() {
            let not_ready = match sources {
                Some(sources) => {
                    let (ready, not_ready) = sources
                        .prepare(&wanted, &config.registry_rules(), dir)
                        .await;
                    files.extend(ready);
                    not_ready
                }
                None => wanted
                    .keys()
                    .map(|name| crate::oci::sources::NotReady {
                        name: name.clone(),
                        reason: "a tool from a registry is loaded by a host (`serve`, `mcp`, \
                                 `tool call`), not here"
                            .into(),
                    })
                    .collect(),
            };
            for crate::oci::sources::NotReady { name, reason } in not_ready {
                let source = wanted.get(&name).cloned().unwrap_or_default();
                registry.failures.push(LoadFailure {
                    file: PathBuf::from(source),
                    tool: Some(name),
                    reason,
                });
            }
        }
        if let Scope::Agent(Components::Named(slugs)) = scope {
            files.retain(|path| slugs.contains(&slug(path)));
            for absent in slugs
                .iter()
                .filter(|s| !files.iter().any(|p| slug(p) == **s))
            {
                registry.failures.push(LoadFailure {
                    file: dir.join(format!("{absent}.wasm")),
                    tool: Some(absent.clone()),
                    reason: format!(
                        "`components` names `{absent}`, but the tools folder has no \
                         `{absent}.wasm`"
                    ),
                });
            }
        }
        let toolset = config.declared_toolset();
        let toolset_tools: Vec<&str> = toolset
            .map(|set| {
                set.components()
                    .chain(set.enables_bash().then_some("bash"))
                    .collect()
            })
            .unwrap_or_default();
        let count = files.len()
            + config.custom_tools.len()
            + config.agent_tools.len()
            + toolset_tools.len();
        if count > MAX_TOOLS {
            return Err(LoadError::TooManyDeclared {
                dir: dir.to_path_buf(),
                files: files.len(),
                custom: config.custom_tools.len() + config.agent_tools.len(),
                toolset: toolset_tools.len(),
            });
        }
        let mut listing = None;
        let part = match scope {
            Scope::Everything | Scope::Agent(_) => None,
            Scope::Only(name) => match Part::for_tool(engine, &files, name, config, &toolset_tools)
            {
                // Only a server can give it: list them first, and load the
                // whole folder if none offers it.
                Some(part) if part.servers => match upstreams {
                    Some(upstreams) => {
                        let listed = mcp::list(upstreams, config).await;
                        let offered = listed.values().any(|(_, tools)| {
                            tools
                                .as_ref()
                                .is_ok_and(|tools| tools.iter().any(|t| t.name == name))
                        });
                        listing = Some(listed);
                        offered.then_some(part)
                    }
                    None => None,
                },
                other => other,
            },
        };
        let slugs: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|path| (slug(path), path.clone()))
            .collect();
        for path in files {
            if part.as_ref().is_some_and(|part| !part.load.contains(&path)) {
                continue;
            }
            let name = slug(&path);
            if let Some(kept) = previous.and_then(|p| p.unchanged(&path, config)) {
                for tool in kept {
                    registry.insert_from_file(tool);
                }
                continue;
            }
            let gate = pins.map(|pins| pins.gate(&name));
            match component::load_file_tools(engine, &path, &name, config, tiering, gate).await {
                Ok((tools, upgrade)) => {
                    if let Some(stamp) = tools.first().and_then(|t| t.stamp) {
                        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
                        engine.record_names(&path, stamp, &names);
                    }
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
        let toolset_count = toolset_tools.len();
        // `bash` is the host's own, loaded below with the unavailable ones.
        for name in toolset_tools.into_iter().filter(|name| *name != "bash") {
            if part
                .as_ref()
                .is_some_and(|part| part.toolset_tool.as_deref() != Some(name))
            {
                continue;
            }
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
                        None => toolset::load_toolset_tool(engine, name, config).await,
                    }
                }
                Err(e) => Err(format!("{e:#}")),
            };
            match loaded {
                Ok(tool) => {
                    registry.tools.insert(name.to_string(), Arc::new(tool));
                }
                Err(reason) => registry.failures.push(LoadFailure {
                    file: toolset::toolset_path(name),
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
            if set.enables_bash()
                && part
                    .as_ref()
                    .is_none_or(|p| p.toolset_tool.as_deref() == Some("bash"))
            {
                let loaded = match config.policy_for("bash") {
                    Ok(policy) => toolset::load_bash(&set.bash, policy).await,
                    Err(e) => Err(format!("{e:#}")),
                };
                match loaded {
                    Ok(tool) => {
                        registry.tools.insert("bash".to_string(), Arc::new(tool));
                    }
                    Err(reason) => registry.unavailable.insert(
                        0,
                        Unavailable {
                            name: "bash".to_string(),
                            reason: format!("bash's sandbox does not work here: {reason}"),
                        },
                    ),
                }
            }
            for key in set.ignored_keys() {
                tracing::warn!(
                    "toolhost.toml: [toolset] configs.{key} names no toolset tool; it is kept \
                     but ignored"
                );
            }
        }
        for (name, spec) in &config.custom_tools {
            registry.insert_declared(name, "custom_tools", config, |policy| {
                custom::custom_tool(name, spec, policy)
            });
        }
        for (name, spec) in &config.agent_tools {
            registry.insert_declared(name, "agent_tools", config, |policy| {
                custom::agent_tool(name, spec, policy)
            });
        }
        let lists_servers = part.as_ref().is_none_or(|part| part.servers);
        let listing = match (listing, upstreams) {
            (Some(listing), _) => Some(listing),
            (None, Some(upstreams)) if lists_servers => Some(mcp::list(upstreams, config).await),
            (None, _) => None,
        };
        match &listing {
            Some(listing) => registry.mount_upstreams(config, listing),
            None if lists_servers => {
                for server in &config.mcp_servers {
                    registry.failures.push(LoadFailure {
                        file: server.source(),
                        tool: None,
                        reason: format!(
                            "MCP server `{}`: MCP servers are reached only through a host \
                             (toolhost::Host), not by loading a registry alone",
                            server.name
                        ),
                    });
                }
            }
            None => {}
        }
        // A server not listed may give any name `[tools.<name>]` configures.
        let unlisted_servers = !config.mcp_servers.is_empty()
            && listing
                .as_ref()
                .is_none_or(|listing| listing.values().any(|(_, listed)| listed.is_err()));
        let left_out = part.as_ref().map_or(0, |part| part.left_out(toolset_count));
        if registry.tools.len() + left_out > MAX_TOOLS {
            return Err(LoadError::TooManyLoaded {
                loaded: registry.tools.len() + left_out,
            });
        }
        // A named agent's load leaves the `[tools.<name>]` check to the
        // default agent's.
        let checks_configured = !matches!(scope, Scope::Agent(_));
        let missing: Vec<String> = config
            .tools
            .keys()
            .filter(|_| checks_configured)
            .filter(|name| {
                let declared = registry.tools.contains_key(*name)
                    || registry
                        .failures
                        .iter()
                        .any(|f| f.tool.as_deref() == Some(name))
                    || (toolset.is_some() && is_toolset_name(name))
                    || unlisted_servers
                    || part
                        .as_ref()
                        .is_some_and(|part| part.may_leave_out(name, toolset.is_some()));
                !declared
            })
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(LoadError::UnknownConfigured {
                dir: dir.to_path_buf(),
                names: missing,
            });
        }
        Ok(registry)
    }

    /// Add the tool `name` that `toolhost.toml` declares in `[<table>.<name>]`
    /// (a custom or agent-execution tool), checked by `check` with its
    /// policy, or record why it is refused.
    fn insert_declared(
        &mut self,
        name: &str,
        table: &str,
        config: &Config,
        check: impl FnOnce(crate::config::ToolPolicy) -> Result<Tool, String>,
    ) {
        let loaded = match self.tools.get(name) {
            Some(holder) => Err(format!(
                "`{name}` is already the name of {}; tool names are unique",
                holder.path.display()
            )),
            None => config
                .policy_for(name)
                .map_err(|e| format!("{e:#}"))
                .and_then(check),
        };
        match loaded {
            Ok(tool) => {
                self.tools.insert(name.to_string(), Arc::new(tool));
            }
            Err(reason) => self.failures.push(LoadFailure {
                file: PathBuf::from(crate::config::CONFIG_FILE),
                tool: Some(name.to_string()),
                reason: format!("[{table}.{name}]: {reason}"),
            }),
        }
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
            |holder: &Tool| tool.plain_export().is_some() && holder.plain_export().is_none();
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
        if let Some((what, other)) = self.offer_taken(&tool) {
            self.failures.push(LoadFailure {
                file: tool.path.clone(),
                tool: Some(tool.name.clone()),
                reason: format!(
                    "it offers {what}, which {} already offers (prompt names, resource \
                     addresses and templates are unique on a host; rename one)",
                    other.display()
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
                let export = t.plain_export()?.to_string();
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
}

/// The `.wasm` files of a folder, sorted.
fn tool_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let unreadable = |source| LoadError::UnreadableFolder {
        dir: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.extension().is_some_and(|e| e == "wasm") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
