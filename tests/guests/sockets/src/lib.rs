//! Test guest: tries a raw TCP connection, which the sandbox always refuses.

use std::net::TcpStream;

use toolhost_sdk::prelude::*;

struct Sockets;

impl Tool for Sockets {
    type Input = NoInput;
    const DESCRIPTION: &'static str =
        "Tries to open a TCP connection to 127.0.0.1:80 and reports the outcome.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(match TcpStream::connect("127.0.0.1:80") {
            Ok(_) => "connected".into(),
            Err(err) => format!("error: {err}").into(),
        })
    }
}

export_tool!(Sockets);
