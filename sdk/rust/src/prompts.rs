//! Prompt templates a tool's component offers to MCP clients
//! (`prompts/list`, `prompts/get`, `completion/complete`).
//!
//! Implement [`Prompts`] and name it in `export_tool!`:
//!
//! ```
//! use std::collections::BTreeMap;
//! use toolhost_sdk::prelude::*;
//! use toolhost_sdk::prompts::{Message, Prompt, Prompts};
//!
//! struct Review;
//!
//! impl Prompts for Review {
//!     fn list() -> Vec<Prompt> {
//!         vec![Prompt::new("review_pr")
//!             .with_description("Review a pull request for bugs.")
//!             .with_argument("number", "The pull request's number.", true)]
//!     }
//!
//!     fn get(name: &str, arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
//!         match name {
//!             "review_pr" => Ok(vec![Message::user(format!(
//!                 "Review pull request #{} for bugs.",
//!                 arguments["number"]
//!             ))]),
//!             _ => Err(format!("no prompt {name}")),
//!         }
//!     }
//! }
//! # struct Echo;
//! # impl Tool for Echo {
//! #     type Input = NoInput;
//! #     const DESCRIPTION: &'static str = "Echo.";
//! #     fn execute(_: NoInput, _: &CallContext) -> Result<Output, ToolError> { Ok("".into()) }
//! # }
//! # export_tool!(Echo, prompts = Review);
//! ```
//!
//! The host lists the prompts when the component loads, checks each call's
//! arguments against the declared ones (every required one given, no
//! other), and runs `get` and `complete` in a fresh instance with the
//! tool's grants, read-only, and no workspace.

use std::collections::BTreeMap;

use crate::Content;
use crate::bindings::exports::toolhost::tool::prompts as wit;

/// A prompt a component offers.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// Unique on the host; 1-64 characters of A-Z, a-z, 0-9, `_` and `-`.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What the prompt is for.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<Argument>,
}

/// One argument of a prompt. Values are strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    /// Its name, unique in the prompt.
    pub name: String,
    /// What to give.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

impl Prompt {
    /// A prompt named `name`, with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
        }
    }

    /// What the prompt is for, shown in the client's prompt picker.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A title for people, when it differs from the name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an argument.
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(Argument {
            name: name.into(),
            description: Some(description.into()),
            required,
        });
        self
    }

    fn into_wit(self) -> wit::Prompt {
        wit::Prompt {
            name: self.name,
            title: self.title,
            description: self.description,
            arguments: self
                .arguments
                .into_iter()
                .map(|argument| wit::PromptArgument {
                    name: argument.name,
                    description: argument.description,
                    required: argument.required,
                })
                .collect(),
        }
    }
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a filled-in prompt. The host checks the messages like a
/// tool's output (the tool's `max_output_bytes`, at most 1000 blocks).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What it says: text, an image, audio, a document, a resource link….
    pub content: Content,
}

impl Message {
    /// A message from the user; text converts (`Message::user("…")`).
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    fn into_wit(self) -> wit::PromptMessage {
        wit::PromptMessage {
            role: match self.role {
                Role::User => wit::Role::User,
                Role::Assistant => wit::Role::Assistant,
            },
            content: self.content.into_wit(),
        }
    }
}

/// The prompts a component offers; name the implementation in
/// `export_tool!(Tool, prompts = P)`.
pub trait Prompts {
    /// The prompts offered, read once when the component loads.
    fn list() -> Vec<Prompt>;

    /// The prompt `name` filled in with `arguments`, or why it cannot be.
    fn get(name: &str, arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String>;

    /// Values completing `value`, the start of `argument` of prompt `name`,
    /// best first. None by default.
    fn complete(name: &str, argument: &str, value: &str) -> Vec<String> {
        let _ = (name, argument, value);
        Vec::new()
    }
}

/// No prompts: what `export_tool!(Tool)` offers.
pub struct NoPrompts;

impl Prompts for NoPrompts {
    fn list() -> Vec<Prompt> {
        Vec::new()
    }

    fn get(name: &str, _arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        Err(format!("this component offers no prompt `{name}`"))
    }
}

/// The export glue: `P`'s prompts as the contract's.
pub(crate) fn list<P: Prompts>() -> Vec<wit::Prompt> {
    P::list().into_iter().map(Prompt::into_wit).collect()
}

/// The export glue for `get-prompt`.
pub(crate) fn get<P: Prompts>(
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<wit::PromptResult, String> {
    let arguments: BTreeMap<String, String> = arguments.into_iter().collect();
    let messages = P::get(name, &arguments)?;
    Ok(wit::PromptResult {
        description: None,
        messages: messages.into_iter().map(Message::into_wit).collect(),
    })
}
