//! Fuzz targets for toolhost, and a runner that drives them on stable Rust.
//!
//! Each target is a library function taking arbitrary bytes and panicking
//! only when toolhost breaks one of its promises (a panic, a hang, a
//! malformed answer, a host that stops answering):
//!
//! | target | what the bytes are |
//! |---|---|
//! | [`targets::tool_input`] | `<tool>\n<JSON>`: a call's input against the example tools' schemas |
//! | [`targets::config`] | a `toolhost.toml` |
//! | [`targets::http_request`] | HTTP requests to the API's router, driven in-process |
//! | [`targets::mcp_message`] | JSON-RPC lines to the MCP server over an in-memory pipe |
//! | [`targets::component`] | a `.wasm` file loaded as a tool |
//!
//! Two drivers call them: `cargo fuzz` (nightly, coverage-guided; the
//! entry points are in `fuzz_targets/`) and [`runner`], which mutates the
//! seed corpus in `corpus/<target>/` for a bounded time on stable Rust
//! (`cargo test -p toolhost-fuzz`, or the `toolhost-fuzz` binary). A crash
//! becomes a file in `regressions/<target>/`, replayed by every test run.

#![warn(missing_docs)]

pub mod corpus;
pub mod fixture;
pub mod mutate;
pub mod panics;
pub mod runner;
pub mod targets;
