//! What a tool returns: content blocks, an optional structured object and an
//! error flag.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::ToolError;
use crate::bindings::toolhost::tool::types as wit;

/// One block of a tool's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// A JSON value.
    Json(Value),
    /// An image.
    Image {
        /// The IANA media type, e.g. `image/png`.
        media_type: String,
        /// The raw bytes.
        data: Vec<u8>,
    },
    /// A document such as a PDF.
    Document {
        /// The IANA media type, e.g. `application/pdf`.
        media_type: String,
        /// The raw bytes.
        data: Vec<u8>,
        /// A file name or title, when there is one.
        name: Option<String>,
        /// Where it lives, when it has an address (MCP clients get it as
        /// the embedded resource's URI).
        uri: Option<String>,
    },
    /// A search hit.
    SearchResult {
        /// Where the text was found (a URL or a path).
        source: String,
        /// The hit's title.
        title: String,
        /// The matching text.
        text: String,
    },
    /// Audio.
    Audio {
        /// The IANA media type, e.g. `audio/wav`.
        media_type: String,
        /// The raw bytes.
        data: Vec<u8>,
    },
    /// A link to a resource the client can fetch or read, instead of its bytes.
    ResourceLink {
        /// Where the resource is.
        uri: String,
        /// A short name for it.
        name: String,
        /// What it holds, for the model.
        description: Option<String>,
        /// Its IANA media type, when known.
        media_type: Option<String>,
    },
}

/// A tool's result.
///
/// Most tools return it through a conversion: a `String` or `&str` becomes one
/// text block; a [`serde_json::Value`] becomes a JSON block, and when it is an
/// object it is also the structured result. The builder methods compose
/// anything else:
///
/// ```
/// use toolhost_sdk::Output;
/// let out = Output::text("Found 2 hits.")
///     .with_search_result("docs/a.md", "A", "first hit")
///     .with_search_result("docs/b.md", "B", "second hit");
/// assert_eq!(out.content.len(), 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// The result's blocks, in order.
    pub content: Vec<Content>,
    /// The structured result (MCP `structuredContent`), when there is one.
    pub structured: Option<Map<String, Value>>,
    /// The tool ran but reports failure; the model still sees the content.
    pub is_error: bool,
}

impl Output {
    /// An empty result: no blocks, no structured value, not an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().with_text(text)
    }

    /// A result of one JSON value; see the `From<Value>` conversion.
    pub fn json(value: Value) -> Self {
        Self::from(value)
    }

    /// Serializes `value` and converts it like [`Output::json`]: a struct
    /// becomes the structured result plus a JSON block.
    pub fn serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_value(value)
            .map(Self::from)
            .map_err(|err| ToolError::failed(format!("cannot serialize the result: {err}")))
    }

    /// A result of one text block that reports failure (`is_error`).
    pub fn error_text(text: impl Into<String>) -> Self {
        Self::text(text).with_is_error(true)
    }

    /// Appends a text block.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(Content::Text(text.into()));
        self
    }

    /// Appends a JSON block (the structured result is left alone).
    pub fn with_json(mut self, value: Value) -> Self {
        self.content.push(Content::Json(value));
        self
    }

    /// Appends an image block.
    pub fn with_image(mut self, media_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        self.content.push(Content::Image {
            media_type: media_type.into(),
            data: data.into(),
        });
        self
    }

    /// Appends a document block.
    pub fn with_document(
        mut self,
        media_type: impl Into<String>,
        data: impl Into<Vec<u8>>,
        name: Option<String>,
    ) -> Self {
        self.content.push(Content::Document {
            media_type: media_type.into(),
            data: data.into(),
            name,
            uri: None,
        });
        self
    }

    /// Appends an audio block.
    pub fn with_audio(mut self, media_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        self.content.push(Content::Audio {
            media_type: media_type.into(),
            data: data.into(),
        });
        self
    }

    /// Appends a link to a resource (`description` and `media_type` may be
    /// set on the block afterwards).
    pub fn with_resource_link(mut self, uri: impl Into<String>, name: impl Into<String>) -> Self {
        self.content.push(Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            media_type: None,
        });
        self
    }

    /// Appends a search-result block.
    pub fn with_search_result(
        mut self,
        source: impl Into<String>,
        title: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.content.push(Content::SearchResult {
            source: source.into(),
            title: title.into(),
            text: text.into(),
        });
        self
    }

    /// Sets the structured result (a JSON object).
    pub fn with_structured(mut self, structured: Map<String, Value>) -> Self {
        self.structured = Some(structured);
        self
    }

    /// Sets whether the result reports failure.
    pub fn with_is_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Converts to the contract's type.
    pub(crate) fn into_wit(self) -> wit::ToolOutput {
        wit::ToolOutput {
            content: self.content.into_iter().map(Content::into_wit).collect(),
            structured: self.structured.map(|map| Value::Object(map).to_string()),
            is_error: self.is_error,
        }
    }
}

impl Content {
    pub(crate) fn into_wit(self) -> wit::ContentBlock {
        match self {
            Content::Text(text) => wit::ContentBlock::Text(text),
            Content::Json(value) => wit::ContentBlock::Json(value.to_string()),
            Content::Image { media_type, data } => {
                wit::ContentBlock::Image(wit::Blob { media_type, data })
            }
            Content::Document {
                media_type,
                data,
                name,
                uri,
            } => wit::ContentBlock::Document(wit::Document {
                body: wit::Blob { media_type, data },
                name,
                uri,
            }),
            Content::SearchResult {
                source,
                title,
                text,
            } => wit::ContentBlock::SearchResult(wit::SearchResult {
                source,
                title,
                text,
            }),
            Content::Audio { media_type, data } => {
                wit::ContentBlock::Audio(wit::Blob { media_type, data })
            }
            Content::ResourceLink {
                uri,
                name,
                description,
                media_type,
            } => wit::ContentBlock::ResourceLink(wit::ResourceLink {
                uri,
                name,
                description,
                media_type,
            }),
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_string())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<String> for Output {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Output {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

impl From<Value> for Output {
    /// An object becomes the structured result and a JSON block; any other
    /// value a JSON block only.
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self {
                content: vec![Content::Json(Value::Object(map.clone()))],
                structured: Some(map),
                is_error: false,
            },
            other => Self::new().with_json(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_become_one_text_block() {
        let expected = Output {
            content: vec![Content::Text("hi".into())],
            structured: None,
            is_error: false,
        };
        assert_eq!(Output::from("hi"), expected);
        assert_eq!(Output::from(String::from("hi")), expected);
    }

    #[test]
    fn objects_are_structured_and_json() {
        let out = Output::from(json!({"a": 1}));
        assert_eq!(out.content, vec![Content::Json(json!({"a": 1}))]);
        assert_eq!(out.structured, json!({"a": 1}).as_object().cloned());
        let wit = out.into_wit();
        assert_eq!(wit.structured.as_deref(), Some(r#"{"a":1}"#));
        assert!(matches!(&wit.content[..], [wit::ContentBlock::Json(s)] if s == r#"{"a":1}"#));
    }

    #[test]
    fn other_values_are_json_only() {
        for value in [json!([1, 2]), json!("s"), json!(3), json!(null)] {
            let out = Output::from(value.clone());
            assert_eq!(out.content, vec![Content::Json(value)]);
            assert_eq!(out.structured, None);
        }
    }

    #[test]
    fn serialize_structs() {
        #[derive(Serialize)]
        struct Hit {
            path: &'static str,
            line: u32,
        }
        let out = Output::serialize(&Hit { path: "a", line: 2 }).expect("serializes");
        assert_eq!(
            out.structured,
            json!({"path": "a", "line": 2}).as_object().cloned()
        );
    }

    #[test]
    fn builders_keep_order_and_flags() {
        let out = Output::text("t")
            .with_json(json!([1]))
            .with_image("image/png", vec![1, 2])
            .with_document("application/pdf", b"%PDF".to_vec(), Some("a.pdf".into()))
            .with_search_result("s", "t", "x")
            .with_is_error(true);
        let wit = out.into_wit();
        assert!(wit.is_error);
        assert!(wit.structured.is_none());
        assert!(matches!(
            &wit.content[..],
            [
                wit::ContentBlock::Text(_),
                wit::ContentBlock::Json(_),
                wit::ContentBlock::Image(wit::Blob { .. }),
                wit::ContentBlock::Document(wit::Document { name: Some(_), .. }),
                wit::ContentBlock::SearchResult(_),
            ]
        ));
        assert!(Output::error_text("no").is_error);
    }
}
