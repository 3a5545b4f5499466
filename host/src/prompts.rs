//! Prompts components offer (the contract's optional `prompts` export):
//! what a prompt is, and the checks of what a component lists when it
//! loads. Filling one in and completing its arguments are
//! [`Host::get_prompt`](crate::host::Host::get_prompt) and
//! [`Host::complete_prompt_argument`](crate::host::Host::complete_prompt_argument).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bindings;
use crate::output::ContentBlock;
use crate::tool::{self, MAX_NAME_CHARS};

/// The most prompts one component may offer.
pub const MAX_PROMPTS: usize = 64;
/// The most arguments one prompt may take.
pub const MAX_PROMPT_ARGUMENTS: usize = 32;
/// The most completion values sent for one request; more are cut.
pub const MAX_COMPLETIONS: usize = 100;
/// The longest completion value sent, in bytes; longer ones are left out.
pub const MAX_COMPLETION_BYTES: usize = 1024;

/// A prompt a tool's component offers, as checked at load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptSpec {
    /// Unique on the host.
    pub name: String,
    /// A title for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in the order declared.
    pub arguments: Vec<PromptArgumentSpec>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptArgumentSpec {
    /// Its name.
    pub name: String,
    /// What to give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// A filled-in prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptResult {
    /// A description of this instance of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// One message of a filled-in prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What it says.
    pub content: ContentBlock,
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// Values completing a prompt's argument, best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Completions {
    /// At most [`MAX_COMPLETIONS`], each at most [`MAX_COMPLETION_BYTES`].
    pub values: Vec<String>,
    /// How many the component gave that fit [`MAX_COMPLETION_BYTES`].
    pub total: usize,
}

impl Completions {
    /// Whether the component gave more than `values` holds.
    pub fn has_more(&self) -> bool {
        self.total > self.values.len()
    }
}

/// Why a prompt could not be filled in or completed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// No enabled tool offers a prompt by that name.
    #[error(
        "unknown prompt `{name}` ({})",
        if .available.is_empty() {
            "this host offers no prompts".to_string()
        } else {
            format!("available: {}", .available.join(", "))
        }
    )]
    Unknown {
        /// The name asked for.
        name: String,
        /// The prompts there are.
        available: Vec<String>,
    },
    /// The arguments do not match the prompt's.
    #[error("invalid arguments for prompt `{prompt}`: {reason}")]
    InvalidArguments {
        /// The prompt.
        prompt: String,
        /// What is wrong, naming the argument.
        reason: String,
    },
    /// The component refused, failed or went past a limit.
    #[error("prompt `{prompt}` (tool `{tool}`) failed: {reason}")]
    Failed {
        /// The prompt.
        prompt: String,
        /// The tool whose component offers it.
        tool: String,
        /// What happened.
        reason: String,
    },
}

impl PromptError {
    /// A stable code for the surfaces: `unknown_prompt`,
    /// `invalid_prompt_arguments` or `prompt_failed`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unknown { .. } => "unknown_prompt",
            Self::InvalidArguments { .. } => "invalid_prompt_arguments",
            Self::Failed { .. } => "prompt_failed",
        }
    }
}

/// Check the prompts a component listed at load.
pub(crate) fn check(raw: Vec<bindings::Prompt>) -> Result<Vec<PromptSpec>, String> {
    if raw.len() > MAX_PROMPTS {
        return Err(format!(
            "offers {} prompts; at most {MAX_PROMPTS} are allowed",
            raw.len()
        ));
    }
    let mut names = BTreeMap::new();
    raw.into_iter()
        .map(|prompt| {
            let name = prompt.name;
            if !tool::is_identifier(&name) {
                return Err(format!(
                    "prompt name {name:?} is invalid: use 1-{MAX_NAME_CHARS} characters of A-Z, \
                     a-z, 0-9, `_` and `-`"
                ));
            }
            if names.insert(name.clone(), ()).is_some() {
                return Err(format!("offers the prompt `{name}` twice"));
            }
            let text_ok = |what: &str, text: &Option<String>| match text
                .as_deref()
                .and_then(tool::text_problem)
            {
                Some(problem) => Err(format!("prompt `{name}`: its {what} {problem}")),
                None => Ok(()),
            };
            text_ok("title", &prompt.title)?;
            text_ok("description", &prompt.description)?;
            if prompt.arguments.len() > MAX_PROMPT_ARGUMENTS {
                return Err(format!(
                    "prompt `{name}` takes {} arguments; at most {MAX_PROMPT_ARGUMENTS} are allowed",
                    prompt.arguments.len()
                ));
            }
            let mut arguments: Vec<PromptArgumentSpec> = Vec::new();
            for argument in prompt.arguments {
                if !tool::is_identifier(&argument.name) {
                    return Err(format!(
                        "prompt `{name}`: argument name {:?} is invalid: use 1-{MAX_NAME_CHARS} \
                         characters of A-Z, a-z, 0-9, `_` and `-`",
                        argument.name
                    ));
                }
                if arguments.iter().any(|a| a.name == argument.name) {
                    return Err(format!(
                        "prompt `{name}` declares the argument `{}` twice",
                        argument.name
                    ));
                }
                text_ok("argument's description", &argument.description)?;
                arguments.push(PromptArgumentSpec {
                    name: argument.name,
                    description: argument.description,
                    required: argument.required,
                });
            }
            Ok(PromptSpec {
                name,
                title: prompt.title,
                description: prompt.description,
                arguments,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(name: &str, arguments: &[(&str, bool)]) -> bindings::Prompt {
        bindings::Prompt {
            name: name.into(),
            title: None,
            description: Some("d".into()),
            arguments: arguments
                .iter()
                .map(|(name, required)| bindings::PromptArgument {
                    name: (*name).into(),
                    description: None,
                    required: *required,
                })
                .collect(),
        }
    }

    #[test]
    fn prompts_are_checked_like_tool_names() {
        let ok = check(vec![raw("a", &[("x", true), ("y", false)])]).unwrap();
        assert_eq!(ok[0].arguments.len(), 2);
        let err = |raw| check(raw).unwrap_err();
        assert!(err(vec![raw("bad name", &[])]).contains("invalid"));
        // Only tools may not take the built-in toolset's names.
        let reserved = check(vec![raw("read", &[("grep", true)])]).unwrap();
        assert_eq!(reserved[0].arguments[0].name, "grep");
        assert!(err(vec![raw("a", &[("a b", true)])]).contains("argument name \"a b\""));
        assert!(err(vec![raw("a", &[]), raw("a", &[])]).contains("`a` twice"));
        assert!(err(vec![raw("a", &[("x", true), ("x", false)])]).contains("argument `x` twice"));
        let many: Vec<_> = (0..=MAX_PROMPTS)
            .map(|i| raw(&format!("p{i}"), &[]))
            .collect();
        assert!(err(many).contains("at most 64"));
        let mut long = raw("a", &[]);
        long.description = Some("x".repeat(tool::MAX_DESCRIPTION_CHARS + 1));
        assert!(err(vec![long]).contains("at most 4096"));
        let mut hidden = raw("a", &[]);
        hidden.title = Some("tab\u{1b}[2J".into());
        assert!(err(vec![hidden]).contains("its title"));
        let mut windows = raw("a", &[]);
        windows.description = Some("line one\r\nline two".into());
        assert!(check(vec![windows]).is_ok());
    }
}
