//! How a call's outcome becomes its envelope: the output accepted or
//! rejected against the caps, the limit that ended it recorded in the
//! receipt, and the trace collected.

use super::context::{Call, Done};
use crate::bindings::types;
use crate::caps::progress::MAX_PROGRESS_REPORTS;
use crate::envelope::{CallResult, CallTrace};
use crate::output::ToolOutput;
use crate::usage::{Limit, LimitHit};

impl Call<'_> {
    /// Convert a guest's output, enforcing the output cap before parsing it.
    pub(super) fn checked(&self, out: types::ToolOutput) -> Result<ToolOutput, Rejected> {
        self.within_output_cap(ToolOutput::guest_size(&out))?;
        ToolOutput::check_guest_shape(&out).map_err(|problem| Rejected {
            problem: format!("output cap hit: {problem}"),
            limit: Some(Limit::Output),
        })?;
        ToolOutput::from_guest(out).map_err(|problem| Rejected {
            problem: format!("the tool {problem}"),
            limit: None,
        })
    }

    pub(super) fn within_output_cap(&self, size: usize) -> Result<(), Rejected> {
        self.meter.output(size);
        let cap = self.tool.policy().limits.output_bytes;
        if size > cap {
            return Err(Rejected {
                problem: format!(
                    "output cap hit: the result is {size} bytes; at most {cap} are allowed (max_output_bytes)"
                ),
                limit: Some(Limit::Output),
            });
        }
        Ok(())
    }

    /// The result of a call whose output was not accepted.
    pub(super) fn rejected(&self, done: Done, rejected: Rejected) -> CallResult {
        self.failed(done, &rejected.problem, rejected.limit)
    }

    /// The result of a call that ended in a limit, trap or bad output.
    pub(super) fn failed(&self, done: Done, message: &str, limit: Option<Limit>) -> CallResult {
        let message = format!("tool `{}` failed: {message}", self.tool.name());
        let output = ToolOutput::text(message.clone(), true);
        if let Some(limit) = limit
            && let Some(value) = self.limit_value(limit)
        {
            self.meter.hit(limit, value);
        }
        let mut result = self.finish(done, output, Some(message));
        result.trace.limit = limit;
        result
    }

    pub(super) fn finish(
        &self,
        done: Done,
        output: ToolOutput,
        failure: Option<String>,
    ) -> CallResult {
        let progress_dropped = self.progress.dropped();
        if progress_dropped > 0 {
            self.trace.host(format!(
                "{progress_dropped} progress reports dropped: not growing, not a finite \
                 number of at least 0, or past {MAX_PROGRESS_REPORTS} a call"
            ));
        }
        let (logs, logs_dropped) = self.trace.snapshot();
        let (stdout, stdout_truncated) = self.stdout.contents();
        let (stderr, stderr_truncated) = self.stderr.contents();
        let wall = self.started.elapsed();
        CallResult {
            ok: true,
            call: self.reference(),
            is_error: output.is_error,
            result: output.result_value(),
            duration_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
            stubbed: done.stubbed,
            attempts: done.attempts,
            scratch_workspace: done.scratch_workspace,
            output,
            usage: self
                .meter
                .usage(wall, done.attempts, self.http_budget.tally()),
            trace: CallTrace {
                session_id: self.session.id().to_string(),
                effect: done.effect,
                approved_by: done.approved_by,
                logs,
                logs_dropped,
                stdout,
                stdout_truncated,
                stderr,
                stderr_truncated,
                failure,
                limit: None,
            },
        }
    }

    /// Like [`Call::failed`], for a limit whose value the failure knows
    /// (an OS sandbox's).
    pub(super) fn failed_at(&self, done: Done, message: &str, hit: LimitHit) -> CallResult {
        self.meter.hit(hit.name, hit.value);
        self.failed(done, message, Some(hit.name))
    }

    /// The configured value of `limit` for this call, as the receipt
    /// reports it; `None` for an OS sandbox's limits, which
    /// [`Call::failed_at`] records with theirs.
    fn limit_value(&self, limit: Limit) -> Option<u64> {
        let policy = self.tool.policy();
        let bytes = |n: usize| Some(n as u64);
        match limit {
            Limit::Timeout => Some(u64::try_from(policy.timeout.as_millis()).unwrap_or(u64::MAX)),
            Limit::Memory => bytes(policy.memory_bytes),
            Limit::HostMemory => bytes(policy.limits.host.bytes),
            Limit::Handles => Some(u64::from(policy.limits.host.handles)),
            Limit::OpenFiles => Some(u64::from(self.host.file_slots().cap())),
            Limit::Output => bytes(policy.limits.output_bytes),
            Limit::Stack => bytes(crate::sandbox::engine::MAX_WASM_STACK_BYTES),
            Limit::Cpu | Limit::Processes | Limit::FileSize => None,
        }
    }
}

/// Why a tool's output was not accepted, and which limit that was, if one.
pub(super) struct Rejected {
    pub(super) problem: String,
    pub(super) limit: Option<Limit>,
}

impl Rejected {
    /// The same rejection, said to be about `what`.
    pub(super) fn context(self, what: &str) -> Self {
        Self {
            problem: format!("{what}: {}", self.problem),
            ..self
        }
    }
}
