//! What a loaded tool is: its name rules, effect, and checked metadata.

use serde::Serialize;
use serde_json::Value;

/// The most tools one host serves (the built-in toolset included).
pub const MAX_TOOLS: usize = 128;
/// The longest description a tool may have, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 4096;
/// The longest tool name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Names kept for the built-in toolset; a user tool may not take one.
pub const RESERVED_NAMES: &[&str] = &[
    "bash",
    "read",
    "write",
    "edit",
    "list",
    "delete",
    "glob",
    "grep",
    "web_fetch",
    "web_search",
];

/// What a call does to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Changes nothing: runs in dry-run sessions, read-only sandbox, retried.
    Read,
    /// Repeating it changes nothing more: stubbed in dry-run, retried.
    Idempotent,
    /// Changes something: stubbed in dry-run, runs once.
    Write,
}

impl Effect {
    /// Whether a transient failure of this call may be retried.
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Read | Self::Idempotent)
    }

    /// Its name in configs and listings: `read`, `idempotent`, `write`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Idempotent => "idempotent",
            Self::Write => "write",
        }
    }
}

impl std::fmt::Display for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a tool declares its effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EffectDecl {
    /// Every call has this effect.
    Fixed(Effect),
    /// Decided per call by the tool's `effect-for`.
    ByInput,
}

impl std::fmt::Display for EffectDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(effect) => f.write_str(effect.name()),
            Self::ByInput => f.write_str("by-input"),
        }
    }
}

/// A tool's metadata, as read from its component and checked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetadata {
    /// Written for the model.
    pub description: String,
    /// The input JSON Schema (`{"type":"object"}` when the tool takes no input).
    pub input_schema: Value,
    /// The advertised output JSON Schema, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The declared effect.
    pub effect: EffectDecl,
    /// Input properties bounded by a session's `asOf`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub time_args: Vec<String>,
    /// Whether the tool supplies its own dry-run result.
    pub has_dry_run_result: bool,
}

/// Why a tool's name or metadata was refused at load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The name breaks the naming rule.
    #[error(
        "name `{0}` is invalid: use 1-{MAX_NAME_CHARS} characters of A-Z, a-z, 0-9, `_` and `-`"
    )]
    BadName(String),
    /// The name belongs to the built-in toolset.
    #[error("name `{0}` is reserved for the built-in toolset; rename the file")]
    ReservedName(String),
    /// The description is empty.
    #[error("description is required")]
    MissingDescription,
    /// The description is too long.
    #[error("description has {0} characters; at most {MAX_DESCRIPTION_CHARS} are allowed")]
    LongDescription(usize),
    /// The description holds a control or bidirectional-formatting
    /// character, which could hide text from whoever reviews it.
    #[error(
        "description holds the control character U+{code:04X} at character {at}; only newlines \
         and tabs are allowed (control and bidirectional-formatting characters can hide text \
         from a reviewer)"
    )]
    ControlCharacter {
        /// Its code point.
        code: u32,
        /// Its position, counted in characters from 0.
        at: usize,
    },
    /// A schema is not JSON.
    #[error("{which} schema is not valid JSON: {reason}")]
    SchemaNotJson {
        /// `input` or `output`.
        which: &'static str,
        /// The parser's message.
        reason: String,
    },
    /// A schema is not an object schema.
    #[error("{which} schema must be a JSON Schema object with \"type\": \"object\", found {found}")]
    SchemaNotObject {
        /// `input` or `output`.
        which: &'static str,
        /// What it had instead.
        found: String,
    },
    /// A schema does not compile.
    #[error("{which} schema does not compile: {reason}")]
    SchemaInvalid {
        /// `input` or `output`.
        which: &'static str,
        /// The compiler's message.
        reason: String,
    },
    /// A time argument is not a property of the input schema.
    #[error(
        "time argument `{0}` is not a property of the input schema (time arguments must name input properties)"
    )]
    UnknownTimeArg(String),
}

/// Check a tool name against the naming rule and the reserved names.
pub fn check_name(name: &str) -> Result<(), CheckError> {
    if !is_identifier(name) {
        return Err(CheckError::BadName(name.to_string()));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(CheckError::ReservedName(name.to_string()));
    }
    Ok(())
}

/// Whether `name` has the shape of a tool name: 1 to [`MAX_NAME_CHARS`]
/// characters of A-Z, a-z, 0-9, `_` and `-` (prompts and their arguments
/// are named the same way).
pub fn is_identifier(name: &str) -> bool {
    let valid_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    !name.is_empty() && name.chars().count() <= MAX_NAME_CHARS && valid_chars
}

/// Check a description: present and not too long.
pub fn check_description(description: &str) -> Result<(), CheckError> {
    if description.trim().is_empty() {
        return Err(CheckError::MissingDescription);
    }
    check_text(description)
}

/// Check a text a tool shows people (a description, a title): at most
/// [`MAX_DESCRIPTION_CHARS`] characters, and no character that moves or
/// hides text when printed.
pub fn check_text(text: &str) -> Result<(), CheckError> {
    let chars = text.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(CheckError::LongDescription(chars));
    }
    // A carriage return is a line break only as the first half of CRLF;
    // alone it lets later text overwrite earlier text on a terminal.
    let mut chars = text.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        let crlf = c == '\r' && chars.peek().is_some_and(|&(_, next)| next == '\n');
        if !is_hidden_control(c) || crlf {
            continue;
        }
        return Err(CheckError::ControlCharacter {
            code: u32::from(c),
            at,
        });
    }
    Ok(())
}

/// What is wrong with a text a component offers (a title, a description),
/// as the end of a sentence that names it: "its title has …".
pub(crate) fn text_problem(text: &str) -> Option<String> {
    Some(match check_text(text).err()? {
        CheckError::LongDescription(chars) => {
            format!("has {chars} characters; at most {MAX_DESCRIPTION_CHARS} are allowed")
        }
        CheckError::ControlCharacter { code, at } => format!(
            "holds the control character U+{code:04X} at character {at}; only newlines and tabs \
             are allowed"
        ),
        other => other.to_string(),
    })
}

/// A character that moves or hides text when printed: C0 and C1 controls
/// (but newline and tab) and the bidirectional formatting characters.
pub fn is_hidden_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Parse a schema and check that it is an object schema that compiles.
pub fn check_object_schema(
    which: &'static str,
    text: &str,
) -> Result<(Value, jsonschema::Validator), CheckError> {
    let schema: Value = serde_json::from_str(text).map_err(|e| CheckError::SchemaNotJson {
        which,
        reason: e.to_string(),
    })?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => {
            return Err(CheckError::SchemaNotObject {
                which,
                found: match other {
                    None => "no \"type\"".to_string(),
                    Some(v) => format!("\"type\": {v}"),
                },
            });
        }
    }
    // Linear-time regexes: a tool's `pattern` must not be able to backtrack
    // the host into the ground while it validates an input.
    let validator = jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&schema)
        .map_err(|e| CheckError::SchemaInvalid {
            which,
            reason: e.to_string(),
        })?;
    Ok((schema, validator))
}

/// Check that every time argument is a property of the input schema.
pub fn check_time_args(input_schema: &Value, time_args: &[String]) -> Result<(), CheckError> {
    let properties = input_schema.get("properties").and_then(Value::as_object);
    for arg in time_args {
        if !properties.is_some_and(|p| p.contains_key(arg)) {
            return Err(CheckError::UnknownTimeArg(arg.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("fetch_url").is_ok());
        assert!(check_name("a-B_9").is_ok());
        assert!(check_name(&"x".repeat(64)).is_ok());
        assert_eq!(
            check_name(&"x".repeat(65)),
            Err(CheckError::BadName("x".repeat(65)))
        );
        assert!(matches!(check_name(""), Err(CheckError::BadName(_))));
        assert!(matches!(check_name("a.b"), Err(CheckError::BadName(_))));
        assert!(matches!(check_name("é"), Err(CheckError::BadName(_))));
        for reserved in RESERVED_NAMES {
            assert!(matches!(
                check_name(reserved),
                Err(CheckError::ReservedName(_))
            ));
        }
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            check_description("  \n"),
            Err(CheckError::MissingDescription)
        );
        assert!(check_description(&"d".repeat(4096)).is_ok());
        assert_eq!(
            check_description(&"d".repeat(4097)),
            Err(CheckError::LongDescription(4097))
        );
        assert!(check_description("Lists files.\n\tTabs and newlines are fine.\r\n").is_ok());
        for (text, code) in [
            ("Safe.\u{1b}[2K", 0x1b),
            ("Safe.\u{9b}", 0x9b),
            ("Reads \u{202E}etirw", 0x202e),
            ("a\u{2066}b", 0x2066),
            ("cr\r", 0x0d),
        ] {
            assert!(
                matches!(check_description(text), Err(CheckError::ControlCharacter { code: c, .. }) if c == code),
                "{text:?}"
            );
        }
    }

    #[test]
    fn schemas() {
        assert!(check_object_schema("input", r#"{"type":"object"}"#).is_ok());
        assert!(matches!(
            check_object_schema("input", r#"{"type":"array"}"#),
            Err(CheckError::SchemaNotObject { .. })
        ));
        assert!(matches!(
            check_object_schema("input", "{"),
            Err(CheckError::SchemaNotJson { .. })
        ));
        assert!(matches!(
            check_object_schema(
                "input",
                r#"{"type":"object","properties":{"a":{"type":"nope"}}}"#
            ),
            Err(CheckError::SchemaInvalid { .. })
        ));
    }

    #[test]
    fn time_args_must_be_properties() {
        let schema: Value = serde_json::json!({"type":"object","properties":{"since":{}}});
        assert!(check_time_args(&schema, &["since".into()]).is_ok());
        assert_eq!(
            check_time_args(&schema, &["until".into()]),
            Err(CheckError::UnknownTimeArg("until".into()))
        );
    }
}
