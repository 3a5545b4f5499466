//! Running the toolset's `bash`: the command in its sandbox over the
//! call's workspace, ended by the call's deadline (the tool's `timeout_ms`,
//! or the input's when shorter); its exit status and output returned, a
//! status other than 0 as an error result the model still reads, and a
//! limit that ended it named.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::context::{Call, Done};
use crate::bash::{Bash, Ended};
use crate::envelope::CallResult;
use crate::output::{ContentBlock, ToolOutput};
use crate::usage::Limit;

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
        let ran = match bash.run(command, workspace, timeout, shell, restart).await {
            Ok(ran) => ran,
            Err(problem) => return self.failed(done, &problem, None),
        };
        let code = match ran.ended {
            Ended::Exited(code) => code,
            Ended::TimedOut => {
                let message = format!(
                    "the command ran past {} ms (timeout_ms): it and every process it started \
                     were ended",
                    timeout.as_millis()
                );
                return self.failed(done, &message, Some(Limit::Timeout));
            }
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
            text.push_str(&format!("\n[{}]", signal_meaning(signal)));
        } else if code != 0 {
            text.push_str(&format!("\n[exit status {code}]"));
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
}

/// What ended a process killed by `signal`, named for the model: the
/// sandbox's bounds end a command with these.
fn signal_meaning(signal: i32) -> String {
    match signal {
        libc::SIGXCPU => "ended: it used more CPU time than the call allows".into(),
        libc::SIGXFSZ => "ended: it wrote a file larger than 1 GiB".into(),
        libc::SIGKILL => "killed (SIGKILL)".into(),
        libc::SIGSEGV => "crashed (SIGSEGV)".into(),
        other => format!("ended by signal {other}"),
    }
}
