//! Running one sandboxed command: bubblewrap started as the sandbox's
//! unprivileged uid under the call's process bounds, its output read up to
//! a cap, and the whole process tree ended at the deadline (killing
//! bubblewrap ends the sandbox's PID namespace, and every process in it).

use std::os::fd::AsRawFd as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::cgroup::{CallGroups, Counted};
use super::proxy::{self, Egress, Refusals};
use super::sandbox::{
    self, BLOCK_FD, ENVIRONMENT_FD, INFO_FD, OPEN_FILES, SECCOMP_FD, STARTED_FD, STATE_FD,
    WORKSPACE_FD,
};
use super::spawn;
use crate::config::toolset::BashSettings;
use crate::usage::Limit;

/// How a sandboxed command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// The call's deadline ended it.
    TimedOut,
    /// It met one of the sandbox's bounds (memory, processes, CPU time, or
    /// file size), and was ended for it.
    OverLimit(Limit),
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
    /// Bytes written to both, kept or not.
    pub output_bytes: u64,
    /// What its processes used, where control groups counted it.
    pub counted: Option<Counted>,
    /// What its way out refused it, or why it had none though the
    /// allow-list names one.
    pub network_refused: Vec<String>,
    /// Whether bubblewrap set the sandbox up and started the command (when
    /// not, the command never ran, and may be tried again).
    pub started: bool,
    /// What its shell left for the next call of the session (its working
    /// directory and exported variables, as shell code), when it left it
    /// whole and was not ended.
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
    /// The CPU time its processes may use together.
    pub(super) cpu: Duration,
    /// The control groups that bound and count its processes together,
    /// where the host has them.
    pub(super) groups: Option<&'a CallGroups>,
    /// Where its processes may connect through the host's proxy, if
    /// anywhere.
    pub(super) egress: Option<&'a Egress>,
    /// The most bytes kept of each output.
    pub(super) cap: usize,
}

/// How often a running sandbox's control groups are read for a limit met.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// How long an ended sandbox's last output is read for, once its
/// processes were killed.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// The most processes the sandbox's uid may run at once on the host when
/// each call's are counted in a control group of its own: the rlimit then
/// only keeps every call together in check.
const PROCESSES_PER_UID: u64 = 16_384;

/// Run the job's command with `/bin/bash` in its sandbox until it ends, its
/// timeout passes or it meets a limit; each of its outputs kept up to the
/// cap (the rest read and dropped), and the state its shell left, when it
/// left one.
pub(super) async fn run(job: Job<'_>) -> std::io::Result<Ran> {
    let deadline = tokio::time::Instant::now() + job.timeout;
    let arguments = sandbox::arguments(job.settings, job.etc, job.command, job.egress.is_some());
    // Grouped, the processes are bounded in memory together; otherwise
    // each in the address space it may map.
    let limits = Limits {
        memory: job.groups.is_none().then_some(job.settings.memory_mb << 20),
        processes: match job.groups {
            Some(_) => PROCESSES_PER_UID,
            None => job.settings.processes,
        },
        cpu_seconds: job.cpu.as_secs() + 1,
        file_bytes: job.settings.file_mb << 20,
        joins: job.groups.map(CallGroups::join_fds),
    };
    let nothing = std::fs::File::open("/dev/null")?;
    let (stdout, stdout_writer) = std::io::pipe()?;
    let (stderr, stderr_writer) = std::io::pipe()?;
    let (started, started_writer) = std::io::pipe()?;
    // The filter and the shell's starting state are far smaller than a
    // pipe holds: written whole now.
    let seccomp = filled_pipe(job.filter)?;
    let environment = filled_pipe(&sandbox::environment(job.state))?;
    let (state, state_writer) = std::io::pipe()?;
    let doors = match job.egress {
        Some(_) => Some((std::io::pipe()?, std::io::pipe()?)),
        None => None,
    };
    let fds = Fds {
        stdio: [
            nothing.as_raw_fd(),
            stdout_writer.as_raw_fd(),
            stderr_writer.as_raw_fd(),
        ],
        workspace: job.workspace.as_raw_fd(),
        started: started_writer.as_raw_fd(),
        seccomp: seccomp.as_raw_fd(),
        environment: environment.as_raw_fd(),
        state: state_writer.as_raw_fd(),
        proxied: doors
            .as_ref()
            .map(|((_, info), (block, _))| (info.as_raw_fd(), block.as_raw_fd())),
    };
    let mut child = spawn::start(
        &spawn::find("bwrap")?,
        &arguments,
        job.run_as.ids,
        move || limits.apply(fds),
    )?;
    let pid = child.id();
    // Only the sandbox holds these now.
    drop((
        nothing,
        stdout_writer,
        stderr_writer,
        started_writer,
        seccomp,
        environment,
        state_writer,
    ));
    let refusals = Arc::new(Refusals::default());
    let _proxy = match (doors, job.egress) {
        (Some(((info, info_writer), (block, block_writer))), Some(egress)) => {
            drop((info_writer, block));
            open_way_out(info, block_writer, egress, &refusals, deadline).await
        }
        _ => None,
    };
    let receiver =
        |pipe: std::io::PipeReader| tokio::net::unix::pipe::Receiver::from_owned_fd(pipe.into());
    let (stdout, stderr, state) = (receiver(stdout)?, receiver(stderr)?, receiver(state)?);
    let waiting = async {
        let ((stdout, out_total), (stderr, err_total), (state, state_total)) = tokio::join!(
            read_capped(Some(stdout), job.cap),
            read_capped(Some(stderr), job.cap),
            read_capped(Some(state), sandbox::STATE_BYTES),
        );
        let status = child.wait().await;
        let whole = state_total == state.len() as u64 && !state.is_empty();
        Finished {
            status,
            cut: out_total > stdout.len() as u64 || err_total > stderr.len() as u64,
            output_bytes: out_total + err_total,
            stdout,
            stderr,
            state: whole.then_some(state),
        }
    };
    let mut waiting = std::pin::pin!(waiting);
    let cpu_us = u64::try_from(job.cpu.as_micros()).unwrap_or(u64::MAX);
    let stopped = tokio::select! {
        finished = &mut waiting => Err(finished),
        () = tokio::time::sleep_until(deadline) => Ok(Ended::TimedOut),
        limit = limit_met(job.groups, cpu_us) => Ok(Ended::OverLimit(limit)),
    };
    let (ended, finished) = match stopped {
        Err(finished) => (None, finished),
        Ok(ended) => {
            // Killing bubblewrap takes the sandbox's PID namespace down with
            // it, and every process in it; what they wrote is still read.
            if let Ok(pid) = libc::pid_t::try_from(pid) {
                // SAFETY: the child is not reaped yet (its wait has not
                // returned), so the pid is still its own.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            match tokio::time::timeout(KILL_GRACE, &mut waiting).await {
                Ok(finished) => (Some(ended), finished),
                Err(_) => {
                    return Ok(Ran {
                        ended,
                        stdout: Vec::new(),
                        stderr: Vec::new(),
                        cut: false,
                        output_bytes: 0,
                        counted: job.groups.map(CallGroups::counted),
                        network_refused: refusals.taken(),
                        started: true,
                        state: None,
                    });
                }
            }
        }
    };
    let status = finished.status?;
    let exited = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(signal)) => Ended::Signalled(signal),
        (None, None) => Ended::Exited(-1),
    };
    // A limit met in the last moments, or one a process met alone (a
    // process the kernel killed for its memory, a fork refused, a signal
    // for CPU time or file size the shell passed on), ends the call too.
    let ended = ended
        .or_else(|| {
            job.groups
                .and_then(|groups| groups.limit_met(cpu_us))
                .map(Ended::OverLimit)
        })
        .or_else(|| signal_limit(exited).map(Ended::OverLimit))
        .unwrap_or(exited);
    Ok(Ran {
        ended,
        cut: finished.cut,
        output_bytes: finished.output_bytes,
        stdout: finished.stdout,
        stderr: finished.stderr,
        counted: job.groups.map(CallGroups::counted),
        network_refused: refusals.taken(),
        started: said_started(started),
        state: finished.state.filter(|_| matches!(ended, Ended::Exited(_))),
    })
}

/// Open the sandbox's way out: its first process's host pid read from
/// bubblewrap's `info`, the proxy's socket made in its network namespace
/// and served, then the sandbox let go on (`block`). The proxy runs until
/// the returned task is dropped; where it could not be made, the sandbox
/// goes on without it and `refusals` says why.
async fn open_way_out(
    info: std::io::PipeReader,
    block: std::io::PipeWriter,
    egress: &Egress,
    refusals: &Arc<Refusals>,
    deadline: tokio::time::Instant,
) -> Option<AbortOnDrop> {
    let opened = async {
        let mut info = tokio::net::unix::pipe::Receiver::from_owned_fd(info.into())
            .map_err(|e| e.to_string())?;
        let mut told = Vec::new();
        let pid = loop {
            let mut chunk = [0u8; 256];
            let n = info.read(&mut chunk).await.map_err(|e| e.to_string())?;
            if n == 0 || told.len() > 4096 {
                return Err("bubblewrap did not say which process the sandbox is".to_string());
            }
            told.extend_from_slice(&chunk[..n]);
            if let Ok(said) = serde_json::from_slice::<serde_json::Value>(&told)
                && let Some(pid) = said["child-pid"].as_u64()
            {
                break u32::try_from(pid).map_err(|e| e.to_string())?;
            }
        };
        let listening = tokio::task::spawn_blocking(move || proxy::listen_in(pid))
            .await
            .map_err(|e| format!("no way out: {e}"))?;
        listening
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|e| {
                format!(
                    "no way out: the proxy's socket could not be made in the sandbox's network \
                 (the host must run as root for it): {e}"
                )
            })
    };
    let opened = tokio::time::timeout_at(deadline, opened)
        .await
        .unwrap_or_else(|_| Err("the sandbox was not made in time".into()));
    let proxy = match opened {
        Ok(listener) => {
            let serving = proxy::serve(listener, egress.clone(), Arc::clone(refusals));
            Some(AbortOnDrop(tokio::spawn(serving)))
        }
        Err(problem) => {
            refusals.note(problem);
            None
        }
    };
    // The sandbox goes on (without a way out where none was made); a
    // sandbox that was never made has no reader left.
    let _ = std::io::Write::write_all(&mut { block }, b"1");
    proxy
}

/// A task ended when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What the sandbox's processes left once they all ended.
struct Finished {
    status: std::io::Result<std::process::ExitStatus>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    cut: bool,
    output_bytes: u64,
    state: Option<Vec<u8>>,
}

/// The first limit the processes in `groups` meet, checked every
/// [`WATCH_EVERY`]; never, without groups.
async fn limit_met(groups: Option<&CallGroups>, cpu_us: u64) -> Limit {
    let Some(groups) = groups else {
        return std::future::pending().await;
    };
    let mut every = tokio::time::interval(WATCH_EVERY);
    loop {
        every.tick().await;
        if let Some(limit) = groups.limit_met(cpu_us) {
            return limit;
        }
    }
}

/// The limit a signal that ended the shell, or its last command (whose
/// status the shell exits with, as 128 and the signal), stands for.
fn signal_limit(ended: Ended) -> Option<Limit> {
    let signal = match ended {
        Ended::Signalled(signal) => signal,
        Ended::Exited(code) if code > 128 => code - 128,
        _ => return None,
    };
    match signal {
        libc::SIGXCPU => Some(Limit::Cpu),
        libc::SIGXFSZ => Some(Limit::FileSize),
        _ => None,
    }
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
    /// Its standard input, output and error.
    stdio: [i32; 3],
    workspace: i32,
    started: i32,
    seccomp: i32,
    environment: i32,
    state: i32,
    /// bubblewrap's info and block descriptors, for a sandbox with a way
    /// out.
    proxied: Option<(i32, i32)>,
}

/// The process bounds the sandbox runs under, inherited by every process
/// in it, and the control groups it joins.
#[derive(Clone, Copy)]
struct Limits {
    /// Address space each process may map, when no group bounds memory.
    memory: Option<u64>,
    processes: u64,
    cpu_seconds: u64,
    file_bytes: u64,
    /// Each group's `cgroup.procs`, open for writing.
    joins: Option<[i32; 3]>,
}

impl Limits {
    /// In the child, before exec: its standard descriptors, the workspace
    /// on [`WORKSPACE_FD`], the
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
        // SAFETY: plain system calls on integers and a static byte.
        unsafe {
            // Into the call's groups first (`0` is the writer itself): the
            // sandbox's every process is made in them.
            for join in self.joins.into_iter().flatten() {
                if libc::write(join, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
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
            let [input, output, error] = fds.stdio;
            let placed = [
                (moved(input)?, 0),
                (moved(output)?, 1),
                (moved(error)?, 2),
                (moved(fds.workspace)?, WORKSPACE_FD),
                (moved(fds.started)?, STARTED_FD),
                (moved(fds.seccomp)?, SECCOMP_FD),
                (moved(fds.environment)?, ENVIRONMENT_FD),
                (moved(fds.state)?, STATE_FD),
            ];
            let proxied = match fds.proxied {
                Some((info, block)) => Some([(moved(info)?, INFO_FD), (moved(block)?, BLOCK_FD)]),
                None => None,
            };
            for (source, target) in placed.into_iter().chain(proxied.into_iter().flatten()) {
                check(libc::dup2(source, target))?;
            }
            // Nothing else of the host's passes into the sandbox: every
            // other descriptor this process holds is closed as it execs
            // (not before: where an exec fails is told on one of them).
            let last = if proxied.is_some() {
                BLOCK_FD
            } else {
                STATE_FD.max(ENVIRONMENT_FD)
            };
            let from = libc::c_uint::try_from(last + 1).unwrap_or(10);
            check(libc::syscall(
                libc::SYS_close_range,
                from,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) as libc::c_int)?;
            if let Some(memory) = self.memory {
                let limit = libc::rlimit {
                    rlim_cur: memory,
                    rlim_max: memory,
                };
                check(libc::setrlimit(libc::RLIMIT_AS, &limit))?;
            }
            for (resource, value) in [
                (libc::RLIMIT_NPROC, self.processes),
                (libc::RLIMIT_CPU, self.cpu_seconds),
                (libc::RLIMIT_FSIZE, self.file_bytes),
                (libc::RLIMIT_NOFILE, OPEN_FILES),
                (libc::RLIMIT_CORE, 0),
            ] {
                // Never above what the host allows (raising a hard limit
                // needs a privilege the sandbox's uid has not).
                let mut limit = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                check(libc::getrlimit(resource, &mut limit))?;
                let value = value.min(limit.rlim_max);
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
/// how many came.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, u64) {
    let Some(mut pipe) = pipe else {
        return (Vec::new(), 0);
    };
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut buffer = [0u8; 8192];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return (kept, total),
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
                total += n as u64;
            }
        }
    }
}
