//! `counter`: a named counter kept in the `default` key-value bucket; a
//! prompt that shows a counter's value; and each counter as the resource
//! `counter://{name}`, whose subscribers hear when a call changes it. The
//! prompt and the resource read the bucket with the tool's grant, which
//! they get read-only.

use std::collections::BTreeMap;

use toolhost_sdk::kv::Bucket;
use toolhost_sdk::prelude::*;
use toolhost_sdk::prompts::{Message, Prompt, Prompts};
use toolhost_sdk::resources::{self, Contents, ReadError, Resources, Template};

/// Which counter to bump, and by how much.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The counter's name (its key in the bucket).
    #[schemars(length(min = 1, max = 256))]
    name: String,
    /// How much to add; negative to subtract.
    #[serde(default = "one")]
    by: i64,
}

fn one() -> i64 {
    1
}

struct Counter;

impl Tool for Counter {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Add to a named counter and return its new value. Counters start at 0
        and are shared by every session of this host.
    ";
    const HAS_DRY_RUN: bool = true;

    fn dry_run_result(input: &Input) -> Option<Output> {
        Some(json!({ "name": input.name, "value": null, "dryRun": true }).into())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let bucket = Bucket::open("default")?;
        let value = bucket.increment(&input.name, input.by)?;
        if let Err(refused) = resources::updated(&address(&input.name)) {
            // E.g. a name too long for an address; the count stands.
            toolhost_sdk::log::warn(format!("cannot announce the counter's resource: {refused}"));
        }
        Ok(json!({ "name": input.name, "value": value }).into())
    }
}

/// The prompt `counter_status`.
struct Status;

impl Prompts for Status {
    fn list() -> Vec<Prompt> {
        vec![
            Prompt::new("counter_status")
                .with_description("A counter's value, and a question about what to do with it.")
                .with_argument("name", "The counter's name.", true),
        ]
    }

    fn get(_name: &str, arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        let name = arguments.get("name").map_or("", String::as_str);
        let stored = Bucket::open("default")
            .and_then(|bucket| bucket.get(name))
            .map_err(|e| format!("cannot read the counter: {e}"))?;
        let value = stored.map_or_else(
            || "0".to_string(),
            |bytes| String::from_utf8_lossy(&bytes).into_owned(),
        );
        Ok(vec![Message::user(format!(
            "The counter `{name}` is at {value}. Should it go up?"
        ))])
    }
}

/// Each counter as a resource.
struct Values;

impl Resources for Values {
    fn templates() -> Vec<Template> {
        vec![
            Template::new("counter://{name}", "counter")
                .with_description("A counter's value.")
                .with_media_type("text/plain"),
        ]
    }

    fn read(uri: &str, parameters: &BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError> {
        let name = parameters.get("name").ok_or(ReadError::NotFound)?;
        let stored = Bucket::open("default")?
            .get(name)?
            .ok_or(ReadError::NotFound)?;
        let value = String::from_utf8_lossy(&stored).into_owned();
        Ok(vec![
            Contents::text(uri, value).with_media_type("text/plain"),
        ])
    }
}

/// The resource address of the counter `name`: every byte but the
/// unreserved ones percent-encoded.
fn address(name: &str) -> String {
    let mut uri = String::from("counter://");
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

export_tool!(Counter, prompts = Status, resources = Values);
