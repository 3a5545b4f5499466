//! `toolhost new` and `toolhost build`, run as an author would: a new
//! project in each language builds, passes `check --strict` and answers a
//! call; a missing toolchain names its install command; a toolchain's own
//! error reaches the author as it printed it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `toolhost` in `cwd`, with the kit written to a folder of the test run
/// and Rust builds sharing the guests' target directory.
fn toolhost(cwd: &Path, args: &[&str]) -> Output {
    toolhost_with(cwd, args, &[])
}

fn toolhost_with(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .current_dir(cwd)
        .args(args)
        .env("TOOLHOST_KIT_DIR", target.join("kit"))
        .env("CARGO_TARGET_DIR", repo().join("target/guests"))
        .env("TOOLHOST_JS_DEPS", repo().join("plugins/ts/node_modules"));
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run toolhost")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_new_project_in_each_language_builds_checks_and_answers() {
    let host = tempfile::tempdir().unwrap();
    let mut built = Vec::new();
    for lang in ["rust", "python", "ts"] {
        let name = format!("hello_{lang}");
        let out = toolhost(host.path(), &["new", &name, "--lang", lang]);
        assert!(out.status.success(), "{lang}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("toolhost build ./{name}")),
            "{}",
            text(&out)
        );

        let out = toolhost(host.path(), &["build", &name]);
        if !out.status.success() && common::skip_missing_toolchain(lang, &text(&out)) {
            continue;
        }
        assert!(out.status.success(), "{lang}: {}", text(&out));
        assert!(host.path().join(format!("tools/{name}.wasm")).is_file());
        built.push(name);
    }
    // A second `new` of the same name refuses to overwrite it.
    let out = toolhost(host.path(), &["new", "hello_rust", "--lang", "python"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("already exists"), "{}", text(&out));

    let out = toolhost(host.path(), &["check", "--strict"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!(
        "{} tools loaded, 0 failed, 0 warnings",
        built.len()
    )));
    for name in &built {
        let out = toolhost(
            host.path(),
            &["tool", "call", name, "--input", r#"{"name": "Ada"}"#],
        );
        assert!(out.status.success(), "{name}: {}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "Hello, Ada!\n",
            "{name}"
        );
    }
}

#[test]
fn a_missing_toolchain_names_the_install_command() {
    let host = tempfile::tempdir().unwrap();
    let toolchains = tempfile::tempdir().unwrap();
    for lang in ["python", "ts"] {
        let out = toolhost(host.path(), &["new", &format!("t_{lang}"), "--lang", lang]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let toolchains = toolchains.path().to_str().unwrap();
    let bare_path = [
        ("PATH", "/nonexistent"),
        ("TOOLHOST_JS_DEPS", ""),
        ("TOOLHOST_TOOLCHAINS_DIR", toolchains),
    ];
    let out = toolhost_with(host.path(), &["build", "t_python"], &bare_path);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("python3 was not found"), "{said}");
    assert!(said.contains("componentize-py 0.25.1"), "{said}");
    assert!(
        said.contains("pip install componentize-py==0.25.1"),
        "{said}"
    );

    let out = toolhost_with(host.path(), &["build", "t_ts"], &bare_path);
    let said = text(&out);
    assert!(said.contains("node was not found"), "{said}");
}

/// `PATH` without the folders that hold componentize-py (the test run's
/// virtualenv), so a build must find or install its own.
fn path_without_componentize_py() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("componentize-py").exists())
        .collect();
    std::env::join_paths(kept)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_missing_toolchain_is_installed_once_into_toolhosts_own_cache() {
    let host = tempfile::tempdir().unwrap();
    let toolchains = tempfile::tempdir().unwrap();
    let path = path_without_componentize_py();
    let env = [
        ("PATH", path.as_str()),
        ("TOOLHOST_JS_DEPS", ""),
        (
            "TOOLHOST_TOOLCHAINS_DIR",
            toolchains.path().to_str().unwrap(),
        ),
    ];
    for (lang, installs) in [("python", "componentize-py 0.25.1"), ("ts", "esbuild@")] {
        let name = format!("own_{lang}");
        let out = toolhost(host.path(), &["new", &name, "--lang", lang]);
        assert!(out.status.success(), "{}", text(&out));
        let out = toolhost_with(host.path(), &["build", &name], &env);
        if !out.status.success() && common::skip_missing_toolchain(lang, &text(&out)) {
            continue;
        }
        let said = text(&out);
        assert!(out.status.success(), "{lang}: {said}");
        assert!(
            said.contains(&format!("installing {installs}")),
            "{lang}: {said}"
        );
        assert!(said.contains(toolchains.path().to_str().unwrap()), "{said}");

        let out = toolhost_with(host.path(), &["build", &name], &env);
        assert!(out.status.success(), "{lang}: {}", text(&out));
        assert!(
            !text(&out).contains("installing"),
            "installed once: {}",
            text(&out)
        );
        let out = toolhost(
            host.path(),
            &["tool", "call", &name, "--input", r#"{"name": "Ada"}"#],
        );
        assert!(out.status.success(), "{name}: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello, Ada!\n");
    }
}

#[test]
fn a_toolchains_own_error_is_shown_as_it_printed_it() {
    let host = tempfile::tempdir().unwrap();
    let cases = [
        (
            "broken_py",
            "python",
            "tool.py",
            "def oops(:\n",
            "SyntaxError",
        ),
        (
            "broken_ts",
            "ts",
            "tool.ts",
            "export default {;\n",
            "tool.ts:1:16",
        ),
        (
            "broken_rs",
            "rust",
            "src/lib.rs",
            "fn main( {}\n",
            "unclosed delimiter",
        ),
    ];
    for (name, lang, file, source, expected) in cases {
        let out = toolhost(host.path(), &["new", name, "--lang", lang]);
        assert!(out.status.success(), "{}", text(&out));
        std::fs::write(host.path().join(name).join(file), source).unwrap();
        let out = toolhost(host.path(), &["build", name]);
        let said = text(&out);
        if common::skip_missing_toolchain(lang, &said) {
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains(&format!("[1/1] {name} ({lang}): FAILED")),
            "{said}"
        );
        assert!(said.contains(expected), "{lang}: {said}");
        assert!(!host.path().join(format!("tools/{name}.wasm")).exists());
    }
}

#[test]
fn build_without_a_project_says_what_one_is() {
    let empty = tempfile::tempdir().unwrap();
    let out = toolhost(empty.path(), &["build"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out);
    assert!(said.contains("no tool project in ."), "{said}");
    assert!(
        said.contains("tool.py") && said.contains("Cargo.toml"),
        "{said}"
    );
}

#[test]
fn a_relative_cargo_target_dir_is_read_from_where_toolhost_runs() {
    let host = tempfile::tempdir().unwrap();
    let out = toolhost(host.path(), &["new", "rel_rust", "--lang", "rust"]);
    assert!(out.status.success(), "{}", text(&out));
    // The test run's guest target directory, relative to the host folder:
    // read from the project folder instead, it names a folder that is not.
    let shared = repo().join("target/guests").canonicalize().unwrap();
    let up = host.path().canonicalize().unwrap().components().count() - 1;
    let relative = Path::new(&"../".repeat(up)).join(shared.strip_prefix("/").unwrap());
    let out = toolhost_with(
        host.path(),
        &["build", "rel_rust"],
        &[("CARGO_TARGET_DIR", relative.to_str().unwrap())],
    );
    if !out.status.success() && common::skip_missing_toolchain("rust", &text(&out)) {
        return;
    }
    assert!(out.status.success(), "{}", text(&out));
    assert!(shared.join("wasm32-wasip2/release/rel_rust.wasm").is_file());
    let misread = host.path().join("rel_rust").join(&relative);
    assert!(!misread.exists(), "{} was made", misread.display());
}

/// The first ```sh block of a Markdown page, its comments dropped.
fn first_sh_block(page: &str) -> String {
    page.split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```sh block")
        .lines()
        .map(|line| line.split(" #").next().unwrap_or(line).trim_end())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where rustup and cargo keep their toolchains and registry: the test
/// run's, whatever `HOME` the author's commands get.
fn rust_homes() -> [(&'static str, PathBuf); 2] {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let var = |name: &str, default: &str| {
        std::env::var_os(name).map_or_else(|| home.join(default), PathBuf::from)
    };
    [
        ("CARGO_HOME", var("CARGO_HOME", ".cargo")),
        ("RUSTUP_HOME", var("RUSTUP_HOME", ".rustup")),
    ]
}

/// `PATH` as a new author has it: the installed `toolhost` first, and none
/// of the test run's own toolchains (its virtualenv, the repository's npm
/// packages).
fn a_new_authors_path() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolhost"))
        .parent()
        .expect("the binary's folder")
        .to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let repo = repo().canonicalize().expect("the repository");
    let kept = std::env::split_paths(&path).filter(|dir| {
        !dir.join("componentize-py").exists()
            && !dir.canonicalize().is_ok_and(|dir| dir.starts_with(&repo))
    });
    std::env::join_paths(std::iter::once(bin).chain(kept))
        .expect("PATH")
        .to_string_lossy()
        .into_owned()
}

/// The getting-started page run as a new author runs it, in each language:
/// outside the repository, on the machine's default Rust toolchain
/// (whatever targets it has), with toolhost's caches in a fresh home and
/// none of the test run's toolchains on `PATH`. `toolhost build` installs
/// what each language needs itself: the Rust target, componentize-py, the
/// JavaScript packages.
#[test]
fn the_first_tool_page_runs_as_written_in_each_language() {
    let page = std::fs::read_to_string(repo().join("docs/getting-started/first-tool.md"))
        .expect("docs/getting-started/first-tool.md");
    let commands = first_sh_block(&page);
    assert!(
        commands.contains("toolhost new hello --lang python"),
        "{commands}"
    );
    let home = tempfile::tempdir().unwrap();
    let path = a_new_authors_path();
    // A machine whose rustup has no default toolchain (installed with
    // `--default-toolchain none`) builds with the repository's own.
    let default = Command::new("rustup")
        .arg("default")
        .current_dir(home.path())
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .is_ok_and(|out| out.status.success());
    let pinned = std::fs::read_to_string(repo().join("rust-toolchain.toml"))
        .expect("rust-toolchain.toml")
        .lines()
        .find_map(|line| line.strip_prefix("channel = "))
        .map(|channel| channel.trim_matches('"').to_string())
        .expect("a channel in rust-toolchain.toml");
    if !default {
        eprintln!("no default Rust toolchain: the Rust tool builds with {pinned}");
    }
    for lang in ["rust", "python", "ts"] {
        let dir = tempfile::tempdir().unwrap();
        let script = commands.replace("--lang python", &format!("--lang {lang}"));
        let mut command = Command::new("sh");
        command
            .arg("-ec")
            .arg(&script)
            .current_dir(dir.path())
            .env("HOME", home.path())
            .env("PATH", &path)
            // Shared between runs only to spare rebuilding the SDK's
            // dependencies: what is built there is the author's project.
            .env("CARGO_TARGET_DIR", repo().join("target/getting-started"))
            .envs(rust_homes());
        for var in [
            "RUSTUP_TOOLCHAIN",
            "CARGO",
            "RUSTC",
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_TARGET",
            "VIRTUAL_ENV",
            "TOOLHOST_JS_DEPS",
            "TOOLHOST_KIT_DIR",
            "TOOLHOST_TOOLCHAINS_DIR",
        ] {
            command.env_remove(var);
        }
        if !default {
            command.env("RUSTUP_TOOLCHAIN", &pinned);
        }
        let out = command.output().expect("sh");
        if !out.status.success() && common::skip_missing_toolchain(lang, &text(&out)) {
            continue;
        }
        assert!(out.status.success(), "{lang}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with("Hello, Ada!\n"),
            "{lang}: {}",
            text(&out)
        );
        assert!(dir.path().join("tools/hello.wasm").is_file());
    }
}
