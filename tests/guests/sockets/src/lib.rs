//! Test guest: tries a raw TCP connection, which the sandbox always refuses.

use std::net::TcpStream;

use toolhost_sdk::prelude::*;

/// Where to connect.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// A `host:port` to connect to (default `127.0.0.1:80`).
    #[serde(default = "default_addr")]
    addr: String,
}

fn default_addr() -> String {
    "127.0.0.1:80".to_string()
}

struct Sockets;

impl Tool for Sockets {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Tries to open a TCP connection to `addr` and reports the outcome.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(match TcpStream::connect(input.addr.as_str()) {
            Ok(_) => "connected".into(),
            Err(err) => format!("error: {err}").into(),
        })
    }
}

export_tool!(Sockets);
