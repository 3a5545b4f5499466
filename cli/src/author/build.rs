//! `toolhost build`: a project's sources to `<tools>/<name>.wasm`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::js::{self, JsEngine};
use super::project::{Language, Project};
use super::{AuthorError, Kit, python, rust};
use toolhost::files::write_atomically;

/// Where and how `build` builds.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The folder the components go to (a host's `tools/`).
    pub out_dir: PathBuf,
    /// The JS engine for TypeScript and JavaScript projects; `None` takes
    /// the project's own choice (`"toolhost": {"engine": …}` in its
    /// `package.json`), else QuickJS.
    pub js_engine: Option<JsEngine>,
}

/// A tool that was built.
#[derive(Debug, Clone)]
pub struct Built {
    /// Where the component was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
    /// How long the build took.
    pub elapsed: Duration,
    /// What it was built with, e.g. `cargo` or `componentize-qjs`.
    pub toolchain: String,
}

/// The first bytes of every WebAssembly component.
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Builds `project` into `options.out_dir/<name>.wasm`, replacing the old
/// file only once the new one is complete.
pub fn build(project: &Project, kit: &Kit, options: &BuildOptions) -> Result<Built, AuthorError> {
    let started = Instant::now();
    let scratch = tempfile::Builder::new()
        .prefix("toolhost-build-")
        .tempdir()
        .context("cannot create a scratch folder")?;
    let (component, toolchain) = match project.language {
        Language::Rust => (rust::build(project)?, "cargo".to_string()),
        Language::Python => (
            python::build(project, kit, scratch.path())?,
            "componentize-py".to_string(),
        ),
        Language::TypeScript => {
            let engine = match options.js_engine {
                Some(engine) => engine,
                None => js::engine_of(project)?,
            };
            let component = js::build(project, kit, engine, scratch.path())?;
            let toolchain = match engine {
                JsEngine::Quickjs => "componentize-qjs",
                JsEngine::Starlingmonkey => "componentize-js (StarlingMonkey)",
            };
            (component, toolchain.to_string())
        }
    };
    let bytes = std::fs::read(&component)
        .with_context(|| format!("cannot read {}", component.display()))?;
    if !bytes.starts_with(&COMPONENT_PREAMBLE) {
        return Err(AuthorError::Other(anyhow::anyhow!(
            "{}: {} is not a WebAssembly component",
            project.name,
            component.display()
        )));
    }
    std::fs::create_dir_all(&options.out_dir)
        .with_context(|| format!("cannot create {}", options.out_dir.display()))?;
    let path = options.out_dir.join(format!("{}.wasm", project.name));
    write_atomically(&path, &bytes)?;
    Ok(Built {
        path,
        bytes: bytes.len(),
        elapsed: started.elapsed(),
        toolchain,
    })
}
