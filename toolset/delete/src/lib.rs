//! `delete`: remove a file, a symlink, or a directory tree from the workspace.

use std::fs;

use toolhost_sdk::prelude::*;
use toolset_common::{AtPath, display, display_input, is_root, resolve};
use walkdir::WalkDir;

/// What to delete.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The file, symlink or directory, relative to the workspace root.
    path: String,
    /// Needed to delete a directory: removes it with everything in it
    /// (default false).
    #[serde(default)]
    recursive: bool,
}

/// What `delete` returns.
#[derive(Serialize, JsonSchema)]
struct DeleteOutput {
    /// The deleted path, relative to the workspace root.
    path: String,
    /// What it was: `file`, `symlink` or `dir`.
    kind: String,
    /// How many files (and symlinks) were removed.
    deleted_files: usize,
}

struct Delete;

impl Tool for Delete {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Delete a file or symlink in the workspace, or a whole directory with
        `recursive: true`. `path` is relative to the workspace root; a symlink is
        removed itself, never what it points to. Returns what was deleted and how
        many files were removed. Deletion cannot be undone; the workspace root
        cannot be deleted, and a directory is refused unless `recursive` is set.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);
    const HAS_DRY_RUN: bool = true;

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<DeleteOutput>())
    }

    fn dry_run_result(input: &Input) -> Option<Output> {
        let how = if input.recursive {
            " (recursively, with everything in it)"
        } else {
            ""
        };
        Some(Output::text(format!(
            "Would delete {}{how}.",
            display_input(&input.path)
        )))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let path = resolve(&input.path)?;
        let shown = display(&path);
        if is_root(&path) {
            return Err(ToolError::invalid_input(
                "refusing to delete the workspace root: give a path inside it",
            ));
        }
        let file_type = fs::symlink_metadata(&path).at(&path)?.file_type();
        let (kind, deleted_files) = if file_type.is_dir() {
            if !input.recursive {
                return Err(ToolError::invalid_input(format!(
                    "{shown} is a directory; set recursive to true to delete it with \
                     everything in it"
                )));
            }
            let files = WalkDir::new(&path)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|entry| !entry.file_type().is_dir())
                .count();
            fs::remove_dir_all(&path).at(&path)?;
            ("dir", files)
        } else {
            fs::remove_file(&path).at(&path)?;
            let kind = if file_type.is_symlink() {
                "symlink"
            } else {
                "file"
            };
            (kind, 1)
        };
        let output = DeleteOutput {
            path: shown,
            kind: kind.to_string(),
            deleted_files,
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Delete);
