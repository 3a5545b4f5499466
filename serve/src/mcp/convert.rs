//! toolhost's tools and results in MCP's terms.

use base64::Engine as _;
use rmcp::model::{
    CallToolResult, ContentBlock as McpBlock, JsonObject, MetaObject, ResourceContents,
    Tool as McpTool, ToolAnnotations,
};
use serde_json::{Value, json};

use toolhost::InputError;
use toolhost::call::CallResult;
use toolhost::output::ContentBlock;
use toolhost::registry::Tool;
use toolhost::tool::{Effect, EffectDecl};

/// A tool as `tools/list` advertises it: its schemas, and hints derived from
/// its effect (a by-input effect is advertised as destructive) and from
/// whether it may reach the network.
pub fn tool(tool: &Tool) -> McpTool {
    let meta = tool.metadata();
    let mut mcp = McpTool::new(
        tool.name().to_string(),
        meta.description.clone(),
        object(&meta.input_schema),
    )
    .with_annotations(annotations(
        meta.effect,
        !tool.policy().grants.http.is_empty(),
    ));
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

/// One block: text and JSON as text, images as images, documents and
/// search results as embedded resources.
fn content_block(block: &ContentBlock, call_id: &str, index: usize) -> McpBlock {
    let b64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    match block {
        ContentBlock::Text { text } => McpBlock::text(text.clone()),
        ContentBlock::Json { json } => McpBlock::text(json.to_string()),
        ContentBlock::Image { media_type, data } => McpBlock::image(b64(data), media_type.clone()),
        ContentBlock::Document {
            media_type,
            data,
            name,
        } => {
            let name = name.clone().unwrap_or_else(|| format!("document-{index}"));
            McpBlock::resource(
                ResourceContents::blob(b64(data), format!("toolhost://calls/{call_id}/{name}"))
                    .with_mime_type(media_type.clone()),
            )
        }
        ContentBlock::SearchResult {
            source,
            title,
            text,
        } => McpBlock::resource(
            ResourceContents::text(format!("{title}\n\n{text}"), source.clone())
                .with_mime_type("text/plain"),
        ),
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
