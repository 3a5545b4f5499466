//! A stdio MCP server's process: started with a clean environment, its
//! stdin and stdout the MCP transport, its stderr copied to the host log
//! line by line (never to the host's own stdout, which may be `toolhost
//! mcp`'s transport), killed when dropped.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The host's environment variables a server inherits; `env` adds to them.
pub const INHERITED_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"];
/// The longest MCP message a server may send, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The longest stderr line logged; the rest of a longer one is cut.
const MAX_LOG_LINE: usize = 4096;
/// How long a server has to exit after its stdin closes before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A started server process.
pub(super) struct Process {
    child: Child,
}

/// The MCP transport over a server's stdout and stdin.
pub(super) type Transport = AsyncRwTransport<RoleClient, ChildStdout, ChildStdin>;

/// Start `command` with `args` in `cwd`, with the inherited variables and `env`.
pub(super) fn spawn(
    server: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<(Process, Transport), String> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(env);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{command}` in {}: {e}", cwd.display()))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("`{command}` started without its pipes"));
    };
    tokio::spawn(log_stderr(server.to_string(), stderr));
    let transport =
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_MESSAGE_BYTES);
    Ok((Process { child }, transport))
}

impl Process {
    /// Whether it has not exited.
    pub(super) fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// How it ended, in words ("exited with status 1"), once it has; it is
    /// killed if it still runs.
    pub(super) async fn ended(&mut self) -> String {
        let status = match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                let _ = self.child.kill().await;
                return "closed its connection and was killed".to_string();
            }
        };
        match status {
            Ok(status) => format!("exited ({status})"),
            Err(e) => format!("ended, and its status cannot be read: {e}"),
        }
    }

    /// Let it exit on its own (its stdin is closed by now), then kill it.
    pub(super) async fn stop(&mut self) {
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Copy a server's stderr to the host log, one line per record, each cut
/// at [`MAX_LOG_LINE`] bytes.
async fn log_stderr(server: String, mut stderr: tokio::process::ChildStderr) {
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    let emit = |line: &mut Vec<u8>| {
        if !line.is_empty() {
            tracing::info!(target: "toolhost::upstream", "MCP server `{server}`: {}", String::from_utf8_lossy(line).trim_end());
            line.clear();
        }
    };
    loop {
        let read = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for &byte in &chunk[..read] {
            if byte == b'\n' {
                emit(&mut line);
            } else if line.len() < MAX_LOG_LINE {
                line.push(byte);
            }
        }
    }
    emit(&mut line);
}
