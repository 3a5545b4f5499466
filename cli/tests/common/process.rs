//! `toolhost serve` as a child process on a free loopback port: what a
//! signal, a crash or a restart does is only seen from outside.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `toolhost serve`; killed (SIGKILL) when dropped.
pub struct Served {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    stderr: Arc<Mutex<String>>,
}

/// Start `toolhost serve --dir DIR` with `env`, and wait for its `serving` line.
pub fn serve(dir: &Path, env: &[(&str, &str)]) -> Served {
    serve_with(dir, env, |_| {})
}

/// [`serve`], with `tune` applied to the command first.
pub fn serve_with(dir: &Path, env: &[(&str, &str)], tune: impl FnOnce(&mut Command)) -> Served {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--dir"])
        .arg(dir)
        .envs(env.iter().copied())
        .stderr(Stdio::piped());
    tune(&mut command);
    let mut child = command.spawn().expect("run toolhost serve");
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut url = None;
    for line in lines.by_ref().map_while(Result::ok) {
        push(&stderr, &line);
        if line.contains("serving") {
            url = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("http://"))
                .and_then(|rest| rest.split('/').next())
                .map(|addr| format!("http://{addr}"));
            break;
        }
    }
    let Some(url) = url else {
        let _ = child.kill();
        panic!(
            "toolhost serve printed no address:\n{}",
            stderr.lock().unwrap()
        );
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn({
        let stderr = stderr.clone();
        move || lines.map_while(Result::ok).for_each(|l| push(&stderr, &l))
    });
    Served { child, url, stderr }
}

fn push(buffer: &Mutex<String>, line: &str) {
    let mut buffer = buffer.lock().unwrap();
    buffer.push_str(line);
    buffer.push('\n');
}

impl Served {
    /// The process id.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid fits i32")
    }

    /// Send `signal` (e.g. `libc::SIGTERM`).
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        let sent = unsafe { libc::kill(self.pid(), signal) };
        assert_eq!(sent, 0, "kill({}, {signal})", self.pid());
    }

    /// What the server printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Wait up to `limit` for the process to exit.
    pub fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// A field of `/proc/<pid>/status` in KiB (`"VmRSS"`).
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/<pid>/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/<pid>/status"))
    }

    /// How many file descriptors the process has open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .expect("read /proc/<pid>/fd")
            .count()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
