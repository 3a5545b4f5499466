//! `notes`: Markdown notes kept as files under `/workspace/notes`.

use std::{fs, io, path::PathBuf};

use toolhost_sdk::prelude::*;

const DIR: &str = "/workspace/notes";

/// What to do.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Action {
    /// Create or replace a note (needs `title` and `body`).
    Add,
    /// List the titles of all notes.
    List,
    /// Return one note's body (needs `title`).
    Read,
    /// Remove a note (needs `title`).
    Delete,
}

/// A note operation.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The operation.
    action: Action,
    /// The note's title; also its file name, so no slashes.
    title: Option<String>,
    /// The note's Markdown text, for `add`.
    body: Option<String>,
}

struct Notes;

impl Tool for Notes {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Keep Markdown notes in the session's workspace: add (create or replace),
        list, read or delete a note by title. `list` returns the titles, `read`
        a note's body, `add` and `delete` a confirmation. Titles are file
        names, so they cannot hold slashes.
    ";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.action {
            Action::List | Action::Read => Effect::Read,
            Action::Add | Action::Delete => Effect::Write,
        }
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        if let Action::List = input.action {
            let mut titles: Vec<String> = match fs::read_dir(DIR) {
                Ok(entries) => entries
                    .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                    .filter_map(|name| Some(name.strip_suffix(".md")?.to_string()))
                    .collect(),
                Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
                Err(err) => return Err(err.into()),
            };
            titles.sort();
            return Ok(json!({ "notes": titles }).into());
        }
        let title = input.title.unwrap_or_default();
        if title.trim().is_empty()
            || title.len() > 200
            || title.chars().all(|c| c == '.')
            || title.contains(['/', '\\', '\0'])
        {
            return Err(ToolError::invalid_input(format!(
                "invalid title {title:?}: use 1-200 characters, no slashes, not only dots"
            )));
        }
        let path = PathBuf::from(DIR).join(format!("{title}.md"));
        let missing = |err: io::Error| match err.kind() {
            io::ErrorKind::NotFound => {
                ToolError::invalid_input(format!("no note titled {title:?}"))
            }
            _ => err.into(),
        };
        match input.action {
            Action::Read => Ok(fs::read_to_string(&path).map_err(missing)?.into()),
            Action::Delete => {
                fs::remove_file(&path).map_err(missing)?;
                Ok(json!({ "title": title, "deleted": true }).into())
            }
            // `add`; `list` returned above.
            _ => {
                let body = input
                    .body
                    .ok_or_else(|| ToolError::invalid_input("`body` is required to add a note"))?;
                fs::create_dir_all(DIR)?;
                let replaced = path.exists();
                fs::write(&path, body)?;
                Ok(json!({ "title": title, "replaced": replaced }).into())
            }
        }
    }
}

export_tool!(Notes);
