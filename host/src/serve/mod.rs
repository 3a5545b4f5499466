//! The surfaces that bring calls in. Each is a thin layer over [`crate::Host::call`].

pub mod cli;
pub mod client;
pub mod http;
pub mod mcp;
pub mod metrics;
