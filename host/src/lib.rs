//! toolhost runs agent tools — typed actions a model can call — as untrusted
//! WebAssembly components, each call in a fresh sandbox holding only what the
//! operator granted in `toolhost.toml`.
//!
//! Load a host directory (`toolhost.toml` plus a `tools/` folder of `.wasm`
//! components) and call a tool:
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolhost::{CallOptions, Host, Session};
//!
//! # async fn run() -> anyhow::Result<()> {
//! let host = Host::builder("examples").build().await?;
//! for failure in host.registry().failures() {
//!     eprintln!("not loaded: {failure}");
//! }
//! let session = Arc::new(Session::ephemeral()?);
//! let result = host
//!     .call("echo", serde_json::json!({"text": "hi"}), &CallOptions::new(session))
//!     .await?;
//! println!("{}", serde_json::to_string(&result)?);
//! # Ok(())
//! # }
//! ```
//!
//! Every surface (CLI, HTTP, MCP) goes through [`Host::call`]: see the
//! `call` module for the pipeline's steps.

#![warn(missing_docs)]

pub mod admission;
pub mod author;
#[allow(missing_docs)]
pub mod bindings;
pub mod call;
pub mod caps;
mod code;
mod compile_cache;
pub mod config;
pub mod engine;
pub mod error;
mod files;
pub mod host;
mod instance;
pub mod lint;
pub mod lock;
pub mod output;
pub mod plain;
pub mod registry;
pub mod reload;
pub mod serve;
pub mod session;
pub mod state;
mod tiering;
pub mod tool;
pub mod toolset;
pub mod usage;

pub use call::{
    ApprovalDecision, ApprovalRequest, Approver, CallInput, CallOptions, CallRef, CallResult,
    CallTrace, CustomToolRunner, CustomToolUse, NoApprover, NoCustomTools, PreApproved,
};
pub use config::Config;
pub use error::{CallError, InputError};
pub use host::{Host, HostBuilder};
pub use instance::Failure;
pub use output::{ContentBlock, ToolOutput};
pub use registry::{LoadFailure, Registry, Tool};
pub use session::{Session, SessionMode, SessionSpec, SessionStore};
pub use tool::{Effect, EffectDecl, ToolMetadata};
