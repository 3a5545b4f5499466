//! Resources over MCP: the host's resources and templates in MCP's terms,
//! and each client's subscriptions (no component lives between calls, so
//! the server keeps them and forwards the host's resource updates).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use rmcp::model::{ErrorData, Resource, ResourceContents, ResourceTemplate, SubscriptionFilter};
use serde_json::json;

use toolhost::artifacts::{Artifact, ArtifactError, SessionArtifacts};
use toolhost::resources::{self, ResourceData, ResourceError, ResourceSpec, ResourceTemplateSpec};
use toolhost::session::Session;

/// The largest artifact `resources/read` sends (base64 in one message);
/// larger ones are downloaded over the HTTP API.
pub const MAX_ARTIFACT_READ_BYTES: u64 = 16 << 20;

/// The most addresses one client (or one listen stream) may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// What a `subscriptions/listen` stream is told of, of what it asked for:
/// every list change, and updates of the first [`MAX_SUBSCRIPTIONS`]
/// well-formed addresses (each once). The acknowledgment names what was
/// accepted, so a client sees what was left out.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed;
    accepted.prompts_list_changed = requested.prompts_list_changed;
    accepted.resources_list_changed = requested.resources_list_changed;
    accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        let mut seen = BTreeSet::new();
        uris.iter()
            .filter(|uri| resources::uri_problem(uri).is_none() && seen.insert(uri.as_str()))
            .take(MAX_SUBSCRIPTIONS)
            .cloned()
            .collect()
    });
    accepted
}

/// A resource as `resources/list` advertises it.
pub fn resource(spec: &ResourceSpec) -> Resource {
    let about = &spec.about;
    let mut mcp = Resource::new(spec.uri.clone(), about.name.clone());
    mcp.title = about.title.clone();
    mcp.description = about.description.clone();
    mcp.mime_type = about.media_type.clone();
    mcp
}

/// A template as `resources/templates/list` advertises it.
pub fn template(spec: &ResourceTemplateSpec) -> ResourceTemplate {
    let about = &spec.about;
    let mut mcp = ResourceTemplate::new(spec.uri_template.clone(), about.name.clone());
    mcp.title = about.title.clone();
    mcp.description = about.description.clone();
    mcp.mime_type = about.media_type.clone();
    mcp
}

/// What a read returned, as `resources/read` sends it: text as text,
/// bytes base64-encoded.
pub fn contents(read: Vec<resources::ResourceContents>) -> Vec<ResourceContents> {
    read.into_iter()
        .map(|c| {
            let mcp = match c.data {
                ResourceData::Text(text) => ResourceContents::text(text, c.uri),
                ResourceData::Blob(bytes) => ResourceContents::blob(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                    c.uri,
                ),
            };
            match c.media_type {
                Some(media_type) => mcp.with_mime_type(media_type),
                None => mcp,
            }
        })
        .collect()
}

/// An artifact of `session` as `resources/list` advertises it.
pub fn artifact(artifact: &Artifact, session: &str) -> Resource {
    let mut mcp = Resource::new(artifact.uri(session), artifact.name.clone());
    mcp.description = Some(format!(
        "An artifact of session {session}, saved by {} ({} bytes{}{}).",
        artifact.tool,
        artifact.size,
        if artifact.tags.is_empty() {
            ""
        } else {
            "; tags: "
        },
        artifact.tags.join(", ")
    ));
    mcp.mime_type = Some(artifact.media_type.clone());
    mcp.size = Some(artifact.size);
    mcp
}

/// Read artifact `name` of `session` for `resources/read`: text media
/// types that are UTF-8 as text, anything else base64-encoded; refused past
/// [`MAX_ARTIFACT_READ_BYTES`].
pub fn read_artifact(
    session: &Session,
    name: &str,
    uri: &str,
) -> Result<Vec<ResourceContents>, ErrorData> {
    use std::io::Read as _;
    let not_found = |e: &ArtifactError| {
        ErrorData::resource_not_found(
            e.to_string(),
            Some(json!({ "code": "artifact_not_found", "uri": uri })),
        )
    };
    let (record, file) = SessionArtifacts::new(session)
        .open(name)
        .map_err(|e| match e {
            ArtifactError::NotFound(_) => not_found(&e),
            other => ErrorData::internal_error(other.to_string(), None),
        })?;
    let mut bytes = Vec::new();
    file.take(MAX_ARTIFACT_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ErrorData::internal_error(format!("cannot read {uri}: {e}"), None))?;
    if bytes.len() as u64 > MAX_ARTIFACT_READ_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "{uri} is over {} MiB, too large for one MCP message: download it from the \
                 HTTP API (GET /<slug>/v1/sessions/{}/artifacts/{name})",
                MAX_ARTIFACT_READ_BYTES >> 20,
                session.id()
            ),
            Some(json!({ "code": "artifact_too_large", "uri": uri })),
        ));
    }
    let textual = record.media_type.starts_with("text/")
        || matches!(
            record.media_type.as_str(),
            "application/json" | "application/xml" | "application/yaml"
        );
    let data = match String::from_utf8(bytes) {
        Ok(text) if textual => ResourceData::Text(text),
        Ok(text) => ResourceData::Blob(text.into_bytes()),
        Err(e) => ResourceData::Blob(e.into_bytes()),
    };
    Ok(contents(vec![resources::ResourceContents {
        uri: uri.to_string(),
        media_type: Some(record.media_type),
        data,
    }]))
}

/// A read's failure as the JSON-RPC error MCP expects: nothing there is
/// "resource not found" (`-32002`), with the address in `data`; a failure
/// the server's (`-32603`).
pub fn error(error: &ResourceError) -> ErrorData {
    match error {
        ResourceError::NotFound { uri, .. } => ErrorData::resource_not_found(
            error.to_string(),
            Some(json!({ "code": error.code(), "uri": uri })),
        ),
        ResourceError::Failed { .. } => {
            ErrorData::internal_error(error.to_string(), Some(json!({ "code": error.code() })))
        }
    }
}

/// The addresses one client subscribed to. Cloning shares them.
#[derive(Clone, Default, Debug)]
pub struct Subscriptions(Arc<Mutex<BTreeSet<String>>>);

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribe to `uri`; refused past [`MAX_SUBSCRIPTIONS`] or for an
    /// address no longer than an address may be.
    pub fn add(&self, uri: String) -> Result<(), ErrorData> {
        if let Some(problem) = resources::uri_problem(&uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "cannot subscribe to {}: it {problem}",
                    resources::shown(&uri)
                ),
                Some(json!({ "code": "invalid_resource_uri" })),
            ));
        }
        let mut subscribed = self.lock();
        if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains(&uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this client is subscribed to {MAX_SUBSCRIPTIONS} resources already; \
                     unsubscribe from one first"
                ),
                Some(json!({ "code": "too_many_subscriptions" })),
            ));
        }
        subscribed.insert(uri);
        Ok(())
    }

    /// Unsubscribe from `uri` (subscribed or not).
    pub fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    /// Whether the client subscribed to `uri`.
    pub fn contains(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_stays_text_and_bytes_become_base64() {
        let read = vec![
            resources::ResourceContents {
                uri: "test://a".into(),
                media_type: Some("text/plain".into()),
                data: ResourceData::Text("hi".into()),
            },
            resources::ResourceContents {
                uri: "test://b".into(),
                media_type: None,
                data: ResourceData::Blob(vec![0, 255]),
            },
        ];
        let sent = serde_json::to_value(contents(read)).unwrap();
        assert_eq!(
            sent,
            json!([
                {"uri": "test://a", "mimeType": "text/plain", "text": "hi"},
                {"uri": "test://b", "blob": "AP8="},
            ])
        );
    }

    #[test]
    fn subscriptions_are_bounded_and_checked() {
        let subscribed = Subscriptions::default();
        subscribed.add("test://a".into()).unwrap();
        assert!(subscribed.contains("test://a"));
        subscribed.remove("test://a");
        assert!(!subscribed.contains("test://a"));
        let bad = subscribed.add("not a uri".into()).unwrap_err();
        assert!(bad.message.contains("cannot subscribe"), "{bad:?}");
        for i in 0..MAX_SUBSCRIPTIONS {
            subscribed.add(format!("test://{i}")).unwrap();
        }
        let over = subscribed.add("test://over".into()).unwrap_err();
        assert!(over.message.contains("1024 resources already"), "{over:?}");
        subscribed.add("test://0".into()).unwrap();
    }

    #[test]
    fn a_listen_stream_accepts_well_formed_addresses_once_up_to_the_cap() {
        let mut asked: Vec<String> = vec!["not a uri".into(), "test://a".into(), "test://a".into()];
        asked.extend((0..2 * MAX_SUBSCRIPTIONS).map(|i| format!("test://{i}")));
        asked.push(format!("test://{}", "x".repeat(1 << 20)));
        let requested = SubscriptionFilter::builder()
            .tools_list_changed()
            .resource_subscriptions(asked)
            .build();
        let accepted = accepted(&requested);
        assert_eq!(accepted.tools_list_changed, Some(true));
        assert_eq!(accepted.prompts_list_changed, None);
        let uris = accepted.resource_subscriptions.unwrap();
        assert_eq!(uris.len(), MAX_SUBSCRIPTIONS);
        assert_eq!(uris[0], "test://a");
        assert_eq!(uris[1], "test://0");
        assert!(uris.iter().all(|uri| uri.len() < 64), "{:?}", uris.last());
    }
}
