//! Running the toolset's `bash`: the command in its sandbox over the
//! call's workspace, ended by the call's deadline (the tool's `timeout_ms`,
//! or the input's when shorter); its exit status and output returned, a
//! status other than 0 as an error result the model still reads, and a
//! limit that ended it named.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::context::{Call, Done};
use crate::bash::{Bash, Egress, Ended};
use crate::envelope::CallResult;
use crate::output::{ContentBlock, ToolOutput};
use crate::usage::{Limit, LimitHit, SandboxUsage};

impl Call<'_> {
    /// Run the call's command in `bash`'s sandbox over `workspace`.
    pub(super) async fn run_bash(
        &self,
        bash: &Bash,
        mut done: Done,
        workspace: Option<&Path>,
    ) -> CallResult {
        done.attempts = 1;
        let Some(workspace) = workspace else {
            return self.failed(
                done,
                "bash runs in a workspace, and this call has none",
                None,
            );
        };
        // Checked against the input schema already.
        let command = self.input["command"].as_str().unwrap_or_default();
        let limit = self.tool.policy().timeout;
        let timeout = self
            .input
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .map_or(limit, |asked| Duration::from_millis(asked).min(limit));
        // A session's calls share a shell; a call in a scratch workspace
        // (no session to return to) gets a fresh one.
        let shell = (!done.scratch_workspace).then(|| self.session.id());
        let restart = self.input.get("restart").and_then(Value::as_bool) == Some(true);
        // A way out only to what the toolset's `http` allow-list names.
        let allowed = &self.tool.policy().grants.http;
        let egress = (!allowed.is_empty()).then(|| Egress {
            allowed: Arc::clone(allowed),
            network: self.network.clone(),
            budget: self.http_budget.clone(),
        });
        let ran = bash.run(command, workspace, timeout, shell, restart, egress.as_ref());
        let ran = match ran.await {
            Ok(ran) => ran,
            Err(problem) => return self.failed(done, &problem, None),
        };
        self.meter.sandbox_used(SandboxUsage {
            cpu_us: ran.counted.map(|counted| counted.cpu_us),
            peak_memory_bytes: ran.counted.map(|counted| counted.peak_memory_bytes),
            peak_processes: ran.counted.and_then(|counted| counted.peak_processes),
            output_bytes: ran.output_bytes,
        });
        let code = match ran.ended {
            Ended::Exited(code) => code,
            Ended::TimedOut => return self.ended_by(bash, done, Limit::Timeout, timeout, &ran),
            Ended::OverLimit(limit) => return self.ended_by(bash, done, limit, timeout, &ran),
            Ended::Signalled(signal) => 128 + signal,
        };
        let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
        let mut text = stdout.clone();
        if !stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&stderr);
        }
        if let Ended::Signalled(signal) = ran.ended {
            text.push_str(&format!("\n[ended by signal {signal}]"));
        } else if code != 0 {
            text.push_str(&format!("\n[exit status {code}]"));
        }
        for refused in &ran.network_refused {
            text.push_str(&format!("\n[network: {refused}]"));
        }
        if ran.cut {
            text.push_str(&format!(
                "\n[output cut at {} KiB per stream]",
                crate::bash::OUTPUT_BYTES >> 10
            ));
        }
        let structured = json!({
            "exit_code": code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": ran.cut,
            "network_refused": ran.network_refused,
        });
        let output = ToolOutput {
            content: vec![ContentBlock::Text { text }],
            structured: Some(structured),
            is_error: code != 0,
        };
        if let Err(rejected) = self.within_output_cap(output.result_value().to_string().len()) {
            return self.rejected(done, rejected);
        }
        self.finish(done, output, None)
    }

    /// The call's result when `limit` ended its sandbox: an error naming
    /// the limit, with what the command wrote before it.
    fn ended_by(
        &self,
        bash: &Bash,
        done: Done,
        limit: Limit,
        timeout: Duration,
        ran: &crate::bash::Ran,
    ) -> CallResult {
        let mut message = bash.explain(limit, timeout);
        for (name, written) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
            if !written.is_empty() {
                message.push_str(&format!(
                    "\n[{name} before it]\n{}",
                    String::from_utf8_lossy(written).trim_end()
                ));
            }
        }
        let hit = LimitHit {
            name: limit,
            value: bash.bound(limit, timeout),
        };
        self.failed_at(done, &message, hit)
    }
}
