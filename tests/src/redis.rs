//! A real `redis-server` on a random loopback port, for the tests of the
//! Redis backend: started with every write on disk before its reply
//! (`appendonly yes`, `appendfsync always`), in its own temporary
//! directory, and killed when dropped.

use std::io::{self, BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The server binary, from Debian's `redis-server` package.
const REDIS_SERVER: &str = "redis-server";

/// A `redis-server` child process the test owns.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
    extra: Vec<String>,
}

impl RedisServer {
    /// Start a server, or `None` when `redis-server` is not installed.
    /// With `CI=true` a missing server fails the test instead: CI installs
    /// it (scripts/test), so its absence is a broken setup, not a skip.
    pub fn start() -> Option<Self> {
        Self::start_with(&[])
    }

    /// [`RedisServer::start`] with more `redis-server` arguments, which
    /// override the defaults (e.g. `["--appendfsync", "everysec"]`).
    pub fn start_with(extra: &[&str]) -> Option<Self> {
        if !installed() {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(
                !ci,
                "redis-server is not installed (scripts/test installs it: apt-get install redis-server)"
            );
            eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
            return None;
        }
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        let mut server = Self {
            child: None,
            port: free_port(),
            dir,
            extra: extra.iter().map(|a| a.to_string()).collect(),
        };
        server.spawn().expect("redis-server starts");
        Some(server)
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding its append-only file and log.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Kill it at once (SIGKILL): writes it acknowledged are on disk.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again on the same port and data, after [`RedisServer::kill`].
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        self.spawn()
    }

    /// Send one inline command and read the first line of its reply.
    pub fn command(&self, line: &str) -> io::Result<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(format!("{line}\r\n").as_bytes())?;
        let mut reply = String::new();
        BufReader::new(stream).read_line(&mut reply)?;
        Ok(reply.trim_end().to_string())
    }

    fn spawn(&mut self) -> io::Result<()> {
        let log: PathBuf = self.dir.path().join("redis.log");
        let child = Command::new(REDIS_SERVER)
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .args(["--save", "", "--protected-mode", "yes"])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.command("PING").is_ok_and(|reply| reply == "+PONG") {
                return Ok(());
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(io::Error::other(format!(
                    "redis-server on port {} did not answer PING; its log:\n{log}",
                    self.port
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether `redis-server` runs here.
fn installed() -> bool {
    Command::new(REDIS_SERVER)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
