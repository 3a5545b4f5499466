//! Running an MCP server's tool: the call's input sent to the server as
//! `tools/call`, under the call's deadline, retried as the SDK page's MCP
//! rule allows (a read or idempotent tool, a failure that may pass: the
//! server gone or restarting, or an error it answered), and its result
//! checked against the output cap like a component's.

use std::any::Any;
use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::Value;

use super::context::{Call, Done};
use super::execute::MAX_ATTEMPTS;
use crate::envelope::CallResult;
use crate::output::mcp::tool_output;
use crate::session::Session;
use crate::tool::Effect;
use crate::upstream::{Holder, Upstream, UpstreamError};
use crate::usage::Limit;

impl Call<'_> {
    /// Call the tool on `server`; dropping the future cancels the request
    /// there.
    pub(super) async fn call_upstream(
        &self,
        server: &Arc<Upstream>,
        mut done: Done,
        session: &Arc<Session>,
    ) -> CallResult {
        let effect = done.effect.unwrap_or(Effect::Write);
        let max_attempts = if effect.is_retryable() {
            MAX_ATTEMPTS
        } else {
            1
        };
        let timeout = self.tool.policy().timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let arguments = match &*self.input {
            Value::Object(map) => map.clone(),
            _ => JsonObject::new(),
        };
        let server_name = &server.spec().name;
        let credentials = match server.credentials(&self.session.credentials()) {
            Ok(credentials) => credentials,
            Err(problem) => {
                return self.failed(
                    done,
                    &format!("MCP server `{server_name}`: {problem}"),
                    None,
                );
            }
        };
        // The session keeps a connection with its credentials open.
        let session: Arc<dyn Any + Send + Sync> = session.clone();
        let holder: Holder = Arc::downgrade(&session);
        loop {
            done.attempts += 1;
            let call = server.call_tool(self.tool.name(), arguments.clone(), &credentials, &holder);
            let answer = match tokio::time::timeout_at(deadline, call).await {
                Ok(answer) => answer,
                Err(_) => {
                    let message = format!(
                        "the MCP server `{server_name}` did not answer within {} ms (timeout_ms); \
                         the request was cancelled there",
                        timeout.as_millis()
                    );
                    return self.failed(done, &message, Some(Limit::Timeout));
                }
            };
            let result = match answer {
                Ok(result) => result,
                Err(UpstreamError::Unreachable(reason))
                    if done.attempts < max_attempts && tokio::time::Instant::now() < deadline =>
                {
                    self.trace.host(format!(
                        "attempt {} failed transiently: MCP server `{server_name}`: {reason}; \
                         retrying",
                        done.attempts
                    ));
                    continue;
                }
                Err(error) => {
                    return self.failed(
                        done,
                        &format!("MCP server `{server_name}`: {error}"),
                        None,
                    );
                }
            };
            let size = serde_json::to_vec(&result).map_or(usize::MAX, |bytes| bytes.len());
            if let Err(rejected) = self.within_output_cap(size) {
                return self.rejected(done, rejected);
            }
            return match tool_output(result) {
                Ok(output) => self.finish(done, output, None),
                Err(problem) => self.failed(
                    done,
                    &format!("the MCP server `{server_name}` returned a result toolhost cannot read: {problem}"),
                    None,
                ),
            };
        }
    }
}
