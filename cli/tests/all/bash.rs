//! The toolset's `bash`, attacked as a tool author would: reading and
//! writing the host outside the workspace, the network, capabilities and
//! nested namespaces, setuid files, a process meant to outlive the call,
//! a fork bomb, a memory bomb, an output flood, and symlinks and FIFOs
//! left for the host's own file tools to trip on. Each runs in the real
//! sandbox (bubblewrap); without `bwrap` the tests skip, and with
//! `CI=true` that is a failure.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::{CallOptions, CallResult, Host, SessionSpec};

/// A host with the toolset, `bash` given `timeout_ms`, and a session
/// whose workspace is a temporary folder; `None` (skipped) where the
/// sandbox does not work, unless in CI.
struct Shell {
    dir: tempfile::TempDir,
    workspace: tempfile::TempDir,
    host: Host,
}

impl Shell {
    async fn new() -> Option<Self> {
        Self::with("").await
    }

    /// The same, the toolset's `bash` settings given `bash` (TOML keys).
    async fn with(bash: &str) -> Option<Self> {
        Self::configured(&format!("bash = {{ {bash} }}")).await
    }

    /// The same, the toolset given `toolset` (TOML lines).
    async fn configured(toolset: &str) -> Option<Self> {
        let config = format!(
            "[toolset]\ntype = \"agent_toolset\"\n{toolset}\n[tools.bash]\ntimeout_ms = 8000\n"
        );
        let (dir, host) = common::host(&[], &config).await;
        if host.registry().get("bash").is_none() {
            let why = host.listing()["unavailable"].to_string();
            assert!(
                std::env::var_os("CI").is_none(),
                "bash is unavailable in CI: {why}"
            );
            eprintln!("skipped: bash is unavailable here: {why}");
            return None;
        }
        Some(Self {
            dir,
            workspace: tempfile::tempdir().unwrap(),
            host,
        })
    }

    /// A session of its own over the workspace.
    fn session(&self) -> CallOptions {
        common::session(SessionSpec {
            workspace: Some(self.workspace.path().to_path_buf()),
            ..SessionSpec::default()
        })
    }

    /// Call `tool` in a session of its own.
    async fn call(&self, tool: &str, input: Value) -> Arc<CallResult> {
        Box::pin(self.call_in(&self.session(), tool, input)).await
    }

    /// Call `tool` in the session of `options`.
    async fn call_in(&self, options: &CallOptions, tool: &str, input: Value) -> Arc<CallResult> {
        // On the heap: a test holds many calls' futures in its own.
        Box::pin(self.host.call(tool, input, options))
            .await
            .unwrap_or_else(|e| panic!("{tool} refused: {e}"))
    }

    /// Run `command` in the session of `options`: its standard output.
    async fn run_in(&self, options: &CallOptions, command: &str, restart: bool) -> String {
        let input = json!({ "command": command, "restart": restart });
        let result = Box::pin(self.call_in(options, "bash", input)).await;
        result.output.structured.as_ref().unwrap()["stdout"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Run `command`: its exit code, standard output and error.
    async fn run(&self, command: &str) -> (i64, String, String) {
        let result = Box::pin(self.call("bash", json!({ "command": command }))).await;
        let structured = &result.output.structured;
        let Some(ran) = structured else {
            panic!("{command}: no structured result: {}", result.result);
        };
        (
            ran["exit_code"].as_i64().unwrap(),
            ran["stdout"].as_str().unwrap().to_string(),
            ran["stderr"].as_str().unwrap().to_string(),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_works_in_the_workspace_and_sees_nothing_else_of_the_host() {
    let Some(shell) = Shell::new().await else {
        return;
    };
    let (code, out, _) = shell.run("echo hi > made.txt && cat made.txt && pwd").await;
    assert_eq!((code, out.as_str()), (0, "hi\n/workspace\n"));
    let made = std::fs::read_to_string(shell.workspace.path().join("made.txt")).unwrap();
    assert_eq!(made, "hi\n");
    // A command that fails ran once: only a sandbox never set up is made
    // again.
    let (code, _, _) = shell.run("echo once >> ran.txt; exit 1").await;
    assert_eq!(code, 1);
    let ran = std::fs::read_to_string(shell.workspace.path().join("ran.txt")).unwrap();
    assert_eq!(ran, "once\n");

    // The host's files: its secrets, its config, other folders.
    let config = shell.dir.path().join("toolhost.toml");
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("secret"), "other session").unwrap();
    for path in [
        "/etc/shadow".to_string(),
        "/root".to_string(),
        "/home".to_string(),
        config.display().to_string(),
        other.path().join("secret").display().to_string(),
        "/proc/1/root/etc/shadow".to_string(),
    ] {
        let (code, out, err) = shell.run(&format!("cat {path} || ls {path}")).await;
        assert_ne!(code, 0, "{path} was read: {out}");
        assert!(
            !out.contains("other session") && !out.contains("[toolset]"),
            "{out}"
        );
        assert!(!err.is_empty(), "{path}");
    }
    // Writing outside the workspace and /tmp.
    for target in [
        "/usr/owned",
        "/owned",
        "/etc/owned",
        "/bin/owned",
        "/dev/owned",
    ] {
        let (code, _, _) = shell.run(&format!("echo x > {target}")).await;
        assert_ne!(code, 0, "{target} was written");
    }
    let (code, _, _) = shell.run("echo x > /tmp/private && cat /tmp/private").await;
    assert_eq!(code, 0, "the private /tmp is writable");

    // No descriptor of the host's: only the standard ones, and where the
    // shell leaves its state.
    let (_, fds, _) = shell.run("ls /proc/self/fd | tr '\\n' ' '").await;
    assert_eq!(fds.trim(), "0 1 2 3 6", "3 is ls's own");

    // No capability, no nested user namespace, no host processes.
    let (_, caps, _) = shell.run("grep CapEff /proc/self/status").await;
    assert_eq!(
        caps.split_whitespace().nth(1),
        Some("0000000000000000"),
        "{caps}"
    );
    let (code, _, _) = shell.run("unshare -U true").await;
    assert_ne!(code, 0, "a nested user namespace was made");
    let (_, pids, _) = shell.run("ls /proc | grep -c '^[0-9]'").await;
    let pids: usize = pids.trim().parse().unwrap();
    assert!(pids < 10, "{pids} processes are visible");

    // The seccomp filter: what a shell never needs is refused, clone3 is
    // ENOSYS (libc falls back to clone), x32 calls are refused.
    #[cfg(target_arch = "x86_64")]
    {
        let probe = "import ctypes\n\
            libc = ctypes.CDLL(None, use_errno=True)\n\
            for name, number in [('ptrace', 101), ('keyctl', 250), ('bpf', 321), \
            ('unshare', 272), ('io_uring_setup', 425), ('clone3', 435), \
            ('x32 getpid', 0x40000000 | 39), ('mount', 165)]:\n\
            \x20   ctypes.set_errno(0)\n\
            \x20   result = libc.syscall(number, 0, 0, 0, 0, 0)\n\
            \x20   print(name, result, ctypes.get_errno())\n";
        std::fs::write(shell.workspace.path().join("probe.py"), probe).unwrap();
        let (code, out, err) = shell.run("python3 probe.py").await;
        assert_eq!(code, 0, "{err}");
        for refused in [
            "ptrace",
            "keyctl",
            "bpf",
            "unshare",
            "io_uring_setup",
            "x32 getpid",
            "mount",
        ] {
            assert!(
                out.contains(&format!("{refused} -1 1\n")),
                "{refused}: {out}"
            );
        }
        assert!(out.contains("clone3 -1 38\n"), "{out}");
        let (code, out, _) = shell.run("(echo child) | cat").await;
        assert_eq!((code, out.as_str()), (0, "child\n"), "forks still work");
    }

    // A setuid file made in the workspace gives nothing.
    let (code, out, _) = shell
        .run("cp /usr/bin/bash ./sh && chmod u+s ./sh && ./sh -p -c 'id -u'")
        .await;
    assert_eq!(code, 0);
    assert_ne!(out.trim(), "0", "a setuid file gave root");
    use std::os::unix::fs::MetadataExt as _;
    let made = std::fs::metadata(shell.workspace.path().join("sh")).unwrap();
    assert_ne!(made.uid(), 0, "the host holds a setuid-root file");

    // No network: not loopback, not anywhere.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (code, _, _) = shell
        .run(&format!("exec 3<>/dev/tcp/127.0.0.1/{port}"))
        .await;
    assert_ne!(code, 0, "loopback was reached");
    let (code, _, _) = shell.run("exec 3<>/dev/tcp/1.1.1.1/80").await;
    assert_ne!(code, 0, "the internet was reached");
}

/// The processes of the host's sandbox user still alive.
/// Whether the sandbox's processes are bounded and counted in control
/// groups here: a host running as root with cgroup v1's controllers (CI's
/// machines and these), where nothing less is accepted in CI.
fn grouped() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let v1 = ["memory", "pids", "cpuacct"].iter().all(|c| {
        std::path::Path::new("/sys/fs/cgroup")
            .join(c)
            .join("cgroup.procs")
            .exists()
    });
    if std::env::var_os("CI").is_some() {
        assert!(root && v1, "CI runs as root with cgroup v1 controllers");
    }
    root && v1
}

fn sandbox_processes() -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|entry| entry.metadata().is_ok_and(|m| m.uid() == 65534))
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("cmdline")).ok())
        .map(|line| line.replace('\0', " "))
        .filter(|line| line.contains("toolhost-test-marker"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_ends_at_its_deadline_and_nothing_outlives_a_call() {
    let Some(shell) = Shell::new().await else {
        return;
    };
    let started = Instant::now();
    let result = shell
        .call("bash", json!({ "command": "sleep 30", "timeout_ms": 1000 }))
        .await;
    assert!(result.is_error, "{}", result.result);
    assert!(
        result.result.to_string().contains("timeout_ms"),
        "{}",
        result.result
    );
    assert_eq!(result.trace.limit.map(|l| l.name()), Some("timeout"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // A process meant to outlive the call, and one left running at the
    // deadline: both gone once the call answers.
    let (code, out, err) = shell
        .run("(exec -a toolhost-test-marker sleep 60 &) ; echo started")
        .await;
    assert_eq!((code, out.as_str()), (0, "started\n"), "{err}");
    shell
        .call(
            "bash",
            json!({ "command": "exec -a toolhost-test-marker sleep 60", "timeout_ms": 500 }),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sandbox_processes(), Vec::<String>::new());

    // A fork bomb meets the process bound: with control groups it ends the
    // call by name at once, with process limits alone at the deadline;
    // nothing of it is left, and the next call runs.
    let started = Instant::now();
    let bomb = shell
        .call(
            "bash",
            json!({ "command": "bomb(){ bomb | bomb & }; bomb; sleep 30", "timeout_ms": 3000 }),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let expected = if grouped() { "processes" } else { "timeout" };
    assert_eq!(
        bomb.trace.limit.map(|l| l.name()),
        Some(expected),
        "{}",
        bomb.result
    );
    let (code, out, _) = shell.run("echo alive").await;
    assert_eq!((code, out.as_str()), (0, "alive\n"));
    // The bounds, as the sandbox sees them (address space in KiB, file
    // size in KiB, open files): grouped, memory is bounded in total
    // instead of in each process's address space.
    let (code, bounds, _) = shell
        .run("ulimit -v -f -n | awk '{print $NF}' | tr '\\n' ' '")
        .await;
    let expected = if grouped() {
        "unlimited 1048576 1024"
    } else {
        "1048576 1048576 1024"
    };
    assert_eq!((code, bounds.trim()), (0, expected), "{bounds}");

    // A memory bomb: grouped, the kernel kills it past 1 GiB in total and
    // the call ends naming memory; otherwise it meets the address-space
    // bound at once.
    let bomb = shell
        .call(
            "bash",
            json!({ "command": "python3 -c 'b = b\"x\" * 2_000_000_000'" }),
        )
        .await;
    if grouped() {
        assert_eq!(
            bomb.trace.limit.map(|l| l.name()),
            Some("memory"),
            "{}",
            bomb.result
        );
        assert!(
            bomb.result.to_string().contains("bash.memory_mb"),
            "{}",
            bomb.result
        );
        assert_eq!(bomb.usage.limit.map(|l| l.value), Some(1 << 30));
    } else {
        let err = bomb.output.structured.as_ref().unwrap()["stderr"].to_string();
        assert!(err.contains("MemoryError"), "{err}");
    }

    // An output flood is cut.
    let flood = shell
        .call("bash", json!({ "command": "yes | head -c 5000000" }))
        .await;
    let ran = flood.output.structured.clone().unwrap();
    assert_eq!(ran["truncated"], true);
    assert_eq!(ran["stdout"].as_str().unwrap().len(), 64 << 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_limits_end_the_call_by_name_and_the_receipt_counts_what_it_used() {
    let Some(shell) = Shell::with("cpu_ms = 300, file_mb = 1, processes = 16").await else {
        return;
    };
    let limit = |result: &CallResult| result.usage.limit.map(|l| (l.name.name(), l.value));

    // CPU time: a busy loop ends at its 300 ms (grouped) or its process's
    // CPU second, well before the 8 s timeout.
    let started = Instant::now();
    let busy = shell
        .call(
            "bash",
            json!({ "command": "echo looping; while :; do :; done" }),
        )
        .await;
    assert!(busy.is_error, "{}", busy.result);
    assert_eq!(limit(&busy), Some(("cpu", 300)), "{}", busy.result);
    let said = busy.result.to_string();
    assert!(
        said.contains("bash.cpu_ms") && said.contains("looping"),
        "{said}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(7),
        "{:?}",
        started.elapsed()
    );

    // A file past `file_mb`: the process writing it ends there, and the
    // call names the limit; the file holds exactly the bound.
    let big = shell
        .call(
            "bash",
            json!({ "command": "echo before; head -c 2000000 /dev/zero > big" }),
        )
        .await;
    assert_eq!(limit(&big), Some(("file_size", 1 << 20)), "{}", big.result);
    assert!(
        big.result.to_string().contains("bash.file_mb"),
        "{}",
        big.result
    );
    let written = std::fs::metadata(shell.workspace.path().join("big")).unwrap();
    assert_eq!(written.len(), 1 << 20);

    if grouped() {
        // Processes, counted per call: the 17th ends it.
        let started = Instant::now();
        let many = shell
            .call(
                "bash",
                json!({ "command": "for i in $(seq 40); do sleep 5 & done; wait" }),
            )
            .await;
        assert_eq!(limit(&many), Some(("processes", 16)), "{}", many.result);
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }

    // The receipt: output written (kept or not) and, grouped, CPU time,
    // the most memory and the most processes at once.
    let counted = shell
        .call(
            "bash",
            json!({ "command": "yes | head -c 100000; python3 -c 'b = b\"x\" * 50_000_000'" }),
        )
        .await;
    assert!(!counted.is_error, "{}", counted.result);
    let used = counted.usage.sandbox.expect("a sandbox's receipt");
    assert_eq!(used.output_bytes, 100_000);
    if grouped() {
        assert!(used.cpu_us.unwrap() > 0, "{used:?}");
        assert!(used.peak_memory_bytes.unwrap() >= 50_000_000, "{used:?}");
        assert!(used.peak_processes.unwrap_or(3) >= 3, "{used:?}");
    }
    let (code, out, _) = shell.run("echo alive").await;
    assert_eq!((code, out.as_str()), (0, "alive\n"));
}

/// A loopback HTTP server answering every request with `body`; each
/// connection it holds open counted in the returned gauge.
async fn web_server(body: &'static str) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let gauge = Arc::clone(&open);
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let gauge = Arc::clone(&gauge);
            tokio::spawn(async move {
                gauge.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap_or(0) == 1
                {
                    head.push(byte[0]);
                }
                if body == "hang" {
                    // Never answers; holds the connection until the peer closes it.
                    let _ = stream.read(&mut byte).await;
                } else {
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                }
                gauge.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    });
    (port, open)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_reaches_only_what_the_toolsets_http_names_through_the_hosts_proxy() {
    let (allowed, _) = web_server("hello from the allowed origin").await;
    let (other, _) = web_server("the other origin's secret").await;
    let (hanging, open) = web_server("hang").await;
    let toolset = format!(
        "http = [\"http://127.0.0.1:{allowed}\", \"https://127.0.0.1:{allowed}\", \
         \"http://localhost:{other}\", \"http://127.0.0.1:{hanging}\"]"
    );
    let Some(shell) = Shell::configured(&toolset).await else {
        return;
    };
    if !grouped() {
        // The proxy's socket is made in the sandbox's network namespace,
        // which takes a host running as root.
        eprintln!("skipped: the host does not run as root");
        return;
    }
    let registry = shell.host.registry();
    let description = &registry.get("bash").unwrap().metadata().description;
    assert!(
        description.contains(&format!("http://127.0.0.1:{allowed}")),
        "{description}"
    );

    // Plain HTTP, and HTTPS's tunnel (CONNECT, here carrying plain bytes),
    // to the origin the list names.
    let hello = "hello from the allowed origin";
    for (command, said) in [
        (
            format!("curl -sS http://127.0.0.1:{allowed}/a"),
            hello.to_string(),
        ),
        (
            format!("curl -sS --proxytunnel http://127.0.0.1:{allowed}/b"),
            hello.to_string(),
        ),
        (
            format!(
                "python3 -c \"import urllib.request as u; \
                 print(u.urlopen('http://127.0.0.1:{allowed}/c').read().decode())\""
            ),
            format!("{hello}\n"),
        ),
    ] {
        let (code, out, err) = shell.run(&command).await;
        assert_eq!((code, out), (0, said), "{command}: {err}");
    }

    // What the list does not name: another port, another scheme, a name
    // resolving to loopback (only a literal address the list names is
    // reached), a public name; each refused, and said why.
    let refused = [
        (
            format!("http://127.0.0.1:{other}/"),
            "is not in the toolset's `http` allow-list",
        ),
        (
            format!("https://127.0.0.1:{other}/"),
            "is not in the toolset's `http` allow-list",
        ),
        (
            format!("http://localhost:{other}/"),
            "not globally routable",
        ),
        (
            "https://example.org/".to_string(),
            "is not in the toolset's `http` allow-list",
        ),
    ];
    for (url, why) in refused {
        let result = shell
            .call("bash", json!({ "command": format!("curl -sSf {url}") }))
            .await;
        let said = result.result.to_string();
        assert!(result.is_error, "{url} was reached: {said}");
        assert!(!said.contains("secret"), "{said}");
        assert!(said.contains(why), "{url}: {said}");
    }
    // bubblewrap's info and block descriptors are not left to the shell.
    let (_, fds, _) = shell.run("ls /proc/self/fd | tr '\\n' ' '").await;
    assert_eq!(fds.trim(), "0 1 2 3 6", "3 is ls's own");
    // Around the proxy: nothing else listens in the sandbox, and nothing
    // routes out.
    for target in [
        format!("127.0.0.1', {allowed}"),
        "10.0.0.1', 80".to_string(),
        "1.1.1.1', 53".to_string(),
    ] {
        let (code, _, err) = shell
            .run(&format!(
                "python3 -c \"import socket; socket.create_connection(('{target}), timeout=2)\""
            ))
            .await;
        assert_ne!(code, 0, "{target} was reached");
        assert!(err.contains("Error"), "{err}");
    }
    // Hostile clients of the proxy: a head past 16 KiB, not HTTP, many at
    // once; each answered, the next call fine.
    let (code, out, _) = shell
        .run(&format!(
            "curl -s -o /dev/null -w '%{{http_code}}' -H \"X-Big: $(head -c 20000 /dev/zero | tr '\\0' a)\" \
             http://127.0.0.1:{allowed}/"
        ))
        .await;
    assert_eq!((code, out.as_str()), (0, "400"));
    let (code, out, _) = shell
        .run("exec 3<>/dev/tcp/127.0.0.1/3128; printf 'hello\\r\\n\\r\\n' >&3; head -c 12 <&3")
        .await;
    assert_eq!((code, out.as_str()), (0, "HTTP/1.1 400"));
    let (code, out, err) = shell
        .run(&format!(
            "for i in $(seq 24); do curl -sS -o /tmp/got$i http://127.0.0.1:{allowed}/$i & done; wait; cat /tmp/got* | grep -o hello | wc -l"
        ))
        .await;
    assert_eq!((code, out.trim()), (0, "24"), "{err}");
    // Each connection is counted as a request in the receipt.
    let counted = shell
        .call("bash", json!({ "command": format!("curl -sS http://127.0.0.1:{allowed}/ http://127.0.0.1:{allowed}/") }))
        .await;
    assert_eq!(counted.usage.http_requests, 2, "{}", counted.result);
    assert!(counted.usage.http_bytes_received > 0);

    // A server that never answers: the call ends at its deadline, and the
    // connection through the proxy ends with it.
    let started = Instant::now();
    let stuck = shell
        .call(
            "bash",
            json!({ "command": format!("curl -sS http://127.0.0.1:{hanging}/"), "timeout_ms": 1500 }),
        )
        .await;
    assert_eq!(stuck.usage.limit.map(|l| l.name.name()), Some("timeout"));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let closed = Instant::now();
    while open.load(std::sync::atomic::Ordering::SeqCst) > 0 {
        assert!(
            closed.elapsed() < Duration::from_secs(5),
            "the upstream connection outlived the call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, out, _) = shell.run("echo alive").await;
    assert_eq!((code, out.as_str()), (0, "alive\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_past_its_calls_request_budget_is_refused_and_told() {
    let (allowed, _) = web_server("hello from the allowed origin").await;
    let toolset =
        format!("http = [\"http://127.0.0.1:{allowed}\"]\n[defaults]\nmax_http_requests = 2");
    let Some(shell) = Shell::configured(&toolset).await else {
        return;
    };
    if !grouped() {
        eprintln!("skipped: the host does not run as root");
        return;
    }
    // Five requests, one connection each: two go, three are refused with
    // 429 and the reason; the receipt counts the five attempts (as it
    // does a component's, refused ones included).
    let result = shell
        .call(
            "bash",
            json!({ "command": format!(
                "for i in 1 2 3 4 5; do curl -s -o /dev/null -w '%{{http_code}} ' http://127.0.0.1:{allowed}/$i; done"
            ) }),
        )
        .await;
    let said = result.result.to_string();
    assert!(!result.is_error, "{said}");
    assert!(said.contains("200 200 429 429 429"), "{said}");
    assert!(said.contains("max_requests_per_call"), "{said}");
    assert_eq!(result.usage.http_requests, 5, "{said}");
    let refused = result.result["network_refused"].as_array().unwrap();
    assert_eq!(refused.len(), 3, "{said}");
    // The next call has a budget of its own.
    let (code, out, _) = shell
        .run(&format!("curl -s http://127.0.0.1:{allowed}/again"))
        .await;
    assert_eq!((code, out.as_str()), (0, "hello from the allowed origin"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_bash_leaves_in_the_workspace_does_not_trip_the_hosts_file_tools() {
    let Some(shell) = Shell::new().await else {
        return;
    };
    let (code, _, err) = shell
        .run(
            "ln -s /etc/shadow leak && ln -s / root && mkfifo pipe && ln made hard 2>/dev/null; \
              echo x > made && ln made hard && truncate -s 900M sparse",
        )
        .await;
    assert_eq!(code, 0, "{err}");
    for path in ["leak", "root/etc/shadow", "pipe"] {
        let started = Instant::now();
        let read = shell.call("read", json!({ "path": path })).await;
        assert!(read.is_error, "{path} was read: {}", read.result);
        assert!(started.elapsed() < Duration::from_secs(10), "{path} hung");
    }
    let sparse = shell.call("read", json!({ "path": "sparse" })).await;
    assert!(
        sparse.result.to_string().len() < 2 << 20,
        "a 100 GB file was read whole"
    );
    let (code, out, _) = shell.run("cat hard").await;
    assert_eq!((code, out.as_str()), (0, "x\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_shell_keeps_its_directory_and_exports_and_nothing_else() {
    let Some(shell) = Shell::new().await else {
        return;
    };
    let session = shell.session();
    let report = "pwd; echo \"${GREETING:-none} ${LOCAL:-none} ${BIG:+big}\"";
    shell
        .run_in(
            &session,
            "mkdir -p a/b && cd a/b && export GREETING='hi there' && LOCAL=x",
            false,
        )
        .await;
    let out = shell.run_in(&session, report, false).await;
    assert_eq!(out, "/workspace/a/b\nhi there none \n");

    // Another session has a shell of its own.
    let other = shell.run_in(&shell.session(), report, false).await;
    assert_eq!(other, "/workspace\nnone none \n");

    // A directory outside the workspace is not kept; the exports are.
    shell.run_in(&session, "cd /tmp", false).await;
    let out = shell.run_in(&session, report, false).await;
    assert_eq!(out, "/workspace\nhi there none \n");

    // A call its deadline ends keeps the state before it.
    let ended = shell
        .call_in(
            &session,
            "bash",
            json!({ "command": "cd a && export GREETING=changed && sleep 30", "timeout_ms": 500 }),
        )
        .await;
    assert!(ended.is_error);
    let out = shell.run_in(&session, report, false).await;
    assert_eq!(out, "/workspace\nhi there none \n");

    // A state larger than 16 KiB is not kept: the one before stays.
    shell
        .run_in(
            &session,
            "cd a && export BIG=$(head -c 20000 /dev/zero | tr '\\0' x)",
            false,
        )
        .await;
    let out = shell.run_in(&session, report, false).await;
    assert_eq!(out, "/workspace\nhi there none \n");

    // What a shell writes where its state goes runs only in the sandbox.
    shell
        .run_in(&session, "echo 'echo planted > /etc/planted' >&6", false)
        .await;
    let out = shell
        .run_in(&session, "cat /etc/planted 2>&1; pwd", false)
        .await;
    assert!(out.contains("No such file"), "{out}");
    assert!(!std::path::Path::new("/etc/planted").exists());

    // `restart` starts afresh.
    let out = shell.run_in(&session, report, true).await;
    assert_eq!(out, "/workspace\nnone none \n");
    let out = shell.run_in(&session, report, false).await;
    assert_eq!(out, "/workspace\nnone none \n");
}
