//! `glob`: find files in the workspace by glob pattern.

use std::ops::ControlFlow;

use globset::GlobBuilder;
use toolhost_sdk::prelude::*;
use toolset_common::wsfs::{Kind, Workspace};
use toolset_common::{check_range, display_input, normalize};

/// The most matches one call may ask for.
const MAX_RESULTS: usize = 10_000;

/// What to look for, and where.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// A glob over paths relative to `path`, with `/` separators: `*` and `?`
    /// stay within one path segment, `**` spans directories, `{a,b}` and
    /// `[abc]` choose. E.g. `**/*.rs`, `src/*.{ts,tsx}`, `**/test_*.py`.
    pattern: String,
    /// The directory to search under, relative to the workspace root
    /// (default: the root).
    #[serde(default)]
    path: String,
    /// The most paths to return (default 1000, at most 10000).
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1, max = 10000))]
    max_results: usize,
}

fn default_max_results() -> usize {
    1000
}

/// What `glob` returns.
#[derive(Serialize, JsonSchema)]
struct GlobOutput {
    /// The matching files, relative to the workspace root, sorted by path.
    matches: Vec<String>,
    /// Whether more files matched than `max_results`.
    truncated: bool,
}

struct Glob;

impl Tool for Glob {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Find files in the workspace whose paths match a glob pattern, e.g.
        `**/*.rs` (any depth), `src/*.ts` (directly in src) or
        `**/{Cargo,package}.{toml,json}`. `pattern` is matched against each file's
        path relative to `path` (the directory to search, default the workspace
        root): `*` stays within one directory, `**/` spans any number of them.
        Returns the matching files' paths relative to the workspace root, sorted,
        at most `max_results` (default 1000; `truncated` says more matched).
        It lists files only (not directories), does not follow symlinks, skips
        `.git`, and does not look inside files: use `grep` for that.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<GlobOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let max_results = check_range("max_results", input.max_results, 1, MAX_RESULTS)?;
        let pattern = input.pattern.strip_prefix("./").unwrap_or(&input.pattern);
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| {
                ToolError::invalid_input(format!(
                    "invalid glob pattern {:?}: {}",
                    input.pattern,
                    err.kind()
                ))
            })?
            .compile_matcher();
        let relative = normalize(&input.path)?;
        let workspace = Workspace::open()?;
        if workspace.kind(&relative)? != Kind::Dir {
            return Err(ToolError::invalid_input(format!(
                "{} is not a directory; `path` is the directory to search under",
                display_input(&input.path)
            )));
        }

        let mut matches = Vec::new();
        let mut truncated = false;
        workspace.walk_files(&relative, |file| {
            if !matcher.is_match(file.relative()) {
                return ControlFlow::Continue(());
            }
            if matches.len() == max_results {
                truncated = true;
                return ControlFlow::Break(());
            }
            matches.push(file.path().to_string());
            ControlFlow::Continue(())
        })?;
        let output = GlobOutput { matches, truncated };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Glob);
