//! `bash`, the toolset's shell: each call's command run by `/bin/bash` in
//! an OS sandbox made afresh for it by bubblewrap, over the session's
//! workspace (read-write at `/workspace`) and nothing else of the host but
//! `/usr`, a few `/etc` files and what `[toolset] bash.read_only` adds.
//!
//! The sandbox has every namespace of its own (no network at all: its
//! network namespace is empty), refuses nested user namespaces, holds no
//! capability, gains no privilege, and runs under a seccomp filter
//! (`bash/seccomp.rs`); bubblewrap is started as an
//! unprivileged host uid when the host runs as root (`bash.uid`). Its
//! processes are bounded in address space, CPU time, count, file size and
//! open files, and the call's deadline ends them all: nothing outlives a
//! call. Whether the sandbox works here is decided once, by running one
//! with the same flags ([`Bash::probe`]); where it does not, `bash` is
//! listed as unavailable with the reason and never runs unsandboxed.

mod cgroup;
mod ownership;
mod proxy;
mod run;
mod sandbox;
mod seccomp;
mod spawn;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

pub use cgroup::Counted;
pub use proxy::Egress;
pub use run::{Ended, Ran};

use crate::config::toolset::BashSettings;
use crate::usage::Limit;

/// What `bash` tells the model it does, when it may reach the origins
/// `allowed` names (through the host's proxy) or, when it names none,
/// nothing.
pub fn description(allowed: &crate::caps::http::AllowList) -> String {
    let network = if allowed.is_empty() {
        "There is no network".to_string()
    } else {
        format!(
            "HTTP and HTTPS reach only {} (through a proxy that $https_proxy names; curl, pip, \
             git and python use it), nothing else",
            allowed.canonical().join(", ")
        )
    };
    format!(
        "Run a shell command with /bin/bash in a sandbox over the session's workspace \
         (/workspace). `command` is the script; `timeout_ms` ends it sooner than the tool's \
         timeout. The next call in the session starts in the directory this one ended in \
         (inside the workspace) with the variables it exported; no process outlives a call; \
         `restart` starts a fresh shell. {network}, and only the workspace and a private /tmp \
         are writable; standard output and error come back, each cut at 64 KiB, with the exit \
         status."
    )
}

/// The most bytes of standard output, and of standard error, a call returns.
pub const OUTPUT_BYTES: usize = 64 << 10;

/// How many times a sandbox that bubblewrap could not set up is made.
const SETUP_TRIES: u32 = 4;

/// How long to wait before making it again, times the tries so far.
const SETUP_BACKOFF: Duration = Duration::from_millis(50);

/// The longest command, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 << 10;

/// `bash`'s input schema.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": { "type": "string", "minLength": 1, "maxLength": MAX_COMMAND_BYTES,
                         "description": "The script /bin/bash runs." },
            "timeout_ms": { "type": "integer", "minimum": 1,
                            "description": "End it after this long (at most the tool's timeout)." },
            "restart": { "type": "boolean",
                         "description": "Start a fresh shell, not where the session's last call left off." },
        },
        "required": ["command"],
        "additionalProperties": false,
    })
}

/// The sandbox a host runs `bash` in, checked to work here.
#[derive(Debug)]
pub struct Bash {
    settings: BashSettings,
    run_as: run::RunAs,
    /// The synthetic `passwd` and `group` every sandbox sees.
    etc: tempfile::TempDir,
    /// The seccomp filter every sandbox runs under, compiled.
    filter: Vec<u8>,
    /// What the sessions' shells left for their next calls.
    shells: Shells,
    /// Where each call's control groups are made, where the host has them
    /// (otherwise process limits alone bound the sandbox).
    groups: Option<cgroup::Groups>,
}

/// The most sessions whose shell state is kept; the longest unused is
/// forgotten first (its next call starts a fresh shell).
const MAX_SHELLS: usize = 1024;

/// The state each session's shell left: shell code the sandbox wrote,
/// kept by the host (never in the workspace) and only ever run in the
/// session's next sandbox.
#[derive(Debug, Default)]
struct Shells(std::sync::Mutex<Vec<(String, Vec<u8>)>>);

impl Shells {
    /// What session `shell`'s last call left (nothing for a new one).
    fn state(&self, shell: &str) -> Vec<u8> {
        let shells = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        shells
            .iter()
            .find(|(id, _)| id == shell)
            .map(|(_, state)| state.clone())
            .unwrap_or_default()
    }

    /// Keep `state` as session `shell`'s, the most recently used.
    fn keep(&self, shell: &str, state: Vec<u8>) {
        let mut shells = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        shells.retain(|(id, _)| id != shell);
        if shells.len() >= MAX_SHELLS {
            shells.remove(0);
        }
        shells.push((shell.to_string(), state));
    }
}

impl Bash {
    /// The sandbox `settings` make, if it works on this machine: one is
    /// made and runs `true` with the same flags and uid; why not, when it
    /// does not (not Linux, no `bwrap`, user namespaces off).
    pub async fn probe(settings: &BashSettings) -> Result<Self, String> {
        if !cfg!(target_os = "linux") {
            return Err("bash's sandbox is made with bubblewrap, which runs on Linux only".into());
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let bash = Self {
            settings: settings.clone(),
            run_as: run::RunAs::for_host(settings, euid),
            etc: identity_dir(settings)
                .map_err(|e| format!("cannot write the sandbox's /etc: {e}"))?,
            filter: seccomp::program(),
            shells: Shells::default(),
            groups: cgroup::Groups::detect()
                .inspect_err(|why| {
                    tracing::info!(
                        "bash: each call is bounded by process limits alone, not control \
                         groups: {why}"
                    );
                })
                .ok(),
        };
        let scratch =
            tempfile::tempdir().map_err(|e| format!("cannot make a scratch folder: {e}"))?;
        let probed = bash
            .run(
                "test -w /workspace && ! test -e /root",
                scratch.path(),
                Duration::from_secs(10),
                None,
                false,
                None,
            )
            .await;
        match probed {
            Ok(Ran {
                ended: Ended::Exited(0),
                ..
            }) => Ok(bash),
            Ok(ran) => Err(format!(
                "a probe sandbox did not work ({:?}): {}",
                ran.ended,
                String::from_utf8_lossy(&ran.stderr).trim()
            )),
            Err(e) => Err(e),
        }
    }

    /// Run `command` over `workspace` for at most `timeout`, in the shell
    /// `shell` (a session's, which starts where the session's last call
    /// left it unless `restart`) or in a fresh one (`None`); connecting
    /// where `egress` lets it through the host's proxy, or nowhere.
    pub async fn run(
        &self,
        command: &str,
        workspace: &Path,
        timeout: Duration,
        shell: Option<&str>,
        restart: bool,
        egress: Option<&Egress>,
    ) -> Result<Ran, String> {
        if let Some((uid, gid)) = self.run_as.ids {
            let (root, owner) = (workspace.to_path_buf(), (uid, gid));
            tokio::task::spawn_blocking(move || ownership::hand_over(&root, owner.0, owner.1))
                .await
                .map_err(|e| format!("the workspace was not handed over: {e}"))??;
        }
        let opened = std::fs::File::open(workspace)
            .map_err(|e| format!("cannot open the workspace {}: {e}", workspace.display()))?;
        let state = match (shell, restart) {
            (Some(shell), false) => self.shells.state(shell),
            _ => Vec::new(),
        };
        let groups = match &self.groups {
            Some(groups) => Some(
                groups
                    .make(self.settings.memory_mb << 20, self.settings.processes)
                    .map_err(|e| format!("cannot make the call's control groups: {e}"))?,
            ),
            None => None,
        };
        let cpu = self.settings.cpu_ms.map_or(timeout, Duration::from_millis);
        let ran = self
            .run_in(Attempt {
                command,
                workspace: &opened,
                state: &state,
                timeout,
                cpu,
                groups: groups.as_ref(),
                egress,
            })
            .await;
        if let Some(groups) = groups {
            groups.remove();
        }
        let ran = ran?;
        // A call its deadline or a limit ended keeps the state before it.
        match (shell, &ran.state) {
            (Some(shell), Some(left)) => self.shells.keep(shell, left.clone()),
            (Some(shell), None) if restart => self.shells.keep(shell, Vec::new()),
            _ => {}
        }
        Ok(ran)
    }

    /// Run the attempt's command in a sandbox made again, a few times,
    /// while bubblewrap could not set it up.
    async fn run_in(&self, attempt: Attempt<'_>) -> Result<Ran, String> {
        let Attempt {
            command,
            workspace,
            state,
            timeout,
            cpu,
            groups,
            egress,
        } = attempt;
        let deadline = tokio::time::Instant::now() + timeout;
        let mut tries = 0;
        loop {
            tries += 1;
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let ran = run::run(run::Job {
                settings: &self.settings,
                run_as: self.run_as,
                etc: self.etc.path(),
                filter: &self.filter,
                workspace,
                command,
                state,
                timeout: left,
                cpu,
                groups,
                egress,
                cap: OUTPUT_BYTES,
            })
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "bubblewrap (`bwrap`) is not installed: apt-get install bubblewrap".to_string()
                }
                _ => format!("cannot start bubblewrap: {e}"),
            })?;
            // A sandbox that was never set up ran nothing: made again, at
            // most twice more, while the deadline allows.
            if ran.started || tries >= SETUP_TRIES || left.is_zero() {
                if !ran.started && ran.ended != Ended::TimedOut {
                    return Err(format!(
                        "bubblewrap could not make the sandbox: {}",
                        String::from_utf8_lossy(&ran.stderr).trim()
                    ));
                }
                return Ok(ran);
            }
            tracing::debug!(
                "bash's sandbox was not set up ({}); making it again",
                String::from_utf8_lossy(&ran.stderr).trim()
            );
            tokio::time::sleep(SETUP_BACKOFF * tries).await;
        }
    }
}

/// One call's command and what its sandbox is made with.
struct Attempt<'a> {
    command: &'a str,
    /// The workspace, an open directory.
    workspace: &'a std::fs::File,
    /// The shell's starting state.
    state: &'a [u8],
    timeout: Duration,
    cpu: Duration,
    groups: Option<&'a cgroup::CallGroups>,
    egress: Option<&'a Egress>,
}

impl Bash {
    /// The value of the sandbox's `limit` for a call of `timeout`, as its
    /// receipt reports it (bytes, a count, or milliseconds).
    pub fn bound(&self, limit: Limit, timeout: Duration) -> u64 {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match limit {
            Limit::Memory => self.settings.memory_mb << 20,
            Limit::Processes => self.settings.processes,
            Limit::Cpu => self.settings.cpu_ms.unwrap_or(millis(timeout)),
            Limit::FileSize => self.settings.file_mb << 20,
            Limit::Timeout => millis(timeout),
            _ => 0,
        }
    }

    /// What `limit` ending a call of `timeout` means, said to the model.
    pub fn explain(&self, limit: Limit, timeout: Duration) -> String {
        let value = self.bound(limit, timeout);
        match limit {
            Limit::Memory => format!(
                "its processes held more than {} MiB of memory together (bash.memory_mb): the \
                 kernel killed one, and the sandbox was ended",
                value >> 20
            ),
            Limit::Processes => format!(
                "it tried to run more than {value} processes at once (bash.processes): the \
                 sandbox was ended"
            ),
            Limit::Cpu => format!(
                "its processes used more than {value} ms of CPU time together (bash.cpu_ms): the \
                 sandbox was ended"
            ),
            Limit::FileSize => format!(
                "it wrote a file larger than {} MiB (bash.file_mb)",
                value >> 20
            ),
            _ => format!(
                "the command ran past {value} ms (timeout_ms): it and every process it started \
                 were ended"
            ),
        }
    }
}

/// A folder every sandbox user can read, holding the synthetic `passwd`
/// and `group` for `settings`' ids.
fn identity_dir(settings: &BashSettings) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::Builder::new()
        .prefix("toolhost-bash-etc")
        .tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    for (name, text) in sandbox::identity_files(settings.uid, settings.gid) {
        let path = dir.path().join(name);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(dir)
}
