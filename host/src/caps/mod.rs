//! One module per capability a sandbox may be granted.
//!
//! Each has the same shape: a context built from the tool's grant and the
//! call's effect, the host side of its interfaces, and an `add_to_linker`.
//! The grant is checked inside the host function; a refusal is an error the
//! guest sees (`access-denied`, `HTTP-request-denied`), never a trap.
//! `wasi:sockets` is linked (toolchains import it) and always denied: see
//! [`workspace::WasiSetup`].

pub mod http;
pub mod kv;
pub mod log;
pub mod stdio;
pub mod workspace;
