//! The answers a client posts to a call's questions
//! (`toolhost:tool/ask`): `user.elicitation_result` and
//! `user.sampling_result`, checked and turned into the host's terms.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Map, Value};

use toolhost::ask::{ElicitAnswer, SamplingContent};
use toolhost::prompts::Role;

/// A `user.elicitation_result`: what the user did with an
/// `agent.elicitation`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ElicitationResult {
    #[serde(rename = "type")]
    _kind: String,
    /// The call that asked.
    call_id: String,
    /// `accept`, `decline` or `cancel`.
    action: String,
    /// The filled-in form, with `accept`.
    #[serde(default)]
    content: Option<Map<String, Value>>,
}

impl ElicitationResult {
    /// The call and its answer.
    pub(super) fn answer(self) -> Result<(String, ElicitAnswer), String> {
        let answer = match (self.action.as_str(), self.content) {
            ("accept", Some(content)) => ElicitAnswer::Accept(content),
            ("accept", None) => {
                return Err("`action` \"accept\" needs `content`, the filled-in form".into());
            }
            ("decline", None) => ElicitAnswer::Decline,
            ("cancel", None) => ElicitAnswer::Cancel,
            ("decline" | "cancel", Some(_)) => {
                return Err(format!("`action` {:?} takes no `content`", self.action));
            }
            (other, _) => {
                return Err(format!(
                    "`action` is {other:?}; expected \"accept\", \"decline\" or \"cancel\""
                ));
            }
        };
        Ok((self.call_id, answer))
    }
}

/// A `user.sampling_result`: what the model said to an `agent.sampling`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SamplingResult {
    #[serde(rename = "type")]
    _kind: String,
    /// The call that asked.
    call_id: String,
    /// `assistant` (the default) or `user`.
    #[serde(default)]
    role: Option<String>,
    /// `{"type": "text", "text": …}`, or `{"type": "image" | "audio",
    /// "mediaType": …, "data": <base64>}`.
    content: Value,
    /// The model that answered.
    model: String,
    /// Why it stopped.
    #[serde(default)]
    stop_reason: Option<String>,
}

impl SamplingResult {
    /// The call and the model's answer.
    pub(super) fn answer(self) -> Result<(String, toolhost::ask::SamplingResult), String> {
        let role = match self.role.as_deref() {
            None | Some("assistant") => Role::Assistant,
            Some("user") => Role::User,
            Some(other) => {
                return Err(format!(
                    "`role` is {other:?}; expected \"assistant\" or \"user\""
                ));
            }
        };
        let content = sampled(&self.content)?;
        Ok((
            self.call_id,
            toolhost::ask::SamplingResult {
                role,
                content,
                model: self.model,
                stop_reason: self.stop_reason,
            },
        ))
    }
}

/// A sampled content block.
fn sampled(content: &Value) -> Result<SamplingContent, String> {
    let text = |key: &str| {
        content
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("`content.{key}` must be a string"))
    };
    let bytes = || {
        base64::engine::general_purpose::STANDARD
            .decode(text("data")?)
            .map_err(|e| format!("`content.data` is not base64: {e}"))
    };
    match content.get("type").and_then(Value::as_str) {
        Some("text") => Ok(SamplingContent::Text {
            text: text("text")?.to_string(),
        }),
        Some("image") => Ok(SamplingContent::Image {
            media_type: text("mediaType")?.to_string(),
            data: bytes()?,
        }),
        Some("audio") => Ok(SamplingContent::Audio {
            media_type: text("mediaType")?.to_string(),
            data: bytes()?,
        }),
        _ => Err("`content.type` must be \"text\", \"image\" or \"audio\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_name_what_is_wrong() {
        let elicited = |v: Value| {
            serde_json::from_value::<ElicitationResult>(v)
                .map_err(|e| e.to_string())
                .and_then(ElicitationResult::answer)
        };
        let base = |action: &str| json!({"type": "user.elicitation_result", "call_id": "c", "action": action});
        assert_eq!(elicited(base("decline")).unwrap().1, ElicitAnswer::Decline);
        assert!(
            elicited(base("accept"))
                .unwrap_err()
                .contains("needs `content`")
        );
        assert!(elicited(base("maybe")).unwrap_err().contains("\"maybe\""));

        let sampled = |content: Value| {
            serde_json::from_value::<SamplingResult>(json!({
                "type": "user.sampling_result", "call_id": "c", "model": "m", "content": content,
            }))
            .map_err(|e| e.to_string())
            .and_then(SamplingResult::answer)
        };
        let (_, ok) =
            sampled(json!({"type": "image", "mediaType": "image/png", "data": "AP8="})).unwrap();
        assert_eq!(
            ok.content,
            SamplingContent::Image {
                media_type: "image/png".into(),
                data: vec![0, 255]
            }
        );
        assert!(
            sampled(json!({"type": "image", "mediaType": "image/png", "data": "%"}))
                .unwrap_err()
                .contains("base64")
        );
        assert!(
            sampled(json!({"type": "video"}))
                .unwrap_err()
                .contains("content.type")
        );
    }
}
