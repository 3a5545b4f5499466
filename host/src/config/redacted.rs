//! `toolhost.toml` as a version keeps it, to be loaded again later or on
//! another server of a fleet: every secret the text holds (the server's
//! token, tools' environment values, MCP servers' environment and header
//! values, telemetry headers, a password in `redis_url`) replaced by a
//! placeholder, so the text can be stored and shared without them; and
//! the same text made whole again from a server's own `toolhost.toml`,
//! which holds the secrets. A named agent's stored definition is kept the
//! same way (its MCP servers' environment and header values).

use serde_json::Value as Json;
use toml::{Table, Value};

/// What stands for a secret in stored text.
pub const PLACEHOLDER: &str = "<secret: taken from this server's toolhost.toml>";

/// Where `toolhost.toml` keeps secrets: each a path of table keys, `*`
/// standing for any key, or any element of an array of tables. A URL (a
/// key named in [`URLS`]) is a secret only when it carries user info or a
/// query.
const SECRETS: &[&[&str]] = &[
    &["server", "token"],
    &["telemetry", "headers", "*"],
    &["telemetry", "otlp_endpoint"],
    &["state", "redis_url"],
    &["mcp_servers", "*", "url"],
    &["agents", "*", "mcp_servers", "*", "url"],
    &["defaults", "env", "*"],
    &["tools", "*", "env", "*"],
    &["mcp_servers", "*", "env", "*"],
    &["mcp_servers", "*", "headers", "*"],
    &["agents", "*", "mcp_servers", "*", "env", "*"],
    &["agents", "*", "mcp_servers", "*", "headers", "*"],
];

/// Where a stored agent definition keeps secrets.
const DEFINITION_SECRETS: &[&[&str]] = &[
    &["mcp_servers", "*", "env", "*"],
    &["mcp_servers", "*", "headers", "*"],
    &["mcp_servers", "*", "url"],
];

/// The keys whose values are URLs: secret only with user info or a query.
const URLS: &[&str] = &["redis_url", "otlp_endpoint", "url"];

/// `text` with every secret replaced by [`PLACEHOLDER`].
pub fn redact(text: &str) -> anyhow::Result<String> {
    let mut table: Table = toml::from_str(text)?;
    for path in SECRETS {
        redact_at(&mut table, path);
    }
    Ok(toml::to_string(&table)?)
}

/// `redacted` with each placeholder replaced by the value at the same
/// place in `own` (a server's own `toolhost.toml` text): MCP servers are
/// matched by `name`. A secret `own` does not hold is an error naming it.
pub fn restore(redacted: &str, own: Option<&str>) -> anyhow::Result<String> {
    let mut table: Table = toml::from_str(redacted)?;
    let own: Table = match own {
        Some(text) => toml::from_str(text)?,
        None => Table::new(),
    };
    let own = Value::Table(own);
    let mut missing = Vec::new();
    fill(&mut table, &own, &mut Vec::new(), &mut missing);
    anyhow::ensure!(
        missing.is_empty(),
        "it needs secrets this server's toolhost.toml does not give: {}",
        missing.join(", ")
    );
    Ok(toml::to_string(&table)?)
}

/// A stored agent definition with its MCP servers' environment and header
/// values replaced by [`PLACEHOLDER`].
pub fn redact_definition(definition: &Json) -> Json {
    let mut value: Value = match Value::try_from(definition) {
        Ok(value) => value,
        Err(_) => return definition.clone(),
    };
    if let Value::Table(table) = &mut value {
        for path in DEFINITION_SECRETS {
            redact_at(table, path);
        }
    }
    serde_json::to_value(value).unwrap_or_else(|_| definition.clone())
}

/// `redacted` made whole from `own`, the same agent's definition as this
/// server has it (from its `toolhost.toml`).
pub fn restore_definition(redacted: &Json, own: Option<&Json>) -> anyhow::Result<Json> {
    let mut value = Value::try_from(redacted)?;
    let own = match own {
        Some(own) => Value::try_from(own)?,
        None => Value::Table(Table::new()),
    };
    let mut missing = Vec::new();
    if let Value::Table(table) = &mut value {
        fill(table, &own, &mut Vec::new(), &mut missing);
    }
    anyhow::ensure!(
        missing.is_empty(),
        "it needs secrets this server's definition of the agent does not give: {}",
        missing.join(", ")
    );
    Ok(serde_json::to_value(value)?)
}

fn redact_at(table: &mut Table, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let keys: Vec<String> = match *first {
        "*" => table.keys().cloned().collect(),
        key => vec![key.to_string()],
    };
    for key in keys {
        let Some(value) = table.get_mut(&key) else {
            continue;
        };
        match (value, rest) {
            (Value::String(secret), []) => {
                if !URLS.contains(&key.as_str()) || secret.contains(['@', '?']) {
                    *secret = PLACEHOLDER.to_string();
                }
            }
            (Value::Table(inner), rest) => redact_at(inner, rest),
            (Value::Array(items), [star, rest @ ..]) if *star == "*" => {
                for item in items {
                    if let Value::Table(inner) = item {
                        redact_at(inner, rest);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Replace each placeholder in `table` (at `path`) with `own`'s value at
/// the same place; what `own` lacks is named in `missing`.
fn fill(table: &mut Table, own: &Value, path: &mut Vec<String>, missing: &mut Vec<String>) {
    for (key, value) in table.iter_mut() {
        let own = own.get(key.as_str());
        path.push(key.clone());
        fill_value(value, own, path, missing);
        path.pop();
    }
}

fn fill_value(
    value: &mut Value,
    own: Option<&Value>,
    path: &mut Vec<String>,
    missing: &mut Vec<String>,
) {
    match value {
        Value::String(text) if text == PLACEHOLDER => match own {
            Some(Value::String(secret)) => *text = secret.clone(),
            _ => missing.push(format!("`{}`", path.join("."))),
        },
        Value::Table(inner) => {
            let empty = Value::Table(Table::new());
            fill(inner, own.unwrap_or(&empty), path, missing);
        }
        Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                let name = item.get("name").and_then(Value::as_str).map(str::to_string);
                let own_item = match (&name, own.and_then(Value::as_array)) {
                    (Some(name), Some(own_items)) => own_items
                        .iter()
                        .find(|o| o.get("name").and_then(Value::as_str) == Some(name)),
                    (None, Some(own_items)) => own_items.get(index),
                    _ => None,
                };
                path.push(name.unwrap_or_else(|| index.to_string()));
                fill_value(item, own_item, path, missing);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHOLE: &str = r#"
[server]
token = "tok-s3cret"
[telemetry]
otlp_endpoint = "http://127.0.0.1:4318"
headers = { api-key = "otlp-s3cret" }
[state]
redis_url = "redis://app:pw-s3cret@127.0.0.1:6379"
[defaults]
env = { SHARED = "defaults-s3cret" }
[tools.notes]
env = { API_KEY = "env-s3cret" }
kv = ["default"]
[[mcp_servers]]
name = "tickets"
type = "stdio"
command = "python3"
env = { DB = "stdio-s3cret" }
[[mcp_servers]]
name = "crm"
type = "url"
url = "https://user:url-s3cret@mcp.example.com/?key=q-s3cret"
headers = { Authorization = "hdr-s3cret" }
[agents.support]
mcp_servers = [{ name = "wiki", type = "url", url = "https://w.example.com", headers = { X-Key = "agent-s3cret" } }]
"#;

    #[test]
    fn no_secret_is_left_and_each_comes_back_from_the_servers_own_text() {
        let redacted = redact(WHOLE).unwrap();
        assert!(!redacted.contains("s3cret"), "{redacted}");
        assert!(redacted.contains("kv = [\"default\"]"), "{redacted}");
        let restored = restore(&redacted, Some(WHOLE)).unwrap();
        let whole: Table = toml::from_str(WHOLE).unwrap();
        let back: Table = toml::from_str(&restored).unwrap();
        assert_eq!(whole, back);
    }

    #[test]
    fn a_secret_the_server_lacks_is_named() {
        let redacted = redact(WHOLE).unwrap();
        let own = WHOLE.replace("env = { API_KEY = \"env-s3cret\" }\n", "");
        let err = restore(&redacted, Some(&own)).unwrap_err().to_string();
        assert!(err.contains("`tools.notes.env.API_KEY`"), "{err}");
        let err = restore(&redacted, None).unwrap_err().to_string();
        assert!(err.contains("`server.token`"), "{err}");
    }

    #[test]
    fn a_url_without_a_password_or_a_query_is_kept() {
        let text = "[state]\nredis_url = \"redis://127.0.0.1:6379\"\n";
        assert_eq!(redact(text).unwrap(), text);
        let text =
            "[[mcp_servers]]\nname = \"w\"\ntype = \"url\"\nurl = \"https://w.example.com/mcp\"\n";
        assert!(redact(text).unwrap().contains("https://w.example.com/mcp"));
    }

    #[test]
    fn definitions_keep_no_header_values() {
        let definition = serde_json::json!({
            "mcp_servers": [{"name": "wiki", "type": "url", "url": "https://w", "headers": {"X-Key": "v-s3cret"}}],
            "tools": [],
        });
        let redacted = redact_definition(&definition);
        assert!(!redacted.to_string().contains("s3cret"), "{redacted}");
        assert_eq!(
            restore_definition(&redacted, Some(&definition)).unwrap(),
            definition
        );
        assert!(restore_definition(&redacted, None).is_err());
    }
}
