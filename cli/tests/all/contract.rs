//! Contract versions: a component built against contract 0.1.0 (with
//! wit-bindgen against the host's frozen copy) loads and runs beside current
//! ones, its log and progress reach the same capabilities, and its results
//! convert to the current content blocks.

use crate::common;

use std::sync::Arc;

use common::host;
use serde_json::json;
use toolhost::output::ContentBlock;
use toolhost::session::EventKind;
use toolhost::tool::{Effect, EffectDecl};
use toolhost::{CallOptions, Session};

#[tokio::test]
async fn a_contract_0_1_0_component_loads_and_runs() {
    let (_dir, host) = host(&["contract_v0_1", "echo"], "").await;
    let registry = host.registry();
    let tool = registry.get("contract_v0_1").expect("loaded");
    assert_eq!(tool.metadata().effect, EffectDecl::Fixed(Effect::Read));
    assert!(tool.metadata().description.contains("contract 0.1.0"));

    let session = Arc::new(Session::ephemeral().unwrap());
    let options = CallOptions::new(session.clone());
    let result = host
        .call("contract_v0_1", json!({}), &options)
        .await
        .unwrap();
    let output = &result.output;
    assert!(!output.is_error);
    assert_eq!(
        output.content[0],
        ContentBlock::Text {
            text: format!("attempt 1 of call {}", result.call.id)
        }
    );
    assert_eq!(
        output.content[1],
        ContentBlock::Json {
            json: json!({"version": "0.1.0"})
        }
    );
    assert!(
        matches!(&output.content[2], ContentBlock::Image { media_type, .. } if media_type == "image/png")
    );
    assert_eq!(
        output.content[3],
        ContentBlock::Document {
            media_type: "text/plain".into(),
            data: b"a document".to_vec(),
            name: Some("notes.txt".into()),
            uri: None,
        }
    );
    assert!(matches!(&output.content[4], ContentBlock::SearchResult { title, .. } if title == "A"));

    let logs: Vec<_> = result
        .trace
        .logs
        .iter()
        .map(|l| l.message.as_str())
        .collect();
    assert!(logs.contains(&"old contract, new host"), "{logs:?}");
    let progress: Vec<_> = session
        .events()
        .kept(None)
        .into_iter()
        .filter(|event| event.kind == EventKind::CallProgress)
        .map(|event| event.to_json()["data"]["message"].clone())
        .collect();
    assert_eq!(progress, [json!("all done")]);

    let failed = host
        .call("contract_v0_1", json!({"fail": true}), &common::live())
        .await
        .unwrap();
    assert!(failed.output.is_error);
    assert!(
        failed.result.to_string().contains("asked to fail"),
        "{}",
        failed.result
    );
}

/// 0.2.1 and 0.2.2 only added imports and functions: a 0.2.0 component
/// links against the host's 0.2.2 interfaces by semver and runs unchanged
/// (its log line is the one it was built with).
#[tokio::test]
async fn a_contract_0_2_0_component_loads_and_runs() {
    let (_dir, host) = host(&["contract_v0_2"], "").await;
    let registry = host.registry();
    assert!(registry.failures().is_empty(), "{:?}", registry.failures());
    let tool = registry.get("contract_v0_2").expect("loaded");
    assert!(tool.metadata().description.contains("contract 0.2.0"));

    let result = host
        .call("contract_v0_2", json!({}), &common::live())
        .await
        .unwrap();
    let output = &result.output;
    assert!(!output.is_error, "{:?}", result.result);
    assert_eq!(
        output.content[0],
        ContentBlock::Text {
            text: format!("attempt 1 of call {}", result.call.id)
        }
    );
    assert!(
        matches!(&output.content[1], ContentBlock::Audio { media_type, .. } if media_type == "audio/wav")
    );
    let logs: Vec<_> = result
        .trace
        .logs
        .iter()
        .map(|l| l.message.as_str())
        .collect();
    assert_eq!(logs, ["0.2.0 contract, 0.2.1 host"]);
}
