//! The host's integration tests, as one test binary (wasmtime's
//! `tests/all` pattern): each module is one area, and the host links once.
//! `bounds`, `soak` and `crash` stay binaries of their own: `bounds`
//! measures this process's memory, and `soak` and `crash` are run alone in
//! release builds (README, "Reliability").

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

#[path = "../common/mod.rs"]
mod common;

mod agents;
mod artifacts;
mod ask;
mod ask_all;
mod author;
mod bash;
mod cli;
mod conformance;
mod console;
mod contract;
mod http;
mod lock;
mod mcp;
mod mcp_2026;
mod messages;
mod oci;
mod pipeline;
mod plain;
mod polyglot;
mod principals;
mod registry;
mod reminders;
mod sandbox;
mod serve;
mod telemetry;
mod toolset;
mod upstream;
