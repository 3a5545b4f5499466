//! Approval of `always_ask` calls over MCP: the client's user is asked by
//! elicitation (from 2026-07-28 as an input-required round); a client that
//! cannot elicit gets the call refused (never approved silently).

use futures::future::BoxFuture;

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use serde_json::{Value, json};

use toolhost::call::{ApprovalDecision, ApprovalRequest, Approver};

/// How to approve when the client cannot be asked.
pub const HOW_TO_APPROVE: &str = "this MCP client cannot ask its user (it did not declare \
    elicitation support); approve the call through toolhost's HTTP API (`POST …/approvals/<callId>`), \
    or let the operator set `permission = \"always_allow\"` for the tool in toolhost.toml";

/// Asks the MCP client's user to approve each call.
pub struct ElicitApprover {
    /// How the client is asked.
    pub via: super::rounds::Via,
    /// Whether the client declared elicitation support.
    pub can_elicit: bool,
    /// The client's name, to name who decided.
    pub client: String,
}

impl Approver for ElicitApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if !self.can_elicit {
                return ApprovalDecision::Unavailable {
                    how: HOW_TO_APPROVE.into(),
                };
            }
            let Ok(schema) = ElicitationSchema::from_json_schema(schema()) else {
                return ApprovalDecision::Unavailable {
                    how: "the approval form could not be built".into(),
                };
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!(
                    "Allow tool `{}` ({} effect) to run with this input?\n{}",
                    request.tool_name,
                    serde_json::to_value(request.effect)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    serde_json::to_string_pretty(&request.input).unwrap_or_default()
                ),
                requested_schema: schema,
            };
            let by = json!({ "principal": format!("user of {}", self.client), "via": "mcp-elicitation" });
            request.waiting(None);
            match self.via.elicit(params).await {
                Ok(ElicitResult {
                    action: ElicitationAction::Accept,
                    content,
                    ..
                }) if approved(content.as_ref()) => ApprovalDecision::Approved { by },
                Ok(ElicitResult {
                    action: ElicitationAction::Accept,
                    ..
                }) => ApprovalDecision::Denied {
                    by,
                    reason: Some("not approved in the client".into()),
                },
                Ok(_) => ApprovalDecision::Denied {
                    by,
                    reason: Some("declined in the client".into()),
                },
                Err(e) => ApprovalDecision::Unavailable {
                    how: format!("the client could not be asked ({e}); {HOW_TO_APPROVE}"),
                },
            }
        })
    }
}

fn schema() -> rmcp::model::JsonObject {
    let value = json!({
        "type": "object",
        "properties": {
            "approve": { "type": "boolean", "title": "Approve", "description": "Run the call" }
        },
        "required": ["approve"]
    });
    match value {
        Value::Object(map) => map,
        _ => rmcp::model::JsonObject::new(),
    }
}

fn approved(content: Option<&Value>) -> bool {
    content
        .and_then(|c| c.get("approve"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}
