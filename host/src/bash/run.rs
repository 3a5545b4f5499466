//! Running one sandboxed command: bubblewrap started as the sandbox's
//! unprivileged uid under the call's process bounds, its output read up to
//! a cap, and the whole process tree ended at the deadline (killing
//! bubblewrap ends the sandbox's PID namespace, and every process in it).

use std::os::fd::AsRawFd as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::sandbox::{self, FILE_BYTES, OPEN_FILES, SECCOMP_FD, STARTED_FD, WORKSPACE_FD};
use crate::config::toolset::BashSettings;

/// How a sandboxed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (a limit, e.g. `SIGXCPU` for CPU time, `SIGXFSZ`
    /// for a file too large, or `SIGKILL` for memory).
    Signalled(i32),
    /// The call's deadline ended it.
    TimedOut,
}

/// What a sandboxed command did.
#[derive(Debug)]
pub struct Ran {
    /// How it ended.
    pub ended: Ended,
    /// Its standard output, up to the cap.
    pub stdout: Vec<u8>,
    /// Its standard error, up to the cap.
    pub stderr: Vec<u8>,
    /// Whether either was cut at the cap.
    pub cut: bool,
    /// Whether bubblewrap set the sandbox up and started the command (when
    /// not, the command never ran, and may be tried again).
    pub started: bool,
}

/// Who the sandbox runs as on the host: an unprivileged uid and gid when
/// the host runs as root, the host's own user otherwise.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunAs {
    pub(super) ids: Option<(u32, u32)>,
}

impl RunAs {
    /// The sandbox's user under `settings` for a host running as `euid`.
    pub(super) fn for_host(settings: &BashSettings, euid: u32) -> Self {
        Self {
            ids: (euid == 0).then_some((settings.uid, settings.gid)),
        }
    }
}

/// Run `command` with `/bin/bash` in a sandbox over `workspace` (an open
/// directory) under the seccomp `filter`, until it ends or `timeout`
/// passes; each of its outputs kept up to `cap` bytes (the rest read and
/// dropped).
#[expect(clippy::too_many_arguments, reason = "each is one part of the sandbox")]
pub(super) async fn run(
    settings: &BashSettings,
    run_as: RunAs,
    etc: &Path,
    filter: &[u8],
    workspace: &std::fs::File,
    command: &str,
    timeout: Duration,
    cap: usize,
) -> std::io::Result<Ran> {
    let mut bwrap = tokio::process::Command::new("bwrap");
    bwrap
        .args(sandbox::arguments(settings, etc, command))
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some((uid, gid)) = run_as.ids {
        // Started as root, std drops the supplementary groups too.
        bwrap.uid(uid).gid(gid);
    }
    let limits = Limits {
        memory: settings.memory_mb << 20,
        processes: settings.processes,
        cpu_seconds: sandbox::cpu_seconds(timeout),
    };
    let (started, started_writer) = std::io::pipe()?;
    // The filter is far smaller than a pipe holds: written whole now.
    let (seccomp, mut seccomp_writer) = std::io::pipe()?;
    std::io::Write::write_all(&mut seccomp_writer, filter)?;
    drop(seccomp_writer);
    let fds = Fds {
        workspace: workspace.as_raw_fd(),
        started: started_writer.as_raw_fd(),
        seccomp: seccomp.as_raw_fd(),
    };
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (dup2, setrlimit, prctl), on values computed before the fork.
    unsafe {
        bwrap.pre_exec(move || limits.apply(fds));
    }
    let mut child = bwrap.spawn()?;
    // Only the sandbox writes there now: it says when it is up.
    drop(started_writer);
    drop(seccomp);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let finished = {
        let waiting = async {
            let ((stdout, out_cut), (stderr, err_cut)) =
                tokio::join!(read_capped(stdout, cap), read_capped(stderr, cap));
            let status = child.wait().await;
            (status, stdout, stderr, out_cut || err_cut)
        };
        tokio::time::timeout(timeout, waiting).await
    };
    let Ok((status, stdout, stderr, cut)) = finished else {
        // Killing bubblewrap takes the sandbox's PID namespace down with
        // it; the call answers once it is gone.
        child.kill().await?;
        return Ok(Ran {
            ended: Ended::TimedOut,
            stdout: Vec::new(),
            stderr: Vec::new(),
            cut: false,
            started: true,
        });
    };
    let status = status?;
    let ended = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(signal)) => Ended::Signalled(signal),
        (None, None) => Ended::Exited(-1),
    };
    Ok(Ran {
        ended,
        stdout,
        stderr,
        cut,
        started: said_started(started),
    })
}

/// Whether the sandbox said on `started` that it was set up, read without
/// waiting.
fn said_started(started: std::io::PipeReader) -> bool {
    let fd = started.as_raw_fd();
    let mut byte = [0u8; 1];
    // SAFETY: plain calls on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        libc::read(fd, byte.as_mut_ptr().cast(), 1) == 1
    }
}

/// The lowest descriptor the sources are moved to before they are put in
/// place: above every target.
const FIRST_FREE_FD: i32 = 16;

/// The descriptors bubblewrap is handed, as the parent holds them.
#[derive(Clone, Copy)]
struct Fds {
    workspace: i32,
    started: i32,
    seccomp: i32,
}

/// The process bounds the sandbox runs under, inherited by every process
/// in it.
#[derive(Clone, Copy)]
struct Limits {
    memory: u64,
    processes: u64,
    cpu_seconds: u64,
}

impl Limits {
    /// In the child, before exec: the workspace on [`WORKSPACE_FD`], the
    /// started pipe on [`STARTED_FD`] and the filter on [`SECCOMP_FD`], the
    /// bounds set, and no new privileges ever (no setuid program raises
    /// them).
    fn apply(self, fds: Fds) -> std::io::Result<()> {
        let check = |result: libc::c_int| {
            if result == -1 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(())
            }
        };
        // SAFETY: plain system calls on integers.
        unsafe {
            // Each moved above the targets first: a source may be one of
            // them already (dup2 onto itself would keep it close-on-exec)
            // or be overwritten by an earlier dup2.
            let moved = |fd: i32| {
                let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, FIRST_FREE_FD);
                if high == -1 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(high)
                }
            };
            let (workspace, started, seccomp) = (
                moved(fds.workspace)?,
                moved(fds.started)?,
                moved(fds.seccomp)?,
            );
            check(libc::dup2(workspace, WORKSPACE_FD))?;
            check(libc::dup2(started, STARTED_FD))?;
            check(libc::dup2(seccomp, SECCOMP_FD))?;
            for (resource, value) in [
                (libc::RLIMIT_AS, self.memory),
                (libc::RLIMIT_NPROC, self.processes),
                (libc::RLIMIT_CPU, self.cpu_seconds),
                (libc::RLIMIT_FSIZE, FILE_BYTES),
                (libc::RLIMIT_NOFILE, OPEN_FILES),
                (libc::RLIMIT_CORE, 0),
            ] {
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        }
        Ok(())
    }
}

/// Everything `pipe` gives until it closes, the first `cap` bytes kept;
/// whether more came.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buffer = [0u8; 8192];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return (kept, cut),
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
                cut |= n > room;
            }
        }
    }
}
