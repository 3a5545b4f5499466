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
    for lang in ["python", "ts"] {
        let out = toolhost(host.path(), &["new", &format!("t_{lang}"), "--lang", lang]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let bare_path = [("PATH", "/nonexistent"), ("TOOLHOST_JS_DEPS", "")];
    let out = toolhost_with(host.path(), &["build", "t_python"], &bare_path);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("componentize-py was not found"), "{said}");
    assert!(
        said.contains("pip install componentize-py==0.25.1"),
        "{said}"
    );

    let out = toolhost_with(host.path(), &["build", "t_ts"], &bare_path);
    let said = text(&out);
    assert!(said.contains("node was not found"), "{said}");

    // Node is there but the project has no packages (no `npm install` yet).
    if let Some(path) = std::env::var_os("PATH") {
        let path = path.to_string_lossy().into_owned();
        let out = toolhost_with(
            host.path(),
            &["build", "t_ts"],
            &[("PATH", &path), ("TOOLHOST_JS_DEPS", "")],
        );
        let said = text(&out);
        if !said.contains("node was not found") {
            assert!(said.contains("npm install --save-dev esbuild@"), "{said}");
            assert!(said.contains("t_ts"), "{said}");
        }
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
