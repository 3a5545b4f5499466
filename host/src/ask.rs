//! Questions a running call asks the person using the client (elicitation),
//! the client's model (sampling) or the client (its roots) through
//! `toolhost:tool/ask`, the
//! [`Asker`] a surface passes in to answer them, and the check of an
//! elicitation's form against MCP 2025-11-25's flat schema.

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::prompts::Role;

/// The most properties an elicitation's form may have.
pub const MAX_FORM_PROPERTIES: usize = 64;
/// The largest form, in bytes of JSON.
pub const MAX_FORM_BYTES: usize = 64 * 1024;
/// The most messages one sampling request may hold.
pub const MAX_SAMPLING_MESSAGES: usize = 64;

/// A question for the person using the client.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Elicitation {
    /// The tool asking.
    pub tool: String,
    /// The call asking.
    pub call_id: String,
    /// What to ask.
    pub message: String,
    /// The form: a flat object schema, checked by [`check_form`].
    pub requested_schema: Map<String, Value>,
}

/// What the person did with an [`Elicitation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum ElicitAnswer {
    /// Filled the form in.
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed the question.
    Cancel,
}

/// A conversation for the client's model to continue.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    /// The tool asking.
    pub tool: String,
    /// The call asking.
    pub call_id: String,
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// How to sample.
    pub options: SamplingOptions,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What it says.
    pub content: SamplingContent,
}

/// What a message says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its media type.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// Its bytes.
        #[serde(serialize_with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// Audio.
    Audio {
        /// Its media type.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// Its bytes.
        #[serde(serialize_with = "base64_bytes")]
        data: Vec<u8>,
    },
}

impl SamplingContent {
    /// Its size in bytes, as counted against a limit.
    pub fn size(&self) -> usize {
        match self {
            Self::Text { text } => text.len(),
            Self::Image { media_type, data } | Self::Audio { media_type, data } => {
                media_type.len() + data.len()
            }
        }
    }
}

fn base64_bytes<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    use base64::Engine as _;
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// How to sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingOptions {
    /// A system prompt the client may use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// The sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that end the sample.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Which model to pick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
}

/// Which model the client should pick.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model names or families, best first.
    pub hints: Vec<String>,
    /// How much low cost matters, from 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// What the client's model said.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingResult {
    /// Who says it.
    pub role: Role,
    /// What it says.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why it stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// A folder or file the user works in, as the client names it (MCP
/// `roots/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    /// Where it is: a `file://` URI as a rule.
    pub uri: String,
    /// A name for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A call's request for the client's roots.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsRequest {
    /// The tool asking.
    pub tool: String,
    /// The call asking.
    pub call_id: String,
}

/// One of several questions a call asks at once (`ask-all`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    /// For the person using the client.
    Elicitation(Elicitation),
    /// For the client's model.
    Sampling(Sampling),
    /// For the client's roots.
    Roots(RootsRequest),
}

/// A question and the key the tool named it by: unique among those asked
/// together, checked by [`check_key`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyedQuestion {
    /// Its name.
    pub key: String,
    /// What is asked.
    pub question: Question,
}

/// The answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// The person's.
    Elicitation(ElicitAnswer),
    /// The model's.
    Sampling(SamplingResult),
    /// The client's roots.
    Roots(Vec<Root>),
}

/// The longest key a question may have.
pub const MAX_KEY_LEN: usize = 64;

/// Check a question's key: 1 to [`MAX_KEY_LEN`] characters of A-Z, a-z,
/// 0-9, `_`, `-` and `.`.
pub fn check_key(key: &str) -> Result<(), String> {
    let fits = (1..=MAX_KEY_LEN).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    match fits {
        true => Ok(()),
        false => Err(format!(
            "the key {:?} is not 1-{MAX_KEY_LEN} characters of A-Z, a-z, 0-9, `_`, `-` and `.`",
            key.chars().take(MAX_KEY_LEN + 1).collect::<String>()
        )),
    }
}

/// Why a question got no answer from the surface.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// The surface has no one to ask, or the client cannot be asked this.
    #[error("{0}")]
    Unavailable(String),
    /// The client was asked and failed.
    #[error("the client failed to answer: {0}")]
    Failed(String),
}

/// Answers a running call's questions: each surface passes its own (MCP
/// asks its client; the HTTP API's application answers events). Answers
/// are checked by the host after.
pub trait Asker: Send + Sync {
    /// Ask the person using the client.
    fn elicit<'a>(
        &'a self,
        question: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitAnswer, AskError>>;

    /// Ask the client's model.
    fn sample<'a>(
        &'a self,
        question: &'a Sampling,
    ) -> BoxFuture<'a, Result<SamplingResult, AskError>>;

    /// Ask the client for its roots. A surface without a client that has
    /// roots refuses.
    fn roots<'a>(&'a self, _: &'a RootsRequest) -> BoxFuture<'a, Result<Vec<Root>, AskError>> {
        Box::pin(std::future::ready(Err(AskError::Unavailable(
            "this surface has no client whose roots could be listed (MCP clients that \
             declare roots have)"
                .into(),
        ))))
    }

    /// Ask several questions at once, answered in the order asked. A
    /// surface that can put them to its client together does; by default
    /// they are asked one after another.
    fn ask_all<'a>(
        &'a self,
        questions: &'a [KeyedQuestion],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        Box::pin(one_by_one(self, questions))
    }
}

/// Ask `questions` of `asker` one after another: [`Asker::ask_all`] for a
/// surface that cannot ask them together.
pub async fn one_by_one<A: Asker + ?Sized>(
    asker: &A,
    questions: &[KeyedQuestion],
) -> Result<Vec<Answer>, AskError> {
    let mut answers = Vec::with_capacity(questions.len());
    for keyed in questions {
        answers.push(match &keyed.question {
            Question::Elicitation(q) => Answer::Elicitation(asker.elicit(q).await?),
            Question::Sampling(q) => Answer::Sampling(asker.sample(q).await?),
            Question::Roots(q) => Answer::Roots(asker.roots(q).await?),
        });
    }
    Ok(answers)
}

/// No one to ask: the surface says why (the CLI, the library by default).
pub struct NoAsker(
    /// Why no one can be asked.
    pub &'static str,
);

impl Asker for NoAsker {
    fn elicit<'a>(&'a self, _: &'a Elicitation) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(std::future::ready(Err(AskError::Unavailable(
            self.0.into(),
        ))))
    }

    fn sample<'a>(&'a self, _: &'a Sampling) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(std::future::ready(Err(AskError::Unavailable(
            self.0.into(),
        ))))
    }
}

/// Check an elicitation's form (JSON text) against MCP 2025-11-25's flat
/// schema: an object whose properties are primitives or choices (SEP-1034
/// defaults, SEP-1330 enums). The error names the property and what was
/// expected.
pub fn check_form(text: &str) -> Result<Map<String, Value>, String> {
    if text.len() > MAX_FORM_BYTES {
        return Err(format!(
            "the form is {} bytes; at most {MAX_FORM_BYTES} are allowed",
            text.len()
        ));
    }
    let Value::Object(form) =
        serde_json::from_str(text).map_err(|e| format!("the form is not JSON: {e}"))?
    else {
        return Err("the form must be a JSON object schema".into());
    };
    known_keys(
        "the form",
        &form,
        &[
            "type",
            "properties",
            "required",
            "title",
            "description",
            "$schema",
        ],
    )?;
    if form.get("type") != Some(&Value::String("object".into())) {
        return Err("the form must have \"type\": \"object\"".into());
    }
    let Some(Value::Object(properties)) = form.get("properties") else {
        return Err("the form must have `properties`, an object".into());
    };
    if properties.len() > MAX_FORM_PROPERTIES {
        return Err(format!(
            "the form has {} properties; at most {MAX_FORM_PROPERTIES} are allowed",
            properties.len()
        ));
    }
    for (name, property) in properties {
        check_property(property).map_err(|e| format!("property `{name}`: {e}"))?;
    }
    if let Some(required) = form.get("required") {
        let names = required
            .as_array()
            .filter(|names| names.iter().all(Value::is_string))
            .ok_or("`required` must be an array of property names")?;
        if let Some(missing) = names
            .iter()
            .filter_map(Value::as_str)
            .find(|name| !properties.contains_key(*name))
        {
            return Err(format!(
                "`required` names `{missing}`, which is not a property"
            ));
        }
    }
    Ok(form)
}

fn known_keys(what: &str, object: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(format!(
            "{what} has `{key}`, which a flat form does not take (it takes {})",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

const ABOUT: [&str; 3] = ["type", "title", "description"];

fn check_property(property: &Value) -> Result<(), String> {
    let Value::Object(property) = property else {
        return Err("must be an object schema".into());
    };
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .ok_or("must have a `type`: string, number, integer, boolean or array")?;
    let text = |key: &str| match property.get(key) {
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(format!("`{key}` must be a string")),
    };
    text("title")?;
    text("description")?;
    let default_is = |fits: &dyn Fn(&Value) -> bool, expected: &str| match property.get("default") {
        Some(value) if !fits(value) => Err(format!("its `default` must be {expected}")),
        _ => Ok(()),
    };
    let count = |key: &str| match property.get(key) {
        None => Ok(()),
        Some(value) if value.as_u64().is_some() => Ok(()),
        Some(_) => Err(format!("`{key}` must be a whole number of at least 0")),
    };
    match kind {
        "string" => {
            let keys = [
                &ABOUT[..],
                &[
                    "minLength",
                    "maxLength",
                    "format",
                    "default",
                    "enum",
                    "enumNames",
                    "oneOf",
                ],
            ]
            .concat();
            known_keys("it", property, &keys)?;
            count("minLength")?;
            count("maxLength")?;
            if let Some(format) = property.get("format") {
                let known = ["email", "uri", "date", "date-time"];
                if !format.as_str().is_some_and(|f| known.contains(&f)) {
                    return Err(format!("`format` must be one of {}", known.join(", ")));
                }
            }
            let choices = choices(property, "enum", "oneOf")?;
            if let Some(names) = property.get("enumNames") {
                let n = property.get("enum").and_then(Value::as_array).map(Vec::len);
                let fits = names.as_array().is_some_and(|names| {
                    names.iter().all(Value::is_string) && Some(names.len()) == n
                });
                if !fits {
                    return Err("`enumNames` must be strings, one for each of `enum`".into());
                }
            }
            default_is(
                &|v| {
                    v.as_str()
                        .is_some_and(|v| choices.as_ref().is_none_or(|c| c.iter().any(|c| c == v)))
                },
                "a string (one of the choices, when there are some)",
            )
        }
        "number" | "integer" => {
            known_keys(
                "it",
                property,
                &[&ABOUT[..], &["minimum", "maximum", "default"]].concat(),
            )?;
            for key in ["minimum", "maximum"] {
                if property.get(key).is_some_and(|v| !v.is_number()) {
                    return Err(format!("`{key}` must be a number"));
                }
            }
            if kind == "integer" {
                default_is(&|v| v.is_i64() || v.is_u64(), "an integer")
            } else {
                default_is(&Value::is_number, "a number")
            }
        }
        "boolean" => {
            known_keys("it", property, &[&ABOUT[..], &["default"]].concat())?;
            default_is(&Value::is_boolean, "true or false")
        }
        "array" => {
            known_keys(
                "it",
                property,
                &[&ABOUT[..], &["items", "minItems", "maxItems", "default"]].concat(),
            )?;
            count("minItems")?;
            count("maxItems")?;
            let Some(Value::Object(items)) = property.get("items") else {
                return Err(
                    "an array must have `items` with its choices (`enum` or `anyOf`)".into(),
                );
            };
            known_keys("its `items`", items, &["type", "enum", "anyOf"])?;
            if items.get("type").is_some_and(|t| t != "string") {
                return Err("its `items` must be of type string".into());
            }
            let choices = choices(items, "enum", "anyOf")?
                .ok_or("its `items` must list the choices, in `enum` or `anyOf`")?;
            let choices: std::collections::HashSet<&str> =
                choices.iter().map(String::as_str).collect();
            default_is(
                &|v| {
                    v.as_array().is_some_and(|picked| {
                        picked
                            .iter()
                            .all(|p| p.as_str().is_some_and(|p| choices.contains(p)))
                    })
                },
                "an array of the choices",
            )
        }
        other => Err(format!(
            "type `{other}` is not one a flat form takes: string, number, integer, boolean or \
             array"
        )),
    }
}

/// The choices a property offers: `plain` (an array of strings) or
/// `titled` (an array of `{ "const": …, "title": … }`), not both.
fn choices(
    schema: &Map<String, Value>,
    plain: &str,
    titled: &str,
) -> Result<Option<Vec<String>>, String> {
    match (schema.get(plain), schema.get(titled)) {
        (Some(_), Some(_)) => Err(format!(
            "give the choices in `{plain}` or `{titled}`, not both"
        )),
        (Some(values), None) => values
            .as_array()
            .filter(|v| !v.is_empty())
            .and_then(|v| v.iter().map(|c| c.as_str().map(str::to_string)).collect())
            .map(Some)
            .ok_or(format!("`{plain}` must be a non-empty array of strings")),
        (None, Some(options)) => options
            .as_array()
            .filter(|v| !v.is_empty())
            .and_then(|options| {
                options
                    .iter()
                    .map(|option| {
                        let option = option.as_object()?;
                        let fits = option.keys().all(|k| k == "const" || k == "title")
                            && option.get("title").is_none_or(Value::is_string);
                        fits.then(|| option.get("const")?.as_str().map(str::to_string))?
                    })
                    .collect()
            })
            .map(Some)
            .ok_or(format!(
                "`{titled}` must be a non-empty array of {{\"const\": string, \"title\": string}}"
            )),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(form: Value) -> Result<Map<String, Value>, String> {
        check_form(&form.to_string())
    }

    #[test]
    fn the_conformance_forms_are_flat() {
        check(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
            },
            "required": ["name"],
        }))
        .unwrap();
        check(json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["One", "Two"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First"}]}},
            },
        }))
        .unwrap();
    }

    #[test]
    fn nested_and_mistyped_forms_name_the_property() {
        let err = |form| check(form).unwrap_err();
        let object = |property: Value| json!({"type": "object", "properties": {"p": property}});
        assert!(err(json!([])).contains("JSON object schema"));
        assert!(err(json!({"type": "array"})).contains("\"type\": \"object\""));
        assert!(
            err(object(json!({"type": "object", "properties": {}})))
                .contains("property `p`: type `object` is not one a flat form takes")
        );
        assert!(err(object(json!({"type": "string", "pattern": "x"}))).contains("`pattern`"));
        assert!(err(object(json!({"type": "integer", "default": 1.5}))).contains("an integer"));
        assert!(
            err(object(
                json!({"type": "string", "enum": ["a"], "default": "b"})
            ))
            .contains("one of the choices")
        );
        assert!(
            err(object(
                json!({"type": "string", "enum": ["a"], "enumNames": ["A", "B"]})
            ))
            .contains("one for each")
        );
        assert!(
            err(object(
                json!({"type": "array", "items": {"type": "string"}})
            ))
            .contains("list the choices")
        );
        assert!(err(object(json!({"type": "string", "format": "ipv4"}))).contains("`format`"));
        assert!(
            err(json!({"type": "object", "properties": {}, "required": ["x"]}))
                .contains("`x`, which is not a property")
        );
        let many: Map<String, Value> = (0..=MAX_FORM_PROPERTIES)
            .map(|i| (format!("p{i}"), json!({"type": "boolean"})))
            .collect();
        assert!(err(json!({"type": "object", "properties": many})).contains("at most 64"));
    }
}
