//! The call pipeline: the one function every surface calls, [`Host::call`](crate::Host::call).
//!
//! resolve → validate input → `asOf` time bounds → effect → approval →
//! dry-run stub → session write slot → run in a fresh sandbox → retries →
//! envelope → trace events (docs/ARCHITECTURE.md places it among the parts).
//!
//! - [`api`]: what a surface passes in (input, options, approver, custom tools);
//! - the envelope (`crate::envelope`, re-exported here): what a call leaves
//!   behind (result, trace, event payloads);
//! - `input`: the input's checks; `context`: what a call's stages share;
//!   `pipeline`: the stages; `workspace`: the call's workspace; `execute`:
//!   running the tool with retries; `upstream`: running an MCP server's
//!   tool instead, with the same retry rule; `watch`: what a running call reports
//!   (progress events); `outcome`: turning what happened into the envelope;
//!   `prompt` and `resource`: prompt and resource requests, which run a
//!   tool's component like a call, in the instance `offer` makes;
//!   `reminder`: firing the reminders tools scheduled.

pub mod api;
mod bash;
mod context;
mod execute;
mod input;
mod offer;
mod outcome;
mod pipeline;
mod plain;
mod prompt;
mod reminder;
mod resource;
mod upstream;
mod watch;
mod workspace;

pub use crate::envelope::{
    CallProgress, CallRef, CallRefused, CallRequested, CallResult, CallTrace,
};
pub use crate::host::calls::CallObserver;
pub use crate::host::calls::reminder_limits;
pub use api::{
    ApprovalDecision, ApprovalRequest, Approver, CallInput, CallOptions, CustomToolRunner,
    CustomToolUse, NoApprover, NoCustomTools, PreApproved, new_call_id,
};
pub use execute::MAX_ATTEMPTS;
pub use pipeline::STUB_TEXT;
pub use reminder::{ReminderCalls, UnattendedReminderCalls};
