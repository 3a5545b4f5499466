//! The bubblewrap command line of one `bash` call: what the sandbox sees
//! (the workspace read-write at `/workspace`, `/usr` and a few `/etc`
//! files read-only, a private `/tmp`, a fresh `/proc`, a minimal `/dev`),
//! its namespaces (all of them, nested user namespaces refused), no
//! capabilities, and the process bounds the sandbox's uid runs under.

use std::ffi::OsString;
use std::path::Path;

use crate::config::toolset::BashSettings;

/// The descriptor the workspace is handed to bubblewrap on.
pub(super) const WORKSPACE_FD: i32 = 3;

/// The descriptor the sandbox says it is set up on, before the command
/// starts: nothing there means bubblewrap never made it, and nothing ran.
pub(super) const STARTED_FD: i32 = 4;

/// The descriptor the shell's starting environment is read from:
/// [`environment`].
pub(super) const ENVIRONMENT_FD: i32 = 7;

/// The descriptor the shell writes its state on as it exits.
pub(super) const STATE_FD: i32 = 6;

/// The most bytes of state a shell may leave for the next call; a larger
/// one is not kept (the next call starts from the one before).
pub(super) const STATE_BYTES: usize = 16 << 10;

/// The shell that runs in the sandbox: it says it started on
/// [`STARTED_FD`], reads its environment from [`ENVIRONMENT_FD`] and runs
/// it, then runs the command (`$1`, no longer a parameter then; the
/// unexported `toolhost_command` holds it) as if it were its own `-c`
/// string. One shell, builtins only: no process is started before the command
/// (another `bash` would cost ~3 ms here). A failed line of the
/// environment (a directory gone) does not stop the command.
const STARTER: &str = "printf 1 >&4 && exec 4>&-; { IFS= read -r -d '' e <&7 || :; }; \
    exec 7<&-; eval \"$e\"; unset e; toolhost_command=$1; set --; eval \"$toolhost_command\"";

/// The start of every shell's environment: on exit the shell writes
/// where it is (while inside the workspace) and what it exports, as shell
/// code, on [`STATE_FD`].
const SAVE_ON_EXIT: &str = "trap '{ case $PWD in /workspace|/workspace/*) \
    printf \"cd -- %q\\n\" \"$PWD\";; esac; export -p; } >&6 2>/dev/null; exec 6>&-' EXIT\n";

/// What the shell runs before the command: the exit trap, then the
/// `state` an earlier call of the session left. The state is shell code
/// the sandbox itself wrote: it only ever runs there.
pub(super) fn environment(state: &[u8]) -> Vec<u8> {
    let mut environment = SAVE_ON_EXIT.as_bytes().to_vec();
    environment.extend_from_slice(state);
    environment.push(b'\n');
    environment
}

/// The descriptor bubblewrap tells the sandbox's first process's host pid
/// on (`--info-fd`), for a sandbox with a way out.
pub(super) const INFO_FD: i32 = 8;

/// The descriptor the sandbox waits on before the command starts
/// (`--block-fd`), for a sandbox with a way out: the host makes the
/// proxy's socket in its network namespace first.
pub(super) const BLOCK_FD: i32 = 9;

/// The descriptor bubblewrap reads the seccomp filter from.
pub(super) const SECCOMP_FD: i32 = 5;

/// The largest private `/tmp`, in bytes (it is memory).
const TMP_BYTES: u64 = 256 << 20;

/// The largest private `/dev/shm`, in bytes (memory too).
const SHM_BYTES: u64 = 64 << 20;

/// The most files one process may hold open.
pub(super) const OPEN_FILES: u64 = 1024;

/// The host's top-level entries that lead into `/usr` on a merged-`/usr`
/// system (symlinks there), or hold libraries and programs themselves.
const SYSTEM_ROOTS: &[&str] = &["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/// The `/etc` files programs need, shown read-only when the host has them.
const ETC_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/nsswitch.conf",
    "/etc/mime.types",
];

/// bubblewrap's arguments for running `command` with `/bin/bash`, the
/// workspace on [`WORKSPACE_FD`], the synthetic `passwd` and `group` in
/// `etc`; `proxied`, the sandbox waits for the host's proxy and its
/// programs are told to use it.
pub(super) fn arguments(
    settings: &BashSettings,
    etc: &Path,
    command: &str,
    proxied: bool,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |parts: &[&str]| args.extend(parts.iter().map(OsString::from));
    if proxied {
        let (info, block) = (INFO_FD.to_string(), BLOCK_FD.to_string());
        push(&["--info-fd", &info, "--block-fd", &block]);
    }
    let seccomp = SECCOMP_FD.to_string();
    push(&[
        "--seccomp",
        &seccomp,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
    ]);
    for root in SYSTEM_ROOTS {
        let host = Path::new("/").join(root);
        match std::fs::read_link(&host) {
            Ok(target) => {
                let target = target.to_string_lossy().into_owned();
                push(&["--symlink", &target, &host.to_string_lossy()]);
            }
            Err(_) if host.is_dir() => {
                let host = host.to_string_lossy().into_owned();
                push(&["--ro-bind", &host, &host]);
            }
            Err(_) => {}
        }
    }
    for file in ETC_FILES {
        push(&["--ro-bind-try", file, file]);
    }
    for (name, path) in [("passwd", etc.join("passwd")), ("group", etc.join("group"))] {
        let path = path.to_string_lossy().into_owned();
        push(&["--ro-bind", &path, &format!("/etc/{name}")]);
    }
    for extra in &settings.read_only {
        let extra = extra.to_string_lossy().into_owned();
        push(&["--ro-bind-try", &extra, &extra]);
    }
    let tmp = TMP_BYTES.to_string();
    let shm = SHM_BYTES.to_string();
    let fd = WORKSPACE_FD.to_string();
    push(&[
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        &shm,
        "--tmpfs",
        "/dev/shm",
        // The device nodes stay usable; nothing new is written in /dev.
        "--remount-ro",
        "/dev",
        "--size",
        &tmp,
        "--tmpfs",
        "/tmp",
        "--bind-fd",
        &fd,
        "/workspace",
        // The sandbox's own root, where the mounts above are made, is
        // read-only once they are: only /workspace and /tmp take writes.
        "--remount-ro",
        "/",
        "--chdir",
        "/workspace",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/workspace",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "TERM",
        "dumb",
        "--setenv",
        "USER",
        "sandbox",
    ]);
    if proxied {
        let proxy = format!("http://127.0.0.1:{}", super::proxy::PORT);
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] {
            push(&["--setenv", name, &proxy]);
        }
        // Node reads them only when asked to.
        push(&["--setenv", "NODE_USE_ENV_PROXY", "1"]);
    }
    push(&[
        "--",
        "/bin/bash",
        "--noprofile",
        "--norc",
        "-c",
        STARTER,
        "/bin/bash",
        command,
    ]);
    args
}

/// The synthetic `passwd` and `group` the sandbox sees: its user, and root
/// and nobody so programs that look them up find them.
pub(super) fn identity_files(uid: u32, gid: u32) -> [(&'static str, String); 2] {
    [
        (
            "passwd",
            format!(
                "root:x:0:0:root:/:/usr/sbin/nologin\n\
                 sandbox:x:{uid}:{gid}:sandbox:/workspace:/bin/bash\n\
                 nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            ),
        ),
        (
            "group",
            format!("root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n"),
        ),
    ]
}
