//! For build scripts: compile workspace crates into `wasm32-wasip2`
//! components with one inner `cargo build`.
//!
//! Used by the host (the built-in toolset it embeds) and by the test
//! artifacts crate (example tools and test guests). Modelled on wasmtime's
//! `crates/test-programs/artifacts/build.rs`. The inner build uses its own
//! target directory (`target/guests`) so it never waits on the lock the outer
//! cargo holds on `target/`; both callers share it, and so share compiled
//! dependencies.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Runs a build script's body; an error is printed and fails the build.
pub fn run_build_script(body: impl FnOnce() -> Result<(), String>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The folders a build script works with.
pub struct Dirs {
    /// The workspace root: the parent of the crate being built.
    pub workspace: PathBuf,
    /// Cargo's `OUT_DIR` for the crate.
    pub out: PathBuf,
}

impl Dirs {
    /// The folders of the crate whose build script this is; asks cargo to
    /// run it again when any of `watched` (workspace-relative) changes.
    pub fn of_build_script(watched: &[&str]) -> Result<Self, String> {
        let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
        let workspace = manifest_dir
            .parent()
            .ok_or_else(|| format!("{} has no parent folder", manifest_dir.display()))?
            .to_path_buf();
        for path in watched {
            println!("cargo:rerun-if-changed={}", workspace.join(path).display());
        }
        Ok(Self {
            workspace,
            out: PathBuf::from(var("OUT_DIR")?),
        })
    }
}

fn var(name: &str) -> Result<String, String> {
    env::var(name).map_err(|_| format!("{name} is not set (run this through cargo)"))
}

/// The target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// Names a rustup toolchain (e.g. `stable`) to build the guests with
/// instead of the one building the host: `cargo +nightly fuzz` sets it,
/// since a nightly toolchain may lack the `wasm32-wasip2` target.
pub const TOOLCHAIN_VAR: &str = "TOOLHOST_GUEST_TOOLCHAIN";

/// The target directory of guest builds under a workspace.
pub fn target_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("guests")
}

/// Runs one `cargo build --release --target wasm32-wasip2 -p …` for every
/// package, and returns the folder the `.wasm` files land in.
pub fn build<'a>(
    workspace: &Path,
    packages: impl IntoIterator<Item = &'a str>,
) -> Result<PathBuf, String> {
    let target_dir = target_dir(workspace);
    println!("cargo:rerun-if-env-changed={TOOLCHAIN_VAR}");
    let mut cmd = match env::var(TOOLCHAIN_VAR) {
        Ok(toolchain) if !toolchain.is_empty() => {
            let mut cmd = Command::new("rustup");
            cmd.args(["run", &toolchain, "cargo"]);
            // The outer toolchain's tools must not stand in for that one's.
            for name in ["RUSTC", "RUSTDOC", "RUSTC_WRAPPER", "RUSTUP_TOOLCHAIN"] {
                cmd.env_remove(name);
            }
            cmd
        }
        _ => Command::new(env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))),
    };
    cmd.current_dir(workspace)
        .args(["build", "--release", "--target", TARGET])
        .env("CARGO_TARGET_DIR", &target_dir)
        // Small guests: no DWARF (the name section stays for backtraces).
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo");
    // Flags and wrappers meant for the outer (host) build must not leak into
    // the wasm build: `cargo clippy` would otherwise lint every guest too.
    for name in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
    ] {
        cmd.env_remove(name);
    }
    for package in packages {
        cmd.arg("-p").arg(package);
    }

    let output = cmd
        .output()
        .map_err(|err| format!("cannot run cargo to build the wasm guests: {err}"))?;
    if output.status.success() {
        return Ok(target_dir.join(TARGET).join("release"));
    }
    let mut message = format!(
        "building the wasm guests failed ({}): {cmd:?}\n\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    if !target_installed() {
        message.push_str(&format!(
            "\nThe {TARGET} target is not installed. Run:\n\n    rustup target add {TARGET}\n"
        ));
    }
    Err(message)
}

/// The built `<slug>.wasm` in `release_dir`, or an error naming the crate
/// that should have produced it.
pub fn artifact(release_dir: &Path, slug: &str, source_dir: &str) -> Result<PathBuf, String> {
    let path = release_dir.join(format!("{slug}.wasm"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the build succeeded but {} is missing: is {source_dir}{slug} a \
             cdylib (or bin) named {slug:?}?",
            path.display()
        ))
    }
}

/// Whether the toolchain's sysroot has the standard library for `TARGET`.
fn target_installed() -> bool {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| {
            let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_string();
            Path::new(&sysroot)
                .join("lib/rustlib")
                .join(TARGET)
                .is_dir()
        })
        .unwrap_or(false)
}
