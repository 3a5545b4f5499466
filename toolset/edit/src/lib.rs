//! `edit`: replace an exact string in a text file.

use std::fs;
use std::io;

use toolhost_sdk::prelude::*;
use toolset_common::{AtPath, display, display_input, io_error, is_binary, line_numbers, resolve};

/// How many line numbers an ambiguity error lists.
const MAX_LINES_SHOWN: usize = 20;

/// The file and the replacement.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The file, relative to the workspace root; it must exist.
    path: String,
    /// The exact text to replace, whitespace and line breaks included; it must
    /// occur exactly once unless `replace_all` is set.
    old_string: String,
    /// The text to put in its place (may be empty to delete `old_string`).
    new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring exactly
    /// one (default false).
    #[serde(default)]
    replace_all: bool,
}

/// What `edit` returns.
#[derive(Serialize, JsonSchema)]
struct EditOutput {
    /// The file, relative to the workspace root.
    path: String,
    /// How many occurrences were replaced.
    replacements: usize,
}

struct Edit;

impl Tool for Edit {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Change an existing text file by exact string replacement: `old_string` is
        replaced by `new_string` in the file at `path` (relative to the workspace
        root), and the number of replacements is returned. `old_string` must match
        the file exactly, indentation and line breaks included, and occur once;
        include enough surrounding lines to make it unique, or set `replace_all`
        to replace every occurrence. Read the file first to copy the text
        exactly; `edit` cannot create files (use `write`) or change binary files,
        and it does not understand regular expressions.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);
    const HAS_DRY_RUN: bool = true;

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<EditOutput>())
    }

    fn dry_run_result(input: &Input) -> Option<Output> {
        let which = if input.replace_all {
            "every occurrence of old_string"
        } else {
            "the one occurrence of old_string"
        };
        Some(Output::text(format!(
            "Would replace {which} ({} bytes) with new_string ({} bytes) in {}.",
            input.old_string.len(),
            input.new_string.len(),
            display_input(&input.path)
        )))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let Input {
            path,
            old_string: old,
            new_string: new,
            replace_all,
        } = input;
        if old.is_empty() {
            return Err(ToolError::invalid_input(
                "old_string is empty: give the exact text to replace (use `write` to create a file)",
            ));
        }
        if old == new {
            return Err(ToolError::invalid_input(
                "old_string and new_string are the same: there is nothing to change",
            ));
        }
        let path = resolve(&path)?;
        let shown = display(&path);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(ToolError::invalid_input(format!(
                    "no such file: {shown} (edit changes existing files; use `write` to create one)"
                )));
            }
            Err(err) if err.kind() == io::ErrorKind::IsADirectory => {
                return Err(ToolError::invalid_input(format!(
                    "{shown} is a directory; edit changes a file"
                )));
            }
            Err(err) => return Err(io_error(err, &path)),
        };
        let binary = || {
            ToolError::invalid_input(format!(
                "{shown} is a binary file ({} bytes); edit only changes text files",
                bytes.len()
            ))
        };
        if is_binary(&bytes) {
            return Err(binary());
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| binary())?;

        let offsets: Vec<usize> = text.match_indices(&old).map(|(at, _)| at).collect();
        match offsets.len() {
            0 => {
                return Err(ToolError::invalid_input(format!(
                    "old_string was not found in {shown} (it must match exactly, whitespace \
                     and line breaks included; read the file again to copy it)"
                )));
            }
            1 => {}
            count if !replace_all => {
                let lines = line_numbers(&bytes, &offsets);
                let mut shown_lines: Vec<String> = lines
                    .iter()
                    .take(MAX_LINES_SHOWN)
                    .map(usize::to_string)
                    .collect();
                if count > MAX_LINES_SHOWN {
                    shown_lines.push("…".to_string());
                }
                return Err(ToolError::invalid_input(format!(
                    "old_string occurs {count} times in {shown} (lines {}); include more \
                     surrounding text to make it unique, or set replace_all",
                    shown_lines.join(", ")
                )));
            }
            _ => {}
        }
        let updated = if replace_all {
            text.replace(&old, &new)
        } else {
            text.replacen(&old, &new, 1)
        };
        fs::write(&path, updated).at(&path)?;
        let output = EditOutput {
            path: shown,
            replacements: offsets.len(),
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Edit);
