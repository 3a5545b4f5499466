//! `write`: create or overwrite a file in the workspace.

use std::fs;
use std::io;

use toolhost_sdk::prelude::*;
use toolset_common::{AtPath, display, display_input, io_error, is_root, resolve};

/// The file and its new content.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The file, relative to the workspace root (e.g. `src/new.rs`); missing
    /// parent directories are created.
    path: String,
    /// The file's whole new content, as UTF-8 text.
    content: String,
}

/// What `write` returns.
#[derive(Serialize, JsonSchema)]
struct WriteOutput {
    /// The file, relative to the workspace root.
    path: String,
    /// How many bytes were written.
    bytes: usize,
    /// Whether the file was created (`false`: an existing file was replaced).
    created: bool,
}

struct Write;

impl Tool for Write {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Create a file in the workspace, or replace an existing file's whole
        content; missing parent directories are created. `path` is relative to the
        workspace root and `content` is the complete new text (not a diff). Returns
        the path, the bytes written and whether the file was created. To change
        part of an existing file use `edit`, which keeps the rest intact; `write`
        cannot write into a directory path or outside the workspace.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);
    const HAS_DRY_RUN: bool = true;

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<WriteOutput>())
    }

    fn dry_run_result(input: &Input) -> Option<Output> {
        Some(Output::text(format!(
            "Would write {} bytes to {}.",
            input.content.len(),
            display_input(&input.path)
        )))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let path = resolve(&input.path)?;
        let shown = display(&path);
        if is_root(&path) {
            return Err(ToolError::invalid_input(
                "cannot write the workspace root: give the path of a file",
            ));
        }
        let created = match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::invalid_input(format!(
                    "{shown} is a directory; give the path of a file"
                )));
            }
            Ok(_) => false,
            Err(err) if err.kind() == io::ErrorKind::NotFound => true,
            Err(err) => return Err(io_error(err, &path)),
        };
        match fs::write(&path, &input.content) {
            // A missing parent directory: create the chain, then write.
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).at(parent)?;
                }
                fs::write(&path, &input.content).at(&path)?;
            }
            written => written.at(&path)?,
        }
        let output = WriteOutput {
            path: shown,
            bytes: input.content.len(),
            created,
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Write);
