//! `[toolset] bash`: how the toolset's `bash` sandbox is made. Every key
//! is optional; `bash` runs with the defaults when the toolset enables it
//! and the sandbox works on this machine.
//!
//! ```toml
//! [toolset]
//! type = "agent_toolset"
//! bash = { uid = 65534, gid = 65534, read_only = ["/opt/tools"], memory_mb = 1024, processes = 256, cpu_ms = 60000, file_mb = 1024 }
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// The host uid and gid the sandbox runs as when the host runs as root
/// (`nobody` on Debian).
pub const DEFAULT_ID: u32 = 65534;

/// How `bash`'s sandbox is made and bounded.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashSettings {
    /// The unprivileged host uid bubblewrap runs as, when the host runs as
    /// root (never 0); a host not running as root runs it as itself.
    #[serde(default = "default_id")]
    pub uid: u32,
    /// The host gid it runs as, likewise.
    #[serde(default = "default_id")]
    pub gid: u32,
    /// Host paths shown read-only at the same place, besides `/usr` and
    /// the few `/etc` files programs need.
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// The most memory one call's processes may hold together, in MiB
    /// (where the host's control groups bound it; otherwise the address
    /// space each may map).
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// The most processes one call's sandbox may run at once.
    #[serde(default = "default_processes")]
    pub processes: u64,
    /// The most CPU time one call's processes may use together, in
    /// milliseconds; the call's timeout when unset (one core's worth).
    #[serde(default)]
    pub cpu_ms: Option<u64>,
    /// The largest file one of its processes may write, in MiB.
    #[serde(default = "default_file_mb")]
    pub file_mb: u64,
}

fn default_id() -> u32 {
    DEFAULT_ID
}

fn default_memory_mb() -> u64 {
    1024
}

fn default_processes() -> u64 {
    256
}

fn default_file_mb() -> u64 {
    1024
}

impl Default for BashSettings {
    fn default() -> Self {
        Self {
            uid: DEFAULT_ID,
            gid: DEFAULT_ID,
            read_only: Vec::new(),
            memory_mb: default_memory_mb(),
            processes: default_processes(),
            cpu_ms: None,
            file_mb: default_file_mb(),
        }
    }
}

/// Paths never shown to the sandbox, even when asked for: the host's
/// secrets and every other tenant's files live under them.
const NEVER_SHOWN: &[&str] = &[
    "/", "/root", "/home", "/etc", "/proc", "/sys", "/dev", "/var", "/run", "/tmp",
];

impl BashSettings {
    /// Check it: a uid and gid other than root's, absolute read-only paths
    /// that show no more than themselves, limits within reason.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.uid != 0 && self.gid != 0,
            "`bash.uid` and `bash.gid` must not be 0: the sandbox runs as an unprivileged user"
        );
        for path in &self.read_only {
            anyhow::ensure!(
                path.is_absolute()
                    && !path
                        .components()
                        .any(|c| matches!(c, std::path::Component::ParentDir)),
                "`bash.read_only` entry {} must be an absolute path without `..`",
                path.display()
            );
            let shown = path.to_string_lossy();
            anyhow::ensure!(
                !NEVER_SHOWN.contains(&shown.trim_end_matches('/')) && shown != "/",
                "`bash.read_only` entry {} would show the host's own files (its secrets, its \
                 state, other sessions' workspaces): name a folder of tools instead, e.g. \
                 /opt/tools",
                path.display()
            );
        }
        anyhow::ensure!(
            (64..=65536).contains(&self.memory_mb),
            "`bash.memory_mb` = {} must be between 64 and 65536",
            self.memory_mb
        );
        anyhow::ensure!(
            (8..=4096).contains(&self.processes),
            "`bash.processes` = {} must be between 8 and 4096",
            self.processes
        );
        anyhow::ensure!(
            (1..=1 << 20).contains(&self.file_mb),
            "`bash.file_mb` = {} must be between 1 and 1048576",
            self.file_mb
        );
        if let Some(cpu_ms) = self.cpu_ms {
            anyhow::ensure!(cpu_ms >= 10, "`bash.cpu_ms` = {cpu_ms} must be at least 10");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_would_weaken_the_sandbox_are_refused_by_name() {
        BashSettings::default().validate().unwrap();
        let with = |edit: fn(&mut BashSettings)| {
            let mut settings = BashSettings::default();
            edit(&mut settings);
            settings.validate().unwrap_err().to_string()
        };
        assert!(with(|s| s.uid = 0).contains("bash.uid"));
        assert!(with(|s| s.read_only = vec!["/".into()]).contains("bash.read_only"));
        assert!(with(|s| s.read_only = vec!["/etc/".into()]).contains("host's own files"));
        assert!(with(|s| s.read_only = vec!["opt".into()]).contains("absolute"));
        assert!(with(|s| s.read_only = vec!["/opt/../etc".into()]).contains("absolute"));
        assert!(with(|s| s.memory_mb = 1).contains("bash.memory_mb"));
        assert!(with(|s| s.processes = 1_000_000).contains("bash.processes"));
        assert!(with(|s| s.cpu_ms = Some(0)).contains("bash.cpu_ms"));
        assert!(with(|s| s.file_mb = 0).contains("bash.file_mb"));
    }
}
