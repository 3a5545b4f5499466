//! toolhost's network surfaces, each a thin layer over
//! [`toolhost::Host::call`]: the HTTP API with its approval board
//! ([`http`]), MCP on stdio and streamable HTTP ([`mcp`]), the Prometheus
//! metrics both expose ([`metrics`]) and their OpenTelemetry export
//! ([`telemetry`]). The core below knows no transport.

pub mod http;
pub mod mcp;
pub mod metrics;
pub mod telemetry;
