//! `list`: the entries of one workspace directory.

use std::fs;

use toolhost_sdk::prelude::*;
use toolset_common::{AtPath, display, resolve};

/// The most entries one call returns.
const MAX_ENTRIES: usize = 1000;

/// Which directory.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The directory, relative to the workspace root (default: the root).
    #[serde(default)]
    path: String,
}

/// What `list` returns.
#[derive(Serialize, JsonSchema)]
struct ListOutput {
    /// The directory, relative to the workspace root (`.` for the root).
    path: String,
    /// Its entries, sorted by name.
    entries: Vec<Entry>,
    /// Whether entries were left out (more than 1000).
    truncated: bool,
}

/// One directory entry.
#[derive(Serialize, JsonSchema)]
struct Entry {
    /// The entry's file name.
    name: String,
    /// What it is.
    kind: Kind,
    /// The size in bytes, for files.
    size: Option<u64>,
}

/// What a directory entry is.
#[derive(Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else (a socket, a device, …).
    Other,
}

struct List;

impl Tool for List {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        List the entries of one directory in the workspace, to see what files and
        subdirectories it holds. `path` is the directory relative to the workspace
        root (default: the root). Returns each entry's name, kind (file, dir,
        symlink or other) and size in bytes for files, sorted by name, at most
        1000 (`truncated` says more exist). It does not descend into
        subdirectories: use `glob` (e.g. `**/*.rs`) to find files at any depth.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<ListOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let path = resolve(&input.path)?;
        let shown = display(&path);
        if !fs::metadata(&path).at(&path)?.is_dir() {
            return Err(ToolError::invalid_input(format!(
                "{shown} is a file, not a directory; use `read` to see its content"
            )));
        }
        let mut found = Vec::new();
        for entry in fs::read_dir(&path).at(&path)? {
            let entry = entry.at(&path)?;
            found.push((entry.file_name().to_string_lossy().into_owned(), entry));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let truncated = found.len() > MAX_ENTRIES;
        found.truncate(MAX_ENTRIES);

        let mut entries = Vec::with_capacity(found.len());
        for (name, entry) in found {
            let file_type = entry.file_type().at(&entry.path())?;
            let kind = if file_type.is_symlink() {
                Kind::Symlink
            } else if file_type.is_dir() {
                Kind::Dir
            } else if file_type.is_file() {
                Kind::File
            } else {
                Kind::Other
            };
            let size = match kind {
                // An entry removed meanwhile just shows no size.
                Kind::File => entry.metadata().ok().map(|meta| meta.len()),
                _ => None,
            };
            entries.push(Entry { name, kind, size });
        }
        let output = ListOutput {
            path: shown,
            entries,
            truncated,
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(List);
