//! `toolhost mcp` spoken to over its stdin and stdout, one JSON-RPC message
//! a line, the way an MCP client runs it.

use std::io::{BufRead as _, BufReader, Lines, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

use serde_json::{Value, json};

/// A running `toolhost mcp` (its stderr discarded).
pub struct StdioMcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl StdioMcp {
    /// `toolhost mcp <args> --dir <dir>`, initialized (2025-11-25).
    pub fn start(args: &[&str], dir: &Path) -> Self {
        let mut mcp = Self::spawn(args, dir);
        mcp.exchange(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        );
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    /// `toolhost mcp <args> --dir <dir>`, as a 2026-07-28 client finds it:
    /// no `initialize` sent.
    pub fn spawn(args: &[&str], dir: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("mcp")
            .args(args)
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run toolhost mcp");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// Write `message` without waiting for an answer.
    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next message the server writes.
    pub fn next(&mut self) -> Value {
        let line = self.lines.next().expect("a line").expect("utf-8");
        serde_json::from_str(&line).expect("JSON-RPC")
    }

    /// Send `message` and, when it is a request (has an `id`), its answer;
    /// `Null` for a notification.
    pub fn exchange(&mut self, message: Value) -> Value {
        let request = message.get("id").is_some();
        self.send(message);
        if request { self.next() } else { Value::Null }
    }

    /// Close stdin and wait for the server to exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("exit")
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
