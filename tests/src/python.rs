//! The test guests written in Python (`tests/python/<guest>`), built with
//! componentize-py when a test or benchmark asks for one.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/python/<guest>` componentized for its WIT world `world` into
/// `<out_dir>/<guest>.wasm`; `None` (with a message) when componentize-py
/// is not on `PATH` outside CI. Under `CI=true` a missing componentize-py
/// panics (`scripts/test` installs it), and so does a failed build.
pub fn componentize(guest: &str, world: &str, out_dir: &Path) -> Option<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(guest);
    std::fs::create_dir_all(out_dir)
        .unwrap_or_else(|e| panic!("cannot make {}: {e}", out_dir.display()));
    let wasm = out_dir.join(format!("{guest}.wasm"));
    let built = Command::new("componentize-py")
        .args([
            "-d",
            "wit",
            "-w",
            world,
            "componentize",
            "app",
            "-p",
            ".",
            "-o",
        ])
        .arg(&wasm)
        .current_dir(&source)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output();
    match built {
        Ok(out) if out.status.success() => Some(wasm),
        Ok(out) => panic!(
            "componentize-py failed on tests/python/{guest}: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "componentize-py is missing under CI=true (scripts/test installs it)"
            );
            eprintln!("SKIPPED: componentize-py is not on PATH (scripts/test installs it)");
            None
        }
        Err(e) => panic!("cannot run componentize-py: {e}"),
    }
}
