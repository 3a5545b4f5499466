//! `word_count`: count the lines, words and bytes of a file in the workspace.
//!
//! The same tool is written in Python (`py_word_count`) and TypeScript
//! (`ts_word_count`); one test suite runs all three. Each also offers MCP
//! clients a prompt that asks the model to use it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path};

use toolhost_sdk::prelude::*;
use toolhost_sdk::prompts::{Message, Prompt, Prompts};

/// Which file to count.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The file's path, relative to the workspace (e.g. `notes/todo.md`).
    #[schemars(length(min = 1))]
    path: String,
}

struct WordCount;

impl Tool for WordCount {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Count the lines, words and bytes of a file in the session's workspace,
        like `wc`. Lines are newline characters; words are runs of characters
        between whitespace. The path is relative to the workspace.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let relative = Path::new(&input.path);
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(ToolError::invalid_input(format!(
                "path {:?} must be relative to the workspace, without `..`",
                input.path
            )));
        }
        let bytes = match std::fs::read(Path::new("/workspace").join(relative)) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(ToolError::invalid_input(format!(
                    "no file named {} in the workspace",
                    input.path
                )));
            }
            Err(err) => return Err(err.into()),
        };
        toolhost_sdk::progress::report(1.0, Some(2.0), Some("read the file"));
        let lines = bytes.iter().filter(|&&b| b == b'\n').count();
        let words = String::from_utf8_lossy(&bytes).split_whitespace().count();
        toolhost_sdk::progress::report(2.0, Some(2.0), Some("counted"));
        Ok(json!({
            "path": input.path,
            "lines": lines,
            "words": words,
            "bytes": bytes.len(),
        })
        .into())
    }
}

/// The prompt `word_count_report`: ask the model to count a file and report.
struct Report;

impl Prompts for Report {
    fn list() -> Vec<Prompt> {
        vec![
            Prompt::new("word_count_report")
                .with_description("Ask for a file's word count, reported briefly or in detail.")
                .with_argument("path", "The file, relative to the workspace.", true)
                .with_argument("style", "`brief` (the default) or `detailed`.", false),
        ]
    }

    fn get(_name: &str, arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        let path = arguments.get("path").map_or("", String::as_str);
        let style = arguments.get("style").map_or("brief", String::as_str);
        Ok(vec![Message::user(format!(
            "Use word_count on `{path}` and give a {style} report of its lines, words and bytes."
        ))])
    }

    fn complete(_name: &str, argument: &str, value: &str) -> Vec<String> {
        if argument != "style" {
            return Vec::new();
        }
        ["brief", "detailed"]
            .into_iter()
            .filter(|style| style.starts_with(value))
            .map(str::to_string)
            .collect()
    }
}

export_tool!(WordCount, prompts = Report);
