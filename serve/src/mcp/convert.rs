//! toolhost's tools and results in MCP's terms.

use base64::Engine as _;
use rmcp::model::{
    CallToolResult, ContentBlock as McpBlock, ErrorData, GetPromptResult, JsonObject, MetaObject,
    Prompt as McpPrompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    Role as McpRole, Tool as McpTool, ToolAnnotations,
};
use serde_json::{Value, json};

use toolhost::InputError;
use toolhost::call::CallResult;
use toolhost::output::ContentBlock;
use toolhost::prompts::{PromptError, PromptResult, PromptSpec, Role};
use toolhost::registry::Tool;
use toolhost::tool::{Effect, EffectDecl};

/// A tool as `tools/list` advertises it: its schemas, and hints derived from
/// its effect (a by-input effect is advertised as destructive) and from
/// whether it may reach the network (an MCP server's tool may: the host
/// cannot tell).
pub fn tool(tool: &Tool) -> McpTool {
    let meta = tool.metadata();
    let open_world = !tool.policy().grants.http.is_empty() || tool.upstream().is_some();
    let mut mcp = McpTool::new(
        tool.name().to_string(),
        meta.description.clone(),
        object(&meta.input_schema),
    )
    .with_annotations(annotations(meta.effect, open_world));
    if let Some(output) = &meta.output_schema {
        mcp = mcp.with_raw_output_schema(std::sync::Arc::new(object(output)));
    }
    mcp
}

fn annotations(effect: EffectDecl, open_world: bool) -> ToolAnnotations {
    let hints = ToolAnnotations::new().open_world(open_world);
    match effect {
        EffectDecl::Fixed(Effect::Read) => hints.read_only(true),
        EffectDecl::Fixed(Effect::Idempotent) => {
            hints.read_only(false).idempotent(true).destructive(false)
        }
        EffectDecl::Fixed(Effect::Write) | EffectDecl::ByInput => {
            hints.read_only(false).idempotent(false).destructive(true)
        }
    }
}

/// A schema as a JSON object (schemas are checked to be objects at load).
fn object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => map.clone(),
        _ => JsonObject::from_iter([("type".to_string(), json!("object"))]),
    }
}

/// A call's envelope as an MCP result: content blocks, `structuredContent`
/// (checked against the tool's output schema, which MCP clients enforce),
/// `isError`, and `_meta` with the call id, duration, attempts, stubbed and
/// the receipt (`toolhost/usage`).
pub fn result(tool: &Tool, result: &CallResult) -> CallToolResult {
    let output = &result.output;
    let mut content: Vec<McpBlock> = output
        .content
        .iter()
        .enumerate()
        .map(|(i, block)| content_block(block, &result.call.id, i))
        .collect();
    let mut structured = output
        .structured
        .clone()
        .or_else(|| match output.content.as_slice() {
            [
                ContentBlock::Json {
                    json: value @ Value::Object(_),
                },
            ] => Some(value.clone()),
            _ => None,
        });
    let mut is_error = output.is_error;
    if tool.metadata().output_schema.is_some() && !is_error {
        let problem = match &structured {
            None => Some("it returned no structured (JSON object) result".to_string()),
            Some(value) => {
                let errors = tool.validate_output(value);
                (!errors.is_empty()).then(|| {
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            }
        };
        if let Some(problem) = problem {
            is_error = true;
            structured = None;
            content = vec![McpBlock::text(format!(
                "tool `{}` returned a result that does not match its output schema: {problem}",
                tool.name()
            ))];
        }
    }
    let mut mcp = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    mcp.structured_content = structured;
    let mut meta = MetaObject::new();
    meta.insert("callId".into(), json!(result.call.id));
    meta.insert("durationMs".into(), json!(result.duration_ms));
    meta.insert("attempts".into(), json!(result.attempts));
    meta.insert("stubbed".into(), json!(result.stubbed));
    meta.insert("toolhost/usage".into(), json!(result.usage));
    if result.scratch_workspace {
        meta.insert("scratchWorkspace".into(), json!(true));
    }
    mcp.meta = Some(meta);
    mcp
}

/// One block: text and JSON as text, images and audio as themselves,
/// documents and search results as embedded resources (a document as text
/// when it is text, its URI under `toolhost://calls/{call_id}/`), resource
/// links as links.
fn content_block(block: &ContentBlock, call_id: &str, index: usize) -> McpBlock {
    let b64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    match block {
        ContentBlock::Text { text } => McpBlock::text(text.clone()),
        ContentBlock::Json { json } => McpBlock::text(json.to_string()),
        ContentBlock::Image { media_type, data } => McpBlock::image(b64(data), media_type.clone()),
        ContentBlock::Audio { media_type, data } => McpBlock::audio(b64(data), media_type.clone()),
        ContentBlock::Document {
            media_type,
            data,
            name,
            uri,
        } => {
            let uri = uri.clone().unwrap_or_else(|| {
                let name = name.clone().unwrap_or_else(|| format!("document-{index}"));
                format!("toolhost://calls/{call_id}/{name}")
            });
            let contents = match std::str::from_utf8(data) {
                Ok(text) if is_textual(media_type) => ResourceContents::text(text, uri),
                _ => ResourceContents::blob(b64(data), uri),
            };
            McpBlock::resource(contents.with_mime_type(media_type.clone()))
        }
        ContentBlock::SearchResult {
            source,
            title,
            text,
        } => McpBlock::resource(
            ResourceContents::text(format!("{title}\n\n{text}"), source.clone())
                .with_mime_type("text/plain"),
        ),
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            media_type,
        } => {
            let mut link = Resource::new(uri.clone(), name.clone());
            link.description = description.clone();
            link.mime_type = media_type.clone();
            McpBlock::resource_link(link)
        }
    }
}

/// Whether a document of this media type is text a client reads as text:
/// `text/*`, JSON, XML, YAML and JavaScript (parameters ignored).
fn is_textual(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json" | "application/xml" | "application/yaml" | "application/javascript"
        )
}

/// A prompt as `prompts/list` shows it.
pub fn prompt(spec: &PromptSpec) -> McpPrompt {
    let arguments = spec
        .arguments
        .iter()
        .map(|argument| {
            let mut mcp = PromptArgument::new(&argument.name).with_required(argument.required);
            mcp.description = argument.description.clone();
            mcp
        })
        .collect();
    let mut mcp = McpPrompt::new(&spec.name, spec.description.as_deref(), Some(arguments));
    mcp.title = spec.title.clone();
    mcp
}

/// A filled-in prompt as `prompts/get` returns it; its documents' URIs are
/// under `toolhost://prompts/<name>`.
pub fn prompt_result(name: &str, result: &PromptResult) -> GetPromptResult {
    let uri_base = format!("toolhost://prompts/{name}");
    let messages = result
        .messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let role = match message.role {
                Role::User => McpRole::User,
                Role::Assistant => McpRole::Assistant,
            };
            PromptMessage::new(role, content_block(&message.content, &uri_base, i))
        })
        .collect();
    let mut mcp = GetPromptResult::new(messages);
    mcp.description = result.description.clone();
    mcp
}

/// A prompt's failure as the JSON-RPC error MCP expects: the request's
/// problem (`-32602`) or the server's (`-32603`), with the code in `data`.
pub fn prompt_error(error: &PromptError) -> ErrorData {
    let data = Some(json!({ "code": error.code() }));
    match error {
        PromptError::Unknown { .. } | PromptError::InvalidArguments { .. } => {
            ErrorData::invalid_params(error.to_string(), data)
        }
        PromptError::Failed { .. } => ErrorData::internal_error(error.to_string(), data),
    }
}

/// A refusal that is not a protocol problem, as an `isError` result.
pub fn refusal(code: &str, message: String) -> CallToolResult {
    let mut result = CallToolResult::error(vec![McpBlock::text(message)]);
    let mut meta = MetaObject::new();
    meta.insert("code".into(), json!(code));
    result.meta = Some(meta);
    result
}

/// Invalid arguments as a tool execution error the model can read and
/// correct (MCP 2025-11-25, SEP-1303): the text lists each error at its JSON
/// pointer; `_meta` holds the code and the errors as data.
pub fn invalid_input(tool: &str, errors: &[InputError]) -> CallToolResult {
    let mut text = format!("invalid arguments for tool `{tool}`; correct them and call again:");
    for error in errors {
        text.push_str("\n- ");
        text.push_str(&error.to_string());
    }
    let mut result = refusal("invalid_tool_input", text);
    if let Some(meta) = result.meta.as_mut() {
        meta.insert("errors".into(), json!(errors));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp_json(block: ContentBlock) -> Value {
        serde_json::to_value(content_block(&block, "call_1", 0)).unwrap()
    }

    #[test]
    fn audio_and_images_are_themselves() {
        let audio = mcp_json(ContentBlock::Audio {
            media_type: "audio/wav".into(),
            data: b"RIFF".to_vec(),
        });
        assert_eq!(
            audio,
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
        );
    }

    #[test]
    fn resource_links_keep_what_the_tool_said() {
        let link = mcp_json(ContentBlock::ResourceLink {
            uri: "https://example.com/r.pdf".into(),
            name: "r.pdf".into(),
            description: Some("the report".into()),
            media_type: Some("application/pdf".into()),
        });
        assert_eq!(
            link,
            json!({
                "type": "resource_link",
                "uri": "https://example.com/r.pdf",
                "name": "r.pdf",
                "description": "the report",
                "mimeType": "application/pdf",
            })
        );
        let bare = mcp_json(ContentBlock::ResourceLink {
            uri: "toolhost://x".into(),
            name: "x".into(),
            description: None,
            media_type: None,
        });
        assert_eq!(
            bare,
            json!({"type": "resource_link", "uri": "toolhost://x", "name": "x"})
        );
    }

    #[test]
    fn textual_documents_are_text_and_others_blobs() {
        let document = |media_type: &str, data: &[u8]| {
            mcp_json(ContentBlock::Document {
                media_type: media_type.into(),
                data: data.to_vec(),
                name: Some("d".into()),
                uri: None,
            })["resource"]
                .clone()
        };
        let text = document("text/plain; charset=utf-8", b"hello");
        assert_eq!(text["text"], "hello");
        assert_eq!(text["uri"], "toolhost://calls/call_1/d");
        assert_eq!(text["mimeType"], "text/plain; charset=utf-8");
        assert_eq!(document("application/vnd.api+json", b"{}")["text"], "{}");
        let pdf = document("application/pdf", b"%PDF");
        assert_eq!(pdf["blob"], "JVBERg==");
        assert!(pdf.get("text").is_none());
        // Text that is not UTF-8 stays bytes.
        assert_eq!(document("text/plain", &[0xff, 0xfe])["blob"], "//4=");
        // A document that has an address keeps it.
        let addressed = mcp_json(ContentBlock::Document {
            media_type: "text/plain".into(),
            data: b"x".to_vec(),
            name: Some("d".into()),
            uri: Some("test://example-resource".into()),
        });
        assert_eq!(addressed["resource"]["uri"], "test://example-resource");
    }
}
