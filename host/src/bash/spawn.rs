//! Starting bubblewrap without copying the host's memory. A `fork` copies
//! the whole host's page tables (a server holding compiled components and
//! pooled instance memory: 12.7 ms of a 20 ms `bash` call in the bench) only
//! for the child to throw them away at `exec`; here the child shares the
//! host's memory, as `posix_spawn` does (`clone` with `CLONE_VM` and
//! `CLONE_VFORK`), runs the caller's preparation with plain system calls on
//! its own stack, and execs. `posix_spawn` itself cannot take the sandbox
//! user's ids, its bounds or its control groups.

use std::ffi::{CString, OsString};
use std::os::fd::{AsFd as _, AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;

/// The child's stack until it execs: its preparation is straight-line
/// system calls, far below this.
const STACK_BYTES: usize = 256 << 10;

/// The lowest descriptor the child tells its error on: clear of those a
/// preparation places.
const REPORT_FD_FLOOR: libc::c_int = 64;

/// A process started by [`start`], killed if dropped before it is waited
/// for.
#[derive(Debug)]
pub(super) struct Started {
    pid: libc::pid_t,
    /// Readable once the process has ended.
    pidfd: AsyncFd<OwnedFd>,
    reaped: bool,
}

/// The first of `PATH`'s folders holding `program`.
pub(super) fn find(program: &str) -> std::io::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, program.to_string()))
}

/// Start `program` with `args` and an empty environment, the child first
/// taking `ids` (uid, gid; no supplementary groups) and then running
/// `prepare` (every signal at its default action), in which only
/// async-signal-safe calls that set no other thread's state may be made
/// (it runs on the host's memory while the calling thread waits). An error
/// `prepare` returns, or `exec`'s, is the result.
pub(super) fn start<F>(
    program: &Path,
    args: &[OsString],
    ids: Option<(u32, u32)>,
    prepare: F,
) -> std::io::Result<Started>
where
    F: Fn() -> std::io::Result<()> + Sync,
{
    let c_string = |bytes: &[u8]| {
        CString::new(bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an argument holds a NUL byte",
            )
        })
    };
    let program = c_string(program.as_os_str().as_bytes())?;
    let args = std::iter::once(Ok(program.clone()))
        .chain(args.iter().map(|arg| c_string(arg.as_bytes())))
        .collect::<std::io::Result<Vec<CString>>>()?;
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|arg| arg.as_ptr()).collect();
    argv.push(std::ptr::null());
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    let (mut report, report_writer) = std::io::pipe()?;
    let mut stack = vec![0u8; STACK_BYTES];
    // The stack grows down from its end, 16-byte aligned.
    let top = stack.as_mut_ptr().wrapping_add(STACK_BYTES);
    let top = top.wrapping_sub(top as usize % 16);
    let mut pidfd: libc::c_int = -1;
    // SAFETY: every signal is blocked in this thread while the child runs
    // on its memory (the child puts the handlers back to their defaults
    // before it unblocks them), and `child`, its stack and everything it
    // points to outlive it: with CLONE_VFORK this thread resumes only once
    // the child has exec'd or exited.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        let child = Child {
            program: &program,
            argv: &argv,
            envp: &envp,
            ids,
            prepare: &prepare,
            report: report_writer.as_raw_fd(),
            signals: before,
        };
        let pid = libc::clone(
            run_child::<F>,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
            std::ptr::from_ref(&child).cast_mut().cast(),
            std::ptr::from_mut(&mut pidfd),
        );
        let failed = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        if pid == -1 {
            return Err(failed);
        }
        pid
    };
    drop((stack, report_writer));
    // SAFETY: CLONE_PIDFD made it, for this caller alone; owned, it stays
    // open and the same while the AsyncFd holds it.
    let pidfd = match unsafe { AsyncFd::register(OwnedFd::from_raw_fd(pidfd)) } {
        Ok(pidfd) => pidfd,
        Err(e) => {
            // SAFETY: the pid is this caller's child, not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut 0, 0);
            }
            return Err(e.into());
        }
    };
    let mut started = Started {
        pid,
        pidfd,
        reaped: false,
    };
    let mut said = [0u8; 4];
    match std::io::Read::read(&mut report, &mut said) {
        Ok(4) => {
            started.reap_now();
            Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(said)))
        }
        _ => Ok(started),
    }
}

/// What the child needs, made before it runs.
struct Child<'a, F> {
    program: &'a CString,
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char; 1],
    ids: Option<(u32, u32)>,
    prepare: &'a F,
    /// Where the child writes the error it stopped at (close-on-exec: a
    /// successful exec leaves it empty).
    report: libc::c_int,
    /// The mask to run under, the caller's before it blocked every signal.
    signals: libc::sigset_t,
}

/// A signal's action as the kernel's `rt_sigaction` takes it: the default
/// one when zeroed (`SIG_DFL`, no flags, nothing blocked).
#[repr(C)]
#[derive(Default)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// The child: every signal's default action, the caller's mask back, the ids
/// taken, `prepare` run, the program exec'd; otherwise its error written
/// to `report` and exit.
extern "C" fn run_child<F>(arg: *mut libc::c_void) -> libc::c_int
where
    F: Fn() -> std::io::Result<()> + Sync,
{
    // SAFETY: `arg` is the `Child` the parent keeps alive until this
    // process execs or exits; only system calls are made from here.
    unsafe {
        let child = &*arg.cast::<Child<'_, F>>();
        // Above any descriptor the preparation puts in place.
        let report = match libc::fcntl(child.report, libc::F_DUPFD_CLOEXEC, REPORT_FD_FLOOR) {
            -1 => child.report,
            moved => moved,
        };
        let failed = (|| {
            // The host's handlers are its memory's, which this process
            // shares: none may run here. And what the host ignores (Rust
            // ignores SIGPIPE) the sandbox does not: every signal back to
            // its default, by the kernel's call (libc's keeps its own two
            // real-time signals from being set).
            let default = KernelSigaction::default();
            for signal in 1..=64 {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signal,
                    &raw const default,
                    std::ptr::null_mut::<KernelSigaction>(),
                    8,
                );
            }
            libc::sigprocmask(libc::SIG_SETMASK, &child.signals, std::ptr::null_mut());
            if let Some((uid, gid)) = child.ids {
                // Raw calls: libc's wrappers would change every thread of
                // the host's too (they share this memory).
                let check = |result: libc::c_long| {
                    if result == -1 {
                        Err(std::io::Error::last_os_error())
                    } else {
                        Ok(())
                    }
                };
                check(libc::syscall(
                    libc::SYS_setgroups,
                    0,
                    std::ptr::null::<libc::gid_t>(),
                ))?;
                check(libc::syscall(libc::SYS_setresgid, gid, gid, gid))?;
                check(libc::syscall(libc::SYS_setresuid, uid, uid, uid))?;
            }
            (child.prepare)()?;
            libc::execve(
                child.program.as_ptr(),
                child.argv.as_ptr(),
                child.envp.as_ptr(),
            );
            Err::<(), _>(std::io::Error::last_os_error())
        })();
        let errno = failed
            .err()
            .and_then(|e| e.raw_os_error())
            .unwrap_or(libc::EINVAL)
            .to_ne_bytes();
        libc::write(report, errno.as_ptr().cast(), errno.len());
        libc::_exit(127)
    }
}

impl Started {
    /// The process's id on the host.
    pub(super) fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Its status once it ends.
    pub(super) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_reap()? {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            ready.clear_ready();
        }
    }

    /// End it (and, with bubblewrap, its sandbox's every process); only
    /// while it is not reaped.
    fn kill(&self) {
        // SAFETY: a signal sent through the descriptor reaches this process
        // only, even once its pid is reused.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_fd().as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }

    /// Its status, if it has ended, reaped.
    fn try_reap(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let mut status = 0;
        // SAFETY: the pid is this process's own child, not reaped yet.
        match unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) } {
            0 => Ok(None),
            -1 => Err(std::io::Error::last_os_error()),
            _ => {
                self.reaped = true;
                Ok(Some(ExitStatus::from_raw(status)))
            }
        }
    }

    /// Wait for it, blocking: it is exiting.
    fn reap_now(&mut self) {
        let mut status = 0;
        // SAFETY: as in `try_reap`.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.reaped = true;
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        self.kill();
        let pid = self.pid;
        // Killed, it ends at once; reaped off the caller's thread.
        let reap = move || {
            let mut status = 0;
            // SAFETY: as in `try_reap`; nothing else reaps it.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(reap)),
            Err(_) => drop(std::thread::spawn(reap)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Vec<OsString> {
        vec!["-c".into(), script.into()]
    }

    #[tokio::test]
    async fn a_started_program_runs_with_what_prepare_set_and_its_status_is_told() {
        let (mut read, write) = std::io::pipe().unwrap();
        let fd = write.as_raw_fd();
        let prepare = move || {
            // SAFETY: a plain system call on integers.
            if unsafe { libc::dup2(fd, 1) } == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        };
        let script = "wc -c < /proc/$$/environ; grep SigIgn /proc/$$/status; exit 3";
        let mut started = start(&find("sh").unwrap(), &shell(script), None, prepare).unwrap();
        drop(write);
        let status = started.wait().await.unwrap();
        assert_eq!(status.code(), Some(3));
        let mut said = String::new();
        std::io::Read::read_to_string(&mut read, &mut said).unwrap();
        // An empty environment, and no signal ignored (this test process
        // ignores SIGPIPE, as every Rust program does).
        assert_eq!(said, "0\nSigIgn:\t0000000000000000\n");
    }

    #[tokio::test]
    async fn where_prepare_or_exec_fails_the_error_is_the_result_and_nothing_is_left() {
        let refused = start(&find("sh").unwrap(), &shell("exit 0"), None, || {
            Err(std::io::Error::from_raw_os_error(libc::EPERM))
        })
        .unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EPERM));
        let missing = start(Path::new("/nonexistent/bwrap"), &[], None, || Ok(())).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let nul = start(&find("sh").unwrap(), &["a\0b".into()], None, || Ok(())).unwrap_err();
        assert_eq!(nul.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(
            find("no-such-program-anywhere").unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        // Both failed children were reaped: none is left a zombie.
        let mut status = 0;
        // SAFETY: asks about any child, without waiting.
        let left = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        assert!(left <= 0, "a child was left unreaped: {left}");
    }

    #[tokio::test]
    async fn a_started_program_dropped_before_it_ends_is_killed_and_reaped() {
        let started = start(&find("sleep").unwrap(), &["60".into()], None, || Ok(())).unwrap();
        let pid = started.pid;
        drop(started);
        let gone = std::time::Instant::now();
        // SAFETY: signal 0 only asks whether the pid exists.
        while unsafe { libc::kill(pid, 0) } == 0 {
            assert!(
                gone.elapsed() < std::time::Duration::from_secs(5),
                "still there"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}
