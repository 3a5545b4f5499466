//! Running one sandboxed command: bubblewrap started as the sandbox's
//! unprivileged uid under the call's process bounds, its output read up to
//! a cap, and the whole process tree ended at the deadline (killing
//! bubblewrap ends the sandbox's PID namespace, and every process in it).

use std::os::fd::AsRawFd as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::sandbox::{
    self, ENVIRONMENT_FD, FILE_BYTES, OPEN_FILES, SECCOMP_FD, STARTED_FD, STATE_FD, WORKSPACE_FD,
};
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
    /// What its shell left for the next call of the session (its working
    /// directory and exported variables, as shell code), when it left it
    /// whole.
    pub state: Option<Vec<u8>>,
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

/// One sandboxed command, and everything its sandbox is made of.
pub(super) struct Job<'a> {
    pub(super) settings: &'a BashSettings,
    pub(super) run_as: RunAs,
    /// The folder of the synthetic `passwd` and `group`.
    pub(super) etc: &'a Path,
    /// The compiled seccomp filter.
    pub(super) filter: &'a [u8],
    /// The workspace, an open directory.
    pub(super) workspace: &'a std::fs::File,
    pub(super) command: &'a str,
    /// What the shell starts from: the state an earlier call in the session
    /// left (shell code, run inside the sandbox only).
    pub(super) state: &'a [u8],
    pub(super) timeout: Duration,
    /// The most bytes kept of each output.
    pub(super) cap: usize,
}

/// Run the job's command with `/bin/bash` in its sandbox until it ends or
/// its timeout passes; each of its outputs kept up to the cap (the rest
/// read and dropped), and the state its shell left, when it left one.
pub(super) async fn run(job: Job<'_>) -> std::io::Result<Ran> {
    let mut bwrap = tokio::process::Command::new("bwrap");
    bwrap
        .args(sandbox::arguments(job.settings, job.etc, job.command))
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some((uid, gid)) = job.run_as.ids {
        // Started as root, std drops the supplementary groups too.
        bwrap.uid(uid).gid(gid);
    }
    let limits = Limits {
        memory: job.settings.memory_mb << 20,
        processes: job.settings.processes,
        cpu_seconds: sandbox::cpu_seconds(job.timeout),
    };
    let (started, started_writer) = std::io::pipe()?;
    // The filter and the shell's starting state are far smaller than a
    // pipe holds: written whole now.
    let seccomp = filled_pipe(job.filter)?;
    let environment = filled_pipe(&sandbox::environment(job.state))?;
    let (state, state_writer) = std::io::pipe()?;
    let fds = Fds {
        workspace: job.workspace.as_raw_fd(),
        started: started_writer.as_raw_fd(),
        seccomp: seccomp.as_raw_fd(),
        environment: environment.as_raw_fd(),
        state: state_writer.as_raw_fd(),
    };
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (fcntl, dup2, setrlimit, prctl), on values computed before the fork.
    unsafe {
        bwrap.pre_exec(move || limits.apply(fds));
    }
    let mut child = bwrap.spawn()?;
    // Only the sandbox holds these now.
    drop((started_writer, seccomp, environment, state_writer));
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let state = tokio::net::unix::pipe::Receiver::from_owned_fd(state.into())?;
    let finished = {
        let waiting = async {
            let ((stdout, out_cut), (stderr, err_cut), (state, state_cut)) = tokio::join!(
                read_capped(stdout, job.cap),
                read_capped(stderr, job.cap),
                read_capped(Some(state), sandbox::STATE_BYTES),
            );
            let status = child.wait().await;
            let state = (!state_cut && !state.is_empty()).then_some(state);
            (status, stdout, stderr, out_cut || err_cut, state)
        };
        tokio::time::timeout(job.timeout, waiting).await
    };
    let Ok((status, stdout, stderr, cut, state)) = finished else {
        // Killing bubblewrap takes the sandbox's PID namespace down with
        // it; the call answers once it is gone.
        child.kill().await?;
        return Ok(Ran {
            ended: Ended::TimedOut,
            stdout: Vec::new(),
            stderr: Vec::new(),
            cut: false,
            started: true,
            state: None,
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
        state,
    })
}

/// A pipe holding `bytes` and closed for writing: its reading end.
fn filled_pipe(bytes: &[u8]) -> std::io::Result<std::io::PipeReader> {
    let (reader, mut writer) = std::io::pipe()?;
    std::io::Write::write_all(&mut writer, bytes)?;
    Ok(reader)
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
    environment: i32,
    state: i32,
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
    /// started pipe on [`STARTED_FD`], the filter on [`SECCOMP_FD`], the
    /// shell's environment on [`ENVIRONMENT_FD`] and its state's pipe on
    /// [`STATE_FD`], the bounds set, and no new privileges ever (no setuid
    /// program raises them).
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
            let placed = [
                (moved(fds.workspace)?, WORKSPACE_FD),
                (moved(fds.started)?, STARTED_FD),
                (moved(fds.seccomp)?, SECCOMP_FD),
                (moved(fds.environment)?, ENVIRONMENT_FD),
                (moved(fds.state)?, STATE_FD),
            ];
            for (source, target) in placed {
                check(libc::dup2(source, target))?;
            }
            // Nothing else of the host's passes into the sandbox: every
            // other descriptor this process holds is closed.
            let from = libc::c_uint::try_from(STATE_FD.max(ENVIRONMENT_FD) + 1).unwrap_or(8);
            check(libc::syscall(libc::SYS_close_range, from, libc::c_uint::MAX, 0) as libc::c_int)?;
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
