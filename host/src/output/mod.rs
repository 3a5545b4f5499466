//! A tool's result on the host side, and how it becomes an envelope's `result`.
//! `mcp` reads an MCP server's tool result into one; `messages` reads the
//! blocks clients post as a custom tool's result.

pub(crate) mod mcp;
pub mod messages;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::bindings::types;

/// What one content block costs the host besides its bytes: its slot on the
/// host and its framing in every surface's JSON. The output cap counts it.
pub const BLOCK_OVERHEAD_BYTES: usize = 64;
/// The most content blocks one result may have.
pub const MAX_CONTENT_BLOCKS: usize = 1000;
/// The most JSON values (object keys included) one result may hold, its
/// JSON blocks and structured result together: a parsed value costs the host
/// many times its text (an object is a map allocation of its own).
pub const MAX_JSON_VALUES: usize = 200_000;
/// The deepest a result's JSON may nest.
pub const MAX_JSON_DEPTH: usize = 64;

/// One block of a tool's result. The JSON form (binary data in base64) is
/// also what clients post back as a custom tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A JSON value.
    Json {
        /// The value.
        json: Value,
    },
    /// An image.
    Image {
        /// Its media type.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// The bytes, base64 in JSON.
        #[serde(serialize_with = "base64_bytes", deserialize_with = "from_base64")]
        data: Vec<u8>,
    },
    /// A document.
    Document {
        /// Its media type.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// The bytes, base64 in JSON.
        #[serde(serialize_with = "base64_bytes", deserialize_with = "from_base64")]
        data: Vec<u8>,
        /// Its name, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Where it lives, if it has an address.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// A search hit.
    SearchResult {
        /// Where it was found.
        source: String,
        /// Its title.
        title: String,
        /// The text.
        text: String,
    },
    /// Audio.
    Audio {
        /// Its media type, e.g. `audio/wav`.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// The bytes, base64 in JSON.
        #[serde(serialize_with = "base64_bytes", deserialize_with = "from_base64")]
        data: Vec<u8>,
    },
    /// A link to a resource, given instead of its bytes.
    ResourceLink {
        /// Where the resource is.
        uri: String,
        /// A short name for it.
        name: String,
        /// What it holds, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type, when known.
        #[serde(default, rename = "mediaType", skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// The blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The structured result (a JSON object), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Whether the tool reports failure.
    pub is_error: bool,
}

fn base64_bytes<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn from_base64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| serde::de::Error::custom(format!("`data` is not base64: {e}")))
}

impl ToolOutput {
    /// A result of one text block.
    pub fn text(text: impl Into<String>, is_error: bool) -> Self {
        Self {
            content: vec![ContentBlock::Text { text: text.into() }],
            structured: None,
            is_error,
        }
    }

    /// Convert the guest's output, checking that its JSON is JSON.
    pub(crate) fn from_guest(out: types::ToolOutput) -> Result<Self, String> {
        let content = out
            .content
            .into_iter()
            .map(|block| {
                Ok(match block {
                    types::ContentBlock::Text(text) => ContentBlock::Text { text },
                    types::ContentBlock::Json(text) => ContentBlock::Json {
                        json: serde_json::from_str(&text)
                            .map_err(|e| format!("returned a json block that is not JSON: {e}"))?,
                    },
                    types::ContentBlock::Image(blob) => ContentBlock::Image {
                        media_type: blob.media_type,
                        data: blob.data,
                    },
                    types::ContentBlock::Document(doc) => ContentBlock::Document {
                        media_type: doc.body.media_type,
                        data: doc.body.data,
                        name: doc.name,
                        uri: doc.uri,
                    },
                    types::ContentBlock::SearchResult(hit) => ContentBlock::SearchResult {
                        source: hit.source,
                        title: hit.title,
                        text: hit.text,
                    },
                    types::ContentBlock::Audio(blob) => ContentBlock::Audio {
                        media_type: blob.media_type,
                        data: blob.data,
                    },
                    types::ContentBlock::ResourceLink(link) => ContentBlock::ResourceLink {
                        uri: link.uri,
                        name: link.name,
                        description: link.description,
                        media_type: link.media_type,
                    },
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let structured = match out.structured {
            None => None,
            Some(text) => match serde_json::from_str::<Value>(&text) {
                Ok(value @ Value::Object(_)) => Some(value),
                Ok(_) => {
                    return Err("returned a structured result that is not a JSON object".into());
                }
                Err(e) => {
                    return Err(format!(
                        "returned a structured result that is not JSON: {e}"
                    ));
                }
            },
        };
        Ok(Self {
            content,
            structured,
            is_error: out.is_error,
        })
    }

    /// The size of a guest's output as it arrived, before any JSON in it is
    /// parsed: what the output cap is checked against.
    pub(crate) fn guest_size(out: &types::ToolOutput) -> usize {
        let blocks: usize = out
            .content
            .iter()
            .map(|block| match block {
                types::ContentBlock::Text(text) | types::ContentBlock::Json(text) => text.len(),
                types::ContentBlock::Image(blob) | types::ContentBlock::Audio(blob) => {
                    blob.data.len() + blob.media_type.len()
                }
                types::ContentBlock::Document(doc) => {
                    doc.body.data.len()
                        + doc.body.media_type.len()
                        + doc.name.as_ref().map_or(0, String::len)
                        + doc.uri.as_ref().map_or(0, String::len)
                }
                types::ContentBlock::SearchResult(hit) => {
                    hit.source.len() + hit.title.len() + hit.text.len()
                }
                types::ContentBlock::ResourceLink(link) => {
                    link.uri.len()
                        + link.name.len()
                        + link.description.as_ref().map_or(0, String::len)
                        + link.media_type.as_ref().map_or(0, String::len)
                }
            })
            .sum();
        blocks
            + out.content.len() * BLOCK_OVERHEAD_BYTES
            + out.structured.as_ref().map_or(0, String::len)
    }

    /// Check what parsing a guest's output would cost before it is parsed:
    /// the number of blocks, and the values and nesting of its JSON.
    pub(crate) fn check_guest_shape(out: &types::ToolOutput) -> Result<(), String> {
        if out.content.len() > MAX_CONTENT_BLOCKS {
            return Err(format!(
                "the result has {} content blocks; at most {MAX_CONTENT_BLOCKS} are allowed",
                out.content.len()
            ));
        }
        let texts = out
            .content
            .iter()
            .filter_map(|block| match block {
                types::ContentBlock::Json(text) => Some(text),
                _ => None,
            })
            .chain(&out.structured);
        let mut values = 0;
        for text in texts {
            let shape = JsonShape::of(text);
            if shape.depth > MAX_JSON_DEPTH {
                return Err(format!(
                    "the result's JSON nests {} levels deep; at most {MAX_JSON_DEPTH} are allowed",
                    shape.depth
                ));
            }
            values += shape.values;
        }
        if values > MAX_JSON_VALUES {
            return Err(format!(
                "the result's JSON holds {values} values and keys; at most {MAX_JSON_VALUES} \
                 are allowed"
            ));
        }
        Ok(())
    }

    /// The envelope's `result`: the text when there is only text, the
    /// structured JSON (or a lone JSON block) when there is one, else the
    /// whole `{content, isError}`.
    pub fn result_value(&self) -> Value {
        if let Some(structured) = &self.structured {
            return structured.clone();
        }
        let texts: Option<Vec<&str>> = self
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        match (texts, self.content.as_slice()) {
            (Some(texts), _) if !texts.is_empty() => Value::String(texts.join("\n")),
            (_, [ContentBlock::Json { json }]) => json.clone(),
            _ => json!({ "content": self.content, "isError": self.is_error }),
        }
    }
}

/// What kind of JSON value `value` is, in words for an error message
/// ("an array").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How many values (object keys included) a JSON text holds and how deep
/// it nests, counted from its bytes without parsing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct JsonShape {
    values: usize,
    depth: usize,
}

impl JsonShape {
    /// Scan `text`; malformed JSON gets some count, and parsing rejects it later.
    fn of(text: &str) -> Self {
        let (mut values, mut depth, mut deepest) = (0, 0usize, 0);
        let (mut in_string, mut escaped) = (false, false);
        // The last byte outside strings and whitespace: a scalar starts a
        // value only right after one of `[ , :` (or at the start).
        let mut last = b',';
        for &byte in text.as_bytes() {
            if in_string {
                match (escaped, byte) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' => continue,
                b'"' => {
                    in_string = true;
                    values += 1;
                }
                b'{' | b'[' => {
                    values += 1;
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b',' | b':' => {}
                _ if matches!(last, b'[' | b',' | b':') => values += 1,
                _ => {}
            }
            last = byte;
        }
        Self {
            values,
            depth: deepest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_prefers_text_then_structured_then_envelope() {
        assert_eq!(ToolOutput::text("hi", false).result_value(), json!("hi"));
        let structured = ToolOutput {
            content: vec![ContentBlock::Json {
                json: json!({"a": 1}),
            }],
            structured: Some(json!({"a": 1})),
            is_error: false,
        };
        assert_eq!(structured.result_value(), json!({"a": 1}));
        let lone_json = ToolOutput {
            content: vec![ContentBlock::Json {
                json: json!([1, 2]),
            }],
            ..Default::default()
        };
        assert_eq!(lone_json.result_value(), json!([1, 2]));
        let mixed = ToolOutput {
            content: vec![
                ContentBlock::Text { text: "t".into() },
                ContentBlock::Image {
                    media_type: "image/png".into(),
                    data: vec![1, 2, 3],
                },
            ],
            ..Default::default()
        };
        let value = mixed.result_value();
        assert_eq!(value["content"][1]["data"], json!("AQID"));
        assert_eq!(value["isError"], json!(false));
    }

    #[test]
    fn blocks_read_back_what_they_write() {
        let blocks = vec![
            ContentBlock::Text { text: "t".into() },
            ContentBlock::Image {
                media_type: "image/png".into(),
                data: vec![1, 2, 3],
            },
        ];
        let text = serde_json::to_string(&blocks).unwrap();
        let back: Vec<ContentBlock> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, blocks);
        let bad = serde_json::from_value::<ContentBlock>(
            json!({"type": "image", "mediaType": "image/png", "data": "%%"}),
        );
        assert!(bad.unwrap_err().to_string().contains("not base64"));
    }

    #[test]
    fn json_shape_counts_values_keys_and_depth_without_parsing() {
        let shape = |text: &str| {
            let s = JsonShape::of(text);
            (s.values, s.depth)
        };
        assert_eq!(shape("1"), (1, 0));
        assert_eq!(shape("[1, 2, true, null]"), (5, 1));
        assert_eq!(shape(r#"{"a": 1, "b": [-2.5e3, "x,[{"]}"#), (7, 2));
        assert_eq!(shape(r#"["\"]", "\\", {}]"#), (4, 2));
        assert_eq!(shape(&"[".repeat(100)), (100, 100));
    }

    #[test]
    fn tiny_json_objects_and_many_blocks_are_refused_before_parsing() {
        let tiny = format!("[{}]", vec![r#"{"a":1}"#; 100_000].join(","));
        let out = types::ToolOutput {
            content: vec![types::ContentBlock::Json(tiny)],
            structured: None,
            is_error: false,
        };
        let err = ToolOutput::check_guest_shape(&out).unwrap_err();
        assert!(err.contains("300001 values and keys"), "{err}");
        let out = types::ToolOutput {
            content: vec![types::ContentBlock::Text(String::new()); MAX_CONTENT_BLOCKS + 1],
            structured: None,
            is_error: false,
        };
        assert!(
            ToolOutput::check_guest_shape(&out)
                .unwrap_err()
                .contains("1001 content blocks")
        );
        assert_eq!(
            ToolOutput::guest_size(&out),
            (MAX_CONTENT_BLOCKS + 1) * BLOCK_OVERHEAD_BYTES
        );
        let deep = types::ToolOutput {
            content: vec![],
            structured: Some(format!(
                "{}{}",
                "{\"a\":".repeat(70),
                "1".to_string() + &"}".repeat(70)
            )),
            is_error: false,
        };
        assert!(
            ToolOutput::check_guest_shape(&deep)
                .unwrap_err()
                .contains("70 levels")
        );
    }

    #[test]
    fn guest_json_must_be_json() {
        let out = types::ToolOutput {
            content: vec![types::ContentBlock::Json("{".into())],
            structured: None,
            is_error: false,
        };
        assert!(ToolOutput::from_guest(out).is_err());
        let out = types::ToolOutput {
            content: vec![],
            structured: Some("[1]".into()),
            is_error: false,
        };
        assert!(
            ToolOutput::from_guest(out)
                .unwrap_err()
                .contains("not a JSON object")
        );
    }
}
