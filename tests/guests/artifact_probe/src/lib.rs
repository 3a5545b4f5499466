//! Test guest: saves and lists artifacts as told and reports each outcome,
//! so tests can check the artifacts capability's grant, read-only calls,
//! paths and budget.

use toolhost_sdk::artifacts;
use toolhost_sdk::prelude::*;

/// What to try.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The effect to declare for this call: `read` or `write` (default).
    #[serde(default)]
    effect: Option<String>,
    /// The artifact's name.
    #[serde(default)]
    name: Option<String>,
    /// Save this text (UTF-8), of `media_type`.
    #[serde(default)]
    text: Option<String>,
    /// Save this many bytes of `x`.
    #[serde(default)]
    bytes: Option<usize>,
    /// Save the file at this path.
    #[serde(default)]
    path: Option<String>,
    /// The media type (default `text/plain`).
    #[serde(default)]
    media_type: Option<String>,
    /// The tags.
    #[serde(default)]
    tags: Vec<String>,
}

struct ArtifactProbe;

fn outcome(result: Result<artifacts::Artifact, artifacts::Error>) -> Value {
    match result {
        Ok(a) => json!({
            "ok": true,
            "name": a.name,
            "mediaType": a.media_type,
            "size": a.size,
            "tags": a.tags,
            "session": a.session,
            "uri": a.uri,
        }),
        Err(e) => json!({ "ok": false, "error": e.0 }),
    }
}

impl Tool for ArtifactProbe {
    type Input = Input;
    const DESCRIPTION: &'static str = "Saves and lists artifacts as told; reports each outcome.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.effect.as_deref() {
            Some("read") => Effect::Read,
            _ => Effect::Write,
        }
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let name = input.name.as_deref().unwrap_or("probe.txt");
        let media_type = input.media_type.as_deref().unwrap_or("text/plain");
        let tags: Vec<&str> = input.tags.iter().map(String::as_str).collect();
        let saved = if let Some(text) = &input.text {
            Some(outcome(artifacts::save(name, media_type, text, &tags)))
        } else if let Some(n) = input.bytes {
            Some(outcome(artifacts::save(
                name,
                media_type,
                vec![b'x'; n],
                &tags,
            )))
        } else {
            input
                .path
                .as_deref()
                .map(|path| outcome(artifacts::save_file(name, path, media_type, &tags)))
        };
        let listed = match artifacts::list() {
            Ok(all) => json!(
                all.iter()
                    .map(|a| (a.name.clone(), a.size))
                    .collect::<Vec<_>>()
            ),
            Err(e) => json!({ "error": e.0 }),
        };
        Ok(json!({ "saved": saved, "listed": listed }).into())
    }
}

export_tool!(ArtifactProbe);
