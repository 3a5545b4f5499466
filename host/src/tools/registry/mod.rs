//! The tools a host serves, loaded from a tools folder, the toolset and
//! `toolhost.toml`, checked, and pre-instantiated.
//!
//! Every `.wasm` file is one tool named by its file slug (or, for a plain
//! component, one tool per exported function). A tool that fails its checks
//! is reported by file and reason while the others still load.
//!
//! [`Registry`] and its queries are here; `load` orchestrates a load (of
//! the whole folder, or of what one call needs: `scope`), and each origin
//! has its own file: `component` (a file's component, then `contract` or
//! `plain`), `toolset`, `custom` and `mcp` (an MCP server's tools).

mod component;
mod contract;
mod custom;
mod load;
mod mcp;
mod plain;
mod scope;
mod tool;
mod toolset;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::prompts::PromptSpec;
use crate::resources::{ResourceSpec, ResourceTemplateSpec, TemplateValues};
use crate::sandbox::tiering::Upgrade;
pub use component::load_tool;
pub(crate) use contract::effect_from_guest;
pub use load::LoadError;
pub(crate) use load::LoadOptions;
pub use scope::Scope;
pub use tool::{Origin, Tool};
pub use toolset::load_toolset_tool;

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
    contested: BTreeSet<String>,
}

impl Registry {
    /// An enabled tool by name.
    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.get(name).filter(|t| t.policy.enabled)
    }

    /// The enabled tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values().filter(|t| t.policy.enabled)
    }

    /// The prompts the enabled tools offer, with the tool offering each.
    pub fn prompts(&self) -> impl Iterator<Item = (&Arc<Tool>, &PromptSpec)> {
        self.tools()
            .flat_map(|tool| tool.prompts().iter().map(move |prompt| (tool, prompt)))
    }

    /// The prompt `name` and the enabled tool that offers it.
    pub fn prompt(&self, name: &str) -> Option<(&Arc<Tool>, &PromptSpec)> {
        self.prompts().find(|(_, prompt)| prompt.name == name)
    }

    /// The resources at fixed addresses the enabled tools offer, with the
    /// tool offering each.
    pub fn resources(&self) -> impl Iterator<Item = (&Arc<Tool>, &ResourceSpec)> {
        self.tools()
            .flat_map(|tool| tool.resources().iter().map(move |r| (tool, r)))
    }

    /// The resource templates the enabled tools offer, with the tool
    /// offering each.
    pub fn resource_templates(&self) -> impl Iterator<Item = (&Arc<Tool>, &ResourceTemplateSpec)> {
        self.tools()
            .flat_map(|tool| tool.resource_templates().iter().map(move |t| (tool, t)))
    }

    /// The enabled tool whose component offers the address `uri`, and the
    /// values of the template it matches (none for a listed resource): a
    /// listed resource first, then the templates in tool order.
    pub fn resource(&self, uri: &str) -> Option<(&Arc<Tool>, TemplateValues)> {
        self.resources()
            .find(|(_, r)| r.uri == uri)
            .map(|(tool, _)| (tool, Vec::new()))
            .or_else(|| {
                self.resource_templates()
                    .find_map(|(tool, t)| Some((tool, t.template.matches(uri)?)))
            })
    }

    /// Every loaded tool, disabled ones included.
    pub fn all(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values()
    }

    /// The toolset tools that are enabled but cannot run here (`bash`
    /// without its sandbox, `web_search` without a search engine).
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
    }

    /// Why `name` cannot be called though it is known: it did not load, or
    /// it is a toolset tool that cannot run here. `None` for a tool
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
    /// to optimize (see `crate::sandbox::tiering`).
    pub(crate) fn take_upgrades(&mut self) -> Vec<Upgrade> {
        std::mem::take(&mut self.upgrades)
    }

    /// Refuse every tool `refusal` gives a reason for: it leaves the tools
    /// and becomes a [`LoadFailure`] with that reason (`tools.lock`'s
    /// enforcement, `crate::tools::lock::Lockfile::enforce`).
    pub fn refuse(&mut self, refusal: impl Fn(&Tool) -> Option<String>) {
        let refused: Vec<(String, String)> = self
            .tools
            .values()
            .filter_map(|tool| Some((tool.name.clone(), refusal(tool)?)))
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
    /// one the lock refused), if `accepted` still accepts that version.
    pub fn keep_last_good(&mut self, previous: &Registry, accepted: impl Fn(&Tool) -> bool) {
        for failure in &self.failures {
            // By name, and by file: a plain component's tools are named
            // after its functions. An MCP server's tools are kept only while
            // it cannot be listed: a definition it serves now and that fails
            // (or that the lock refuses) is not called with the old one's.
            let kept = previous.tools.values().filter(|tool| match tool.origin {
                Origin::Mcp => failure.tool.is_none() && tool.path == failure.file,
                _ => {
                    failure.tool.as_deref() == Some(tool.name.as_str())
                        || (tool.origin == Origin::File && tool.path == failure.file)
                }
            });
            for tool in kept {
                if !self.tools.contains_key(&tool.name)
                    && !self.contested.contains(&tool.name)
                    && self.offer_taken(tool).is_none()
                    && accepted(tool)
                {
                    self.tools.insert(tool.name.clone(), tool.clone());
                }
            }
        }
    }
}

impl Registry {
    /// Something `tool`'s component offers that another loaded tool's
    /// offers already (prompt names, resource addresses and templates are
    /// unique on a host): what it is, and that tool's file.
    fn offer_taken(&self, tool: &Tool) -> Option<(String, PathBuf)> {
        let others = || self.tools.values().filter(|other| other.name != tool.name);
        let prompt = tool.prompts().iter().find_map(|prompt| {
            let other = others().find(|o| o.prompts().iter().any(|p| p.name == prompt.name))?;
            Some((format!("the prompt `{}`", prompt.name), other.path.clone()))
        });
        let resource = || {
            tool.resources().iter().find_map(|resource| {
                let other =
                    others().find(|o| o.resources().iter().any(|r| r.uri == resource.uri))?;
                let what = format!("the resource {}", crate::resources::shown(&resource.uri));
                Some((what, other.path.clone()))
            })
        };
        let template = || {
            tool.resource_templates().iter().find_map(|template| {
                let other = others().find(|o| {
                    o.resource_templates()
                        .iter()
                        .any(|t| t.uri_template == template.uri_template)
                })?;
                let what = format!(
                    "the resource template {}",
                    crate::resources::shown(&template.uri_template)
                );
                Some((what, other.path.clone()))
            })
        };
        prompt.or_else(resource).or_else(template)
    }
}

/// The tool name of a file: its stem.
pub fn slug(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
