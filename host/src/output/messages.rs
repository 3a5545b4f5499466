//! Content blocks as clients post a custom tool's result: toolhost's own
//! form ([`ContentBlock`]'s JSON) or the Anthropic Messages format the
//! registry page's examples use (`text`; `image` and `document` with a
//! `source`; `search_result` with `content` blocks), read into toolhost's.

use serde_json::Value;

use super::ContentBlock;

/// Read one posted block into toolhost's blocks (a Messages `document`
/// whose source is a list of blocks gives several).
pub fn read_posted_block(block: Value) -> Result<Vec<ContentBlock>, String> {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let messages_form = match kind {
        "image" | "document" => block.get("source").is_some(),
        "search_result" => block.get("content").is_some(),
        _ => false,
    };
    if !messages_form {
        return serde_json::from_value(block)
            .map(|block| vec![block])
            .map_err(|e| {
                format!(
                    "{e} (a block is toolhost's own, e.g. {{\"type\": \"text\", \"text\"}} or \
                     {{\"type\": \"image\", \"mediaType\", \"data\"}}, or the Messages API's: \
                     text, image, document, search_result)"
                )
            });
    }
    let title = block
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string);
    match kind {
        "search_result" => search_result(&block),
        _ => from_source(kind, &block["source"], title),
    }
}

/// An `image` or `document` by its `source`.
fn from_source(
    kind: &str,
    source: &Value,
    title: Option<String>,
) -> Result<Vec<ContentBlock>, String> {
    let field = |name: &str| {
        source
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a {kind}'s `source` needs `{name}` (a string)"))
    };
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let media_type = field("media_type")?.to_string();
            let data = super::mcp::decode(field("data")?)
                .map_err(|e| format!("a {kind}'s source: {e}"))?;
            Ok(vec![match kind {
                "image" => ContentBlock::Image { media_type, data },
                _ => ContentBlock::Document {
                    media_type,
                    data,
                    name: title,
                    uri: None,
                },
            }])
        }
        Some("text") if kind == "document" => Ok(vec![ContentBlock::Document {
            media_type: source
                .get("media_type")
                .and_then(Value::as_str)
                .unwrap_or("text/plain")
                .to_string(),
            data: field("data")?.as_bytes().to_vec(),
            name: title,
            uri: None,
        }]),
        Some("content") if kind == "document" => {
            let blocks = source
                .get("content")
                .and_then(Value::as_array)
                .ok_or("a document's `content` source needs `content`, a list of blocks")?;
            let mut read = Vec::with_capacity(blocks.len());
            for block in blocks {
                read.extend(read_posted_block(block.clone())?);
            }
            Ok(read)
        }
        Some("url") => {
            let url = field("url")?.to_string();
            Ok(vec![ContentBlock::ResourceLink {
                name: title.unwrap_or_else(|| url.clone()),
                uri: url,
                description: None,
                media_type: None,
            }])
        }
        Some("file") => Err(format!(
            "a {kind} by `file_id` names a file of the Anthropic Files API, which toolhost \
             cannot read: send its bytes (`\"source\": {{\"type\": \"base64\", \
             \"media_type\", \"data\"}}`)"
        )),
        other => Err(format!(
            "a {kind}'s `source.type` is {}: expected \"base64\"{}, \"url\"",
            other.map_or("missing".to_string(), |t| format!("{t:?}")),
            if kind == "document" {
                ", \"text\", \"content\""
            } else {
                ""
            }
        )),
    }
}

/// A `search_result`: its source, title and the text of its `content`.
fn search_result(block: &Value) -> Result<Vec<ContentBlock>, String> {
    let field = |name: &str| {
        block
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("a search_result needs `{name}` (a string)"))
    };
    let texts = block["content"]
        .as_array()
        .ok_or("a search_result's `content` is a list of text blocks")?
        .iter()
        .map(|part| {
            part.get("text")
                .and_then(Value::as_str)
                .filter(|_| part.get("type").and_then(Value::as_str) == Some("text"))
                .ok_or("a search_result's `content` holds only text blocks")
        })
        .collect::<Result<Vec<&str>, _>>()?;
    Ok(vec![ContentBlock::SearchResult {
        source: field("source")?,
        title: field("title")?,
        text: texts.join("\n\n"),
    }])
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use serde_json::json;

    use super::*;

    fn read(block: Value) -> Vec<ContentBlock> {
        read_posted_block(block).unwrap()
    }

    #[test]
    fn both_forms_read_into_the_same_blocks() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG");
        let own = read(json!({ "type": "image", "mediaType": "image/png", "data": png }));
        let messages = read(json!({
            "type": "image",
            "source": { "type": "base64", "media_type": "image/png", "data": png },
        }));
        assert_eq!(own, messages);
        assert_eq!(
            read(json!({ "type": "text", "text": "hi" })),
            [ContentBlock::Text { text: "hi".into() }]
        );
        assert_eq!(
            read(json!({
                "type": "search_result", "source": "https://a.example", "title": "A",
                "content": [{ "type": "text", "text": "one" }, { "type": "text", "text": "two" }],
            })),
            [ContentBlock::SearchResult {
                source: "https://a.example".into(),
                title: "A".into(),
                text: "one\n\ntwo".into(),
            }]
        );
        assert_eq!(
            read(json!({
                "type": "document", "title": "notes",
                "source": { "type": "text", "media_type": "text/plain", "data": "plain" },
            })),
            [ContentBlock::Document {
                media_type: "text/plain".into(),
                data: b"plain".to_vec(),
                name: Some("notes".into()),
                uri: None,
            }]
        );
        assert_eq!(
            read(json!({
                "type": "document",
                "source": { "type": "content", "content": [{ "type": "text", "text": "a" }] },
            })),
            [ContentBlock::Text { text: "a".into() }]
        );
        assert!(matches!(
            &read(json!({ "type": "image", "source": { "type": "url", "url": "https://a.example/x.png" } }))[0],
            ContentBlock::ResourceLink { uri, .. } if uri == "https://a.example/x.png"
        ));
    }

    #[test]
    fn unreadable_blocks_say_why() {
        let err = |block: Value| read_posted_block(block).unwrap_err();
        assert!(
            err(json!({ "type": "image", "source": { "type": "file", "file_id": "f" } }))
                .contains("file_id")
        );
        assert!(err(json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "%%" } })).contains("not base64"));
        assert!(err(json!({ "type": "video", "data": "" })).contains("Messages API"));
        assert!(err(json!({ "type": "search_result", "source": "s", "title": "t", "content": [{ "type": "image" }] })).contains("only text"));
    }
}
