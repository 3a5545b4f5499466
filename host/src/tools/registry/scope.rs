//! What a load makes callable: the whole folder, or only what one call
//! needs (`tool call NAME`, `inspect NAME`).
//!
//! A file's tool names all follow from its slug: a contract component gives
//! the slug itself, a plain component `<slug>_<function>` (snake-cased). So
//! the files that can give a name are known from the folder's listing alone,
//! and a one-shot call compiles only those. The folder-wide checks still
//! see every other file: through the names it gave when a load last
//! recorded them beside the compile cache's index, or, for a file no load
//! has recorded, as the one tool it gives at least.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::slug;
use crate::config::Config;
use crate::config::agent::Components;
use crate::config::toolset::is_toolset_name;
use crate::files::FileStamp;
use crate::sandbox::engine::ToolEngine;

/// Which of a folder's tools a load makes callable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Every tool: the folder as `tools list`, `check` and the servers see it.
    Everything,
    /// Only the tool of this name, for one call of it; any other tool the
    /// folder holds is counted and checked but neither compiled nor run.
    Only(&'a str),
    /// A named agent's tools: the folder's files it selects, and what its
    /// config declares. A `[tools.<name>]` entry for a tool it does not
    /// serve is no error (the default agent's load checks those).
    Agent(&'a Components),
}

/// A load of part of a folder: the files to load, and what the others give.
#[derive(Debug, Default)]
pub(super) struct Part {
    /// The files that can give the tool, loaded as in a whole load.
    pub load: BTreeSet<PathBuf>,
    /// The names the other files gave when a load last recorded them.
    pub known: BTreeSet<String>,
    /// The slugs of the other files no load has recorded: one tool each at
    /// least, and maybe a function tool any name starting `<slug>_` names.
    pub unknown: Vec<String>,
    /// The toolset tool to load, if the tool is one.
    pub toolset_tool: Option<String>,
    /// Whether the MCP servers are listed: no file, toolset or custom tool
    /// can give the tool, so it can only be a server's.
    pub servers: bool,
}

impl Part {
    /// What a call of `name` needs of `files`; `None` where only a whole
    /// load can say (nothing can give `name`, so the unknown-tool error
    /// lists every tool, or the index says another file gave it). When no
    /// file, toolset or custom tool can give it but MCP servers are
    /// declared, the part lists the servers and loads no file (the load
    /// turns into a whole one if no server offers `name` either).
    pub(super) fn for_tool(
        engine: &ToolEngine,
        files: &[PathBuf],
        name: &str,
        config: &Config,
        toolset_tools: &[&str],
    ) -> Option<Self> {
        let mut part = Self::default();
        for path in files {
            let slug = slug(path);
            if may_give(&slug, name) {
                part.load.insert(path.clone());
                continue;
            }
            match recorded_names(engine, path) {
                Some(names) if names.iter().any(|n| n == name) => return None,
                Some(names) => part.known.extend(names),
                None => part.unknown.push(slug),
            }
        }
        part.toolset_tool = toolset_tools
            .iter()
            .find(|tool| **tool == name)
            .map(|tool| tool.to_string());
        let found = !part.load.is_empty()
            || part.toolset_tool.is_some()
            || config.custom_tools.contains_key(name)
            || config.agent_tools.contains_key(name);
        part.servers = !found && !config.mcp_servers.is_empty();
        (found || part.servers).then_some(part)
    }

    /// How many tools the files, toolset tools and custom tools this part
    /// leaves out give, at least.
    pub(super) fn left_out(&self, toolset_tools: usize) -> usize {
        let toolset_left = toolset_tools - usize::from(self.toolset_tool.is_some());
        self.known.len() + self.unknown.len() + toolset_left
    }

    /// Whether a tool this part leaves out may be called `name`.
    pub(super) fn may_leave_out(&self, name: &str, toolset: bool) -> bool {
        self.known.contains(name)
            || self.unknown.iter().any(|slug| may_give(slug, name))
            || (toolset && is_toolset_name(name))
    }
}

/// Whether the file `slug` can give a tool called `name`: its own (`slug`),
/// or one of its functions' if it is a plain component.
fn may_give(slug: &str, name: &str) -> bool {
    name == slug || crate::plain::may_be_function_of(slug, name)
}

fn recorded_names(engine: &ToolEngine, path: &Path) -> Option<Vec<String>> {
    engine.recorded_names(path, FileStamp::of(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_may_give_its_slug_and_its_functions_names() {
        assert!(may_give("echo", "echo"));
        assert!(may_give("shapes", "shapes_add"));
        assert!(may_give("safe-math", "safe_math_divide"));
        assert!(may_give("git", "git_push"));
        assert!(!may_give("echo", "echo2"));
        assert!(!may_give("shapes_add", "shapes"));
        assert!(!may_give("py_counter", "counter"));
        let long_slug = "a".repeat(60);
        let cut = format!("{}_{}", "a".repeat(55), "0123abcd");
        assert_eq!(cut.len(), crate::tool::MAX_NAME_CHARS);
        assert!(may_give(&long_slug, &cut));
        assert!(!may_give(&"b".repeat(60), &cut));
    }
}
