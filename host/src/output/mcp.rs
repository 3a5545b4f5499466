//! An MCP server's tool result as a toolhost [`ToolOutput`].
//!
//! Each block is read from its JSON form, so a block type this host does
//! not know is reported by name rather than dropped.

use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::Value;

use super::{ContentBlock, MAX_CONTENT_BLOCKS, ToolOutput, json_kind};

/// `result` as a [`ToolOutput`], or what is wrong with it.
pub(crate) fn tool_output(result: CallToolResult) -> Result<ToolOutput, String> {
    if result.content.len() > MAX_CONTENT_BLOCKS {
        return Err(format!(
            "the result has {} content blocks; at most {MAX_CONTENT_BLOCKS} are allowed",
            result.content.len()
        ));
    }
    let content = result
        .content
        .iter()
        .enumerate()
        .map(|(index, block)| {
            let json = serde_json::to_value(block).map_err(|e| e.to_string())?;
            content_block(json).map_err(|problem| format!("content block {index}: {problem}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let structured = match result.structured_content {
        None | Some(Value::Null) => None,
        Some(value @ Value::Object(_)) => Some(value),
        Some(other) => {
            return Err(format!(
                "`structuredContent` is {}, not a JSON object",
                json_kind(&other)
            ));
        }
    };
    Ok(ToolOutput {
        content,
        structured,
        is_error: result.is_error.unwrap_or(false),
    })
}

/// One block from its MCP JSON form.
fn content_block(json: Value) -> Result<ContentBlock, String> {
    let field = |name: &str| -> Result<String, String> {
        json.get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("`{name}` is missing or not a string"))
    };
    let optional = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_string);
    let kind = json.get("type").and_then(Value::as_str).unwrap_or_default();
    Ok(match kind {
        "text" => ContentBlock::Text {
            text: field("text")?,
        },
        "image" => ContentBlock::Image {
            media_type: field("mimeType")?,
            data: decode(&field("data")?)?,
        },
        "audio" => ContentBlock::Audio {
            media_type: field("mimeType")?,
            data: decode(&field("data")?)?,
        },
        "resource" => {
            let resource = json
                .get("resource")
                .ok_or("a `resource` block has no `resource`")?;
            let text = resource.get("text").and_then(Value::as_str);
            let blob = resource.get("blob").and_then(Value::as_str);
            let data = match (text, blob) {
                (Some(text), _) => text.as_bytes().to_vec(),
                (None, Some(blob)) => decode(blob)?,
                (None, None) => {
                    return Err("an embedded resource has neither `text` nor `blob`".into());
                }
            };
            let media_type = resource
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or(if text.is_some() {
                    "text/plain"
                } else {
                    "application/octet-stream"
                })
                .to_string();
            ContentBlock::Document {
                media_type,
                data,
                name: None,
                uri: resource
                    .get("uri")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }
        }
        "resource_link" => ContentBlock::ResourceLink {
            uri: field("uri")?,
            name: field("name")?,
            description: optional("description"),
            media_type: optional("mimeType"),
        },
        other => {
            return Err(format!(
                "the block type {other:?} is not one toolhost knows"
            ));
        }
    })
}

/// Base64 `data` of a block, decoded.
pub(super) fn decode(data: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("`data` is not base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock as McpBlock;

    #[test]
    fn blocks_keep_their_kind_and_bytes() {
        let mut result = CallToolResult::success(vec![
            McpBlock::text("hi"),
            McpBlock::image("AAEC", "image/png"),
        ]);
        result.structured_content = Some(serde_json::json!({ "n": 1 }));
        let output = tool_output(result).unwrap();
        assert_eq!(output.content[0], ContentBlock::Text { text: "hi".into() });
        assert_eq!(
            output.content[1],
            ContentBlock::Image {
                media_type: "image/png".into(),
                data: vec![0, 1, 2]
            }
        );
        assert_eq!(output.structured, Some(serde_json::json!({ "n": 1 })));
        assert!(!output.is_error);
        let failed = tool_output(CallToolResult::error(vec![McpBlock::text("no")])).unwrap();
        assert!(failed.is_error);
    }

    #[test]
    fn bad_blocks_are_named() {
        let err = tool_output(CallToolResult::success(vec![McpBlock::image(
            "%%",
            "image/png",
        )]))
        .unwrap_err();
        assert!(
            err.contains("content block 0") && err.contains("base64"),
            "{err}"
        );
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(serde_json::json!([1]));
        assert!(tool_output(result).unwrap_err().contains("an array"));
    }
}
