//! The last resort of `toolhost serve`'s shutdown: once Ctrl-C or SIGTERM
//! has come, the process exits a fixed time later whatever still runs.
//!
//! The graceful shutdown is run by the async runtime, so it cannot end a
//! worker that is stuck (host code that never yields, a system call that
//! never returns) or a runtime waiting on such a worker. The signal is
//! heard here by a handler of its own, which only writes one byte to a
//! pipe, and a plain thread outside the runtime counts from there.

use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How long past `shutdown_grace_secs` the process may take to stop after
/// the signal before it exits anyway.
pub(crate) const AFTER_GRACE: Duration = Duration::from_secs(5);

/// From the first Ctrl-C or SIGTERM on, exit the process (status 1) when
/// `after` has passed.
pub(crate) fn arm(after: Duration) -> std::io::Result<()> {
    let (mut heard, told) = UnixStream::pair()?;
    told.set_nonblocking(true)?;
    let told = std::os::fd::IntoRawFd::into_raw_fd(told);
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the action calls only write(2) on a descriptor it owns
        // for the life of the process, which is async-signal-safe; a full
        // pipe (the signal came before) makes the write fail, harmlessly.
        unsafe {
            signal_hook_registry::register(signal, move || {
                let _ = libc::write(told, [1u8].as_ptr().cast(), 1);
            })?;
        }
    }
    std::thread::Builder::new()
        .name("toolhost-hard-stop".into())
        .spawn(move || {
            wait_then(&mut heard, after, || {
                eprintln!(
                    "toolhost: still running {} s after the stop signal: exiting now",
                    after.as_secs()
                );
                std::process::exit(1);
            });
        })?;
    Ok(())
}

/// Block until `heard` yields a byte (or closes), sleep `after`, then run
/// `exit`.
fn wait_then(heard: &mut impl std::io::Read, after: Duration, exit: impl FnOnce()) {
    let mut byte = [0u8; 1];
    let _ = heard.read(&mut byte);
    std::thread::sleep(after);
    exit();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::sync::mpsc;
    use std::time::Instant;

    #[test]
    fn the_exit_comes_a_fixed_time_after_the_signal() {
        let (mut heard, mut told) = UnixStream::pair().unwrap();
        let (exited, exit) = mpsc::channel();
        let waiting = std::thread::spawn(move || {
            wait_then(&mut heard, Duration::from_millis(200), || {
                exited.send(Instant::now()).unwrap();
            });
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(exit.try_recv().is_err(), "no exit before the signal");
        let signalled = Instant::now();
        told.write_all(&[1]).unwrap();
        let at = exit.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(at.duration_since(signalled) >= Duration::from_millis(200));
        waiting.join().unwrap();
    }
}
