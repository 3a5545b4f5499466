//! Who a session or a call is for, apart from what it may present to
//! others. A principal (`auth`) is identity only: its string `type`, `via`
//! and id-like fields, which are listed, stored, mirrored, put in events
//! and handed to tools. Credentials (tokens, keys) a session's calls send
//! to upstream MCP servers travel in a field of their own and stay in this
//! process's memory: never stored, listed, mirrored, logged or handed to a
//! tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

/// The fields a principal keeps.
const PRINCIPAL_FIELDS: [&str; 8] = [
    "type",
    "via",
    "user",
    "id",
    "email",
    "name",
    "principal",
    VOUCHED_BY,
];

/// The field the server sets on an approver it vouched for itself; no
/// client may set it.
pub const VOUCHED_BY: &str = "vouchedBy";

/// The principals the server vouches for when a request names none: the
/// holder of its token, or whoever reached its loopback address. No client
/// may name them.
pub const VOUCHED_PRINCIPALS: [&str; 2] = ["server-token", "loopback"];

/// The most fields a set of credentials may have.
pub const MAX_CREDENTIAL_FIELDS: usize = 32;
/// The longest credential value, in bytes.
pub const MAX_CREDENTIAL_BYTES: usize = 8 << 10;

/// The id-like field of an auth value (`user`, `id`, `email`, `name` or
/// `principal`): what identifies a principal without its credentials.
pub fn principal_id(auth: &Value) -> Option<&str> {
    ID_FIELDS
        .iter()
        .find_map(|key| auth.get(key).and_then(Value::as_str))
}

/// The fields that name a principal, the first present naming it.
const ID_FIELDS: [&str; 5] = ["user", "id", "email", "name", "principal"];

/// The principal in `auth`: its string `type`, `via`, id-like fields and
/// the server's `vouchedBy` marker, never the rest (which may carry
/// tokens).
pub fn principal_only(auth: &Value) -> Value {
    let kept = PRINCIPAL_FIELDS
        .iter()
        .filter_map(|key| {
            Some((
                key.to_string(),
                Value::String(auth.get(*key)?.as_str()?.to_string()),
            ))
        })
        .collect();
    Value::Object(kept)
}

/// The header an HTTP request without a body of its own (or an MCP
/// request) names the principal it acts for in, as JSON.
pub const AUTH_HEADER: &str = "toolhost-auth";

/// The longest [`AUTH_HEADER`] read, in bytes.
pub const MAX_AUTH_HEADER_BYTES: usize = 4 << 10;

/// The principal an [`AUTH_HEADER`] of `value` names, checked as
/// [`client_principal`] checks `auth`; why not, when it does not.
pub fn header_principal(value: &[u8]) -> Result<Value, String> {
    if value.len() > MAX_AUTH_HEADER_BYTES {
        return Err(format!(
            "the `Toolhost-Auth` header is {} bytes; at most {MAX_AUTH_HEADER_BYTES} are accepted",
            value.len()
        ));
    }
    let auth: Value = serde_json::from_slice(value)
        .map_err(|e| format!("the `Toolhost-Auth` header is not JSON: {e}"))?;
    client_principal(&auth).map_err(|why| format!("the `Toolhost-Auth` header: {why}"))
}

/// The principal a client asserts in `auth`, checked: a JSON object, not
/// carrying the server's `vouchedBy` marker nor naming a principal only
/// the server vouches for. Kept as its principal only.
pub fn client_principal(auth: &Value) -> Result<Value, String> {
    if !auth.is_object() {
        return Err("`auth` must be a JSON object, e.g. {\"user\": \"ada\"}".into());
    }
    if auth.get(VOUCHED_BY).is_some() {
        return Err(format!(
            "`auth.{VOUCHED_BY}` is set by the server only: leave `auth` out to be vouched for"
        ));
    }
    let principal = principal_only(auth);
    if let Some(id) = vouched_name(&principal) {
        return Err(format!(
            "`auth` may not name `{id}`: the server names that principal itself, for a \
             request that names none"
        ));
    }
    Ok(principal)
}

/// A principal the server vouches for that `auth` names in any of its
/// id-like fields, if it names one.
pub fn vouched_name(auth: &Value) -> Option<&str> {
    ID_FIELDS
        .iter()
        .filter_map(|key| auth.get(key).and_then(Value::as_str))
        .find(|id| VOUCHED_PRINCIPALS.contains(id))
}

/// How a principal is named in messages: its id-like field, never the whole
/// auth (which may carry tokens).
pub fn principal_name(auth: &Value) -> String {
    principal_id(auth).map_or_else(
        || "an unnamed principal".to_string(),
        |name| format!("`{name}`"),
    )
}

/// What a session's calls may present to upstream MCP servers
/// (`auth_headers` names the field each header takes): held in memory
/// only. `Debug` shows the field names, never the values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials(Arc<BTreeMap<String, String>>);

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl Credentials {
    /// Read a client's `credentials`: a JSON object of at most
    /// [`MAX_CREDENTIAL_FIELDS`] string fields, each at most
    /// [`MAX_CREDENTIAL_BYTES`].
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Object(fields) = value else {
            return Err(
                "`credentials` must be a JSON object of strings, e.g. {\"token\": \"Bearer …\"}"
                    .into(),
            );
        };
        if fields.len() > MAX_CREDENTIAL_FIELDS {
            return Err(format!(
                "`credentials` has {} fields; at most {MAX_CREDENTIAL_FIELDS} are accepted",
                fields.len()
            ));
        }
        let mut kept = BTreeMap::new();
        for (name, value) in fields {
            let shown = crate::shown::quoted(name);
            let Value::String(text) = value else {
                return Err(format!("`credentials.{shown}` must be a string"));
            };
            if text.len() > MAX_CREDENTIAL_BYTES {
                return Err(format!(
                    "`credentials.{shown}` is {} bytes; at most {MAX_CREDENTIAL_BYTES} are \
                     accepted",
                    text.len()
                ));
            }
            kept.insert(name.clone(), text.clone());
        }
        Ok(Self(Arc::new(kept)))
    }

    /// The value of the field `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Whether it holds no field.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_principal_of_an_auth_is_kept() {
        let auth = json!({"user": "ada", "token": "secret", "type": "slack", "n": 1});
        assert_eq!(
            principal_only(&auth),
            json!({"user": "ada", "type": "slack"})
        );
        assert_eq!(principal_name(&json!({"email": "a@b"})), "`a@b`");
    }

    #[test]
    fn clients_cannot_pass_for_the_server() {
        for forged in [
            json!({"principal": "server-token"}),
            json!({"user": "loopback"}),
            json!({"user": "ada", "vouchedBy": "toolhost"}),
            json!({"user": "ada", "principal": "server-token"}),
            json!("ada"),
        ] {
            assert!(client_principal(&forged).is_err(), "{forged}");
        }
        assert_eq!(
            client_principal(&json!({"user": "ada", "token": "t"})).unwrap(),
            json!({"user": "ada"})
        );
    }

    #[test]
    fn credentials_are_bounded_strings_never_shown() {
        let credentials = Credentials::from_json(&json!({"token": "Bearer s3cret"})).unwrap();
        assert_eq!(credentials.get("token"), Some("Bearer s3cret"));
        assert!(!format!("{credentials:?}").contains("s3cret"));
        assert!(Credentials::from_json(&json!({"token": 1})).is_err());
        assert!(Credentials::from_json(&json!(["x"])).is_err());
        let big = "x".repeat(MAX_CREDENTIAL_BYTES + 1);
        assert!(Credentials::from_json(&json!({ "token": big })).is_err());
    }
}
