//! One call's sandbox in control groups of its own (cgroup v1's `memory`,
//! `pids` and `cpuacct` controllers): its processes together bounded in
//! memory and count, and their memory, count and CPU time measured, so a
//! limit ends the call by name and the receipt says what it used.
//!
//! The groups are made under the host's own group in each hierarchy, in a
//! folder of its own (`toolhost-bash-<pid>`), one per call, and removed
//! once the call's processes are gone. Where they cannot be made (no
//! cgroup v1 controllers, a host not running as root, a cgroup v2-only
//! system) the sandbox is bounded by process limits alone (see
//! `run.rs`), and [`Groups::detect`] says why.

use std::io::Write as _;
use std::os::fd::{AsRawFd as _, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::usage::Limit;

/// The controllers a call's sandbox is put in, in this order.
const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpuacct"];

/// How the folders of toolhost's groups are named: the prefix, then the
/// host process's id.
const PREFIX: &str = "toolhost-bash-";

/// How long a call's groups are waited on to empty (its processes die as
/// its PID namespace goes) before they are left for the next start.
const REMOVAL_WAIT: Duration = Duration::from_secs(10);

/// Where toolhost makes its calls' groups: a folder of its own in each
/// controller's hierarchy, under the group the host runs in.
#[derive(Debug)]
pub(super) struct Groups {
    /// One folder per controller, in [`CONTROLLERS`]' order.
    parents: [PathBuf; 3],
    /// The number the next call's groups are named by.
    next: AtomicU64,
}

impl Groups {
    /// The host's folders for its calls' groups, made now; why there are
    /// none when they cannot be made.
    pub(super) fn detect() -> Result<Self, String> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let membership = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        // Each host in the process has its own (tests make several).
        static HOSTS: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            HOSTS.fetch_add(1, Ordering::Relaxed)
        );
        let mut parents = Vec::with_capacity(CONTROLLERS.len());
        for controller in CONTROLLERS {
            let hierarchy = own_group(&mountinfo, &membership, controller)
                .filter(|group| group.is_dir())
                .ok_or_else(|| format!("no cgroup v1 `{controller}` hierarchy this host is in"))?;
            sweep(&hierarchy);
            let parent = hierarchy.join(&name);
            match std::fs::create_dir(&parent) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(format!("cannot make the group {}: {e}", parent.display()));
                }
            }
            parents.push(parent);
        }
        let parents: [PathBuf; 3] = parents
            .try_into()
            .map_err(|_| "a controller's group is missing".to_string())?;
        Ok(Self {
            parents,
            next: AtomicU64::new(0),
        })
    }

    /// A new call's groups, bounded to `memory` bytes (swap included where
    /// the kernel counts it) and `processes` processes.
    pub(super) fn make(&self, memory: u64, processes: u64) -> std::io::Result<CallGroups> {
        let name = format!("call-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let dirs = self.parents.clone().map(|parent| parent.join(&name));
        let mut made = CallGroups {
            dirs,
            joins: Vec::with_capacity(CONTROLLERS.len()),
        };
        for dir in &made.dirs {
            std::fs::create_dir(dir)?;
        }
        let [memory_dir, pids_dir, _] = &made.dirs;
        write(&memory_dir.join("memory.limit_in_bytes"), memory)?;
        // Without swap accounting the file is absent: memory bounds it.
        let swap = memory_dir.join("memory.memsw.limit_in_bytes");
        if swap.exists() {
            write(&swap, memory)?;
        }
        write(&pids_dir.join("pids.max"), processes)?;
        for dir in &made.dirs {
            let join = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))?;
            made.joins.push(join);
        }
        Ok(made)
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        for parent in &self.parents {
            if let Ok(calls) = std::fs::read_dir(parent) {
                for call in calls.flatten().filter(|call| call.path().is_dir()) {
                    let _ = std::fs::remove_dir(call.path());
                }
            }
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// Remove the groups under `hierarchy` that hosts which are gone left
/// (a host that was killed never removes its own); groups still holding
/// a process stay.
fn sweep(hierarchy: &Path) {
    let Ok(entries) = std::fs::read_dir(hierarchy) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        if let Ok(calls) = std::fs::read_dir(entry.path()) {
            for call in calls.flatten().filter(|call| call.path().is_dir()) {
                let _ = std::fs::remove_dir(call.path());
            }
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

/// The group `controller`'s hierarchy holds this process in, as a path on
/// this system: the mount point of the
/// hierarchy and the process's place in it, from `/proc/self/mountinfo`
/// and `/proc/self/cgroup`.
fn own_group(mountinfo: &str, membership: &str, controller: &str) -> Option<PathBuf> {
    let (root, mount) = mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        let mut fs = fs.split(' ');
        if fs.next()? != "cgroup" {
            return None;
        }
        let options = fs.nth(1)?;
        if !options.split(',').any(|option| option == controller) {
            return None;
        }
        let mut fields = mount.split(' ');
        let root = fields.nth(3)?;
        let point = fields.next()?;
        Some((root.to_string(), point.to_string()))
    })?;
    let own = membership.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let _ = fields.next()?;
        let controllers = fields.next()?;
        let path = fields.next()?;
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })?;
    // A hierarchy mounted from a group below its root (a container's)
    // shows the host's place relative to that group.
    let relative = own
        .strip_prefix(root.trim_end_matches('/'))
        .unwrap_or(own)
        .trim_start_matches('/');
    if relative.split('/').any(|part| part == "..") {
        return None;
    }
    let mount = PathBuf::from(mount);
    Some(if relative.is_empty() {
        mount
    } else {
        mount.join(relative)
    })
}

/// Write `value` to the control file `path`.
fn write(path: &Path, value: u64) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(value.to_string().as_bytes())
}

/// The first number on the line of `file` that starts with `key`, or
/// the whole file's number when `key` is empty.
fn read(dir: &Path, file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    if key.is_empty() {
        return text.trim().parse().ok();
    }
    text.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(' ')?;
        value.trim().parse().ok()
    })
}

/// One call's groups, each with its `cgroup.procs` open for the sandbox's
/// first process to join by.
#[derive(Debug)]
pub(super) struct CallGroups {
    /// One per controller, in [`CONTROLLERS`]' order.
    dirs: [PathBuf; 3],
    joins: Vec<std::fs::File>,
}

/// What a call's processes used together, as their groups counted it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// CPU time, in microseconds.
    pub cpu_us: u64,
    /// The most memory they held at once, in bytes.
    pub peak_memory_bytes: u64,
    /// The most of them at once, where the kernel counts it.
    pub peak_processes: Option<u64>,
}

impl CallGroups {
    /// The descriptors the sandbox's first process writes `0` to (itself)
    /// before it starts the sandbox: every process it makes is in the
    /// groups from then on.
    pub(super) fn join_fds(&self) -> [RawFd; 3] {
        let mut fds = [-1; 3];
        for (fd, join) in fds.iter_mut().zip(&self.joins) {
            *fd = join.as_raw_fd();
        }
        fds
    }

    /// The limit the processes met, if they met one: memory (the kernel
    /// killed one of them for it), process count (a fork was refused), or
    /// `cpu_us` of CPU time.
    pub(super) fn limit_met(&self, cpu_us: u64) -> Option<Limit> {
        let [memory, pids, cpu] = &self.dirs;
        if read(memory, "memory.oom_control", "oom_kill").unwrap_or(0) > 0 {
            return Some(Limit::Memory);
        }
        if read(pids, "pids.events", "max").unwrap_or(0) > 0 {
            return Some(Limit::Processes);
        }
        if read(cpu, "cpuacct.usage", "").unwrap_or(0) / 1000 > cpu_us {
            return Some(Limit::Cpu);
        }
        None
    }

    /// What the processes used.
    pub(super) fn counted(&self) -> Counted {
        let [memory, pids, cpu] = &self.dirs;
        Counted {
            cpu_us: read(cpu, "cpuacct.usage", "").unwrap_or(0) / 1000,
            peak_memory_bytes: read(memory, "memory.max_usage_in_bytes", "").unwrap_or(0),
            peak_processes: read(pids, "pids.peak", ""),
        }
    }

    /// Remove the groups once the processes in them are gone, in the
    /// background: the kernel ends a dead PID namespace's processes
    /// promptly, not at once.
    pub(super) fn remove(self) {
        let Self { dirs, joins } = self;
        drop(joins);
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let mut left: Vec<PathBuf> = dirs.into();
            while !left.is_empty() {
                left.retain(|dir| std::fs::remove_dir(dir).is_err() && dir.exists());
                if left.is_empty() {
                    return;
                }
                if started.elapsed() > REMOVAL_WAIT {
                    tracing::warn!(
                        "bash: the control groups {left:?} still hold processes; left in place"
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_own_group_is_found_in_each_hierarchy() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
            35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
            33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n\
            39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let membership = "8:pids:/docker/abc/inner\n4:memory:/api/x\n2:cpu,cpuacct:/\n0::/\n";
        let found = |controller| {
            own_group(mountinfo, membership, controller).map(|p| p.display().to_string())
        };
        assert_eq!(
            found("memory").as_deref(),
            Some("/sys/fs/cgroup/memory/api/x")
        );
        assert_eq!(
            found("cpuacct").as_deref(),
            Some("/sys/fs/cgroup/cpu,cpuacct")
        );
        // A container's hierarchy, mounted from its own group.
        assert_eq!(found("pids").as_deref(), Some("/sys/fs/cgroup/pids/inner"));
        // Not mounted as v1 (the unified hierarchy is not looked in).
        assert_eq!(found("freezer"), None);
        let hostile = "4:memory:/../../etc\n";
        assert_eq!(own_group(mountinfo, hostile, "memory"), None);
    }
}
