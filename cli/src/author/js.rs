//! Building a TypeScript or JavaScript tool: esbuild bundles the tool with
//! the SDK into one module, jco makes it a component on the chosen engine.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::project::Project;
use super::toolchain::{self, Program, upward};
use super::{AuthorError, Kit, install};

/// The JavaScript engine a JS or TS tool runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum JsEngine {
    /// QuickJS: small components and fast fresh instances; no global `fetch`
    /// (use the SDK's `http`).
    Quickjs,
    /// StarlingMonkey (SpiderMonkey): the web platform APIs, `fetch`
    /// included; larger and slower to start.
    Starlingmonkey,
}

impl fmt::Display for JsEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Quickjs => "quickjs",
            Self::Starlingmonkey => "starlingmonkey",
        })
    }
}

/// The npm packages a JS or TS build needs, as `npm` installs them.
const PACKAGES: &str =
    "esbuild@0.28.2 @bytecodealliance/componentize-js@0.23.0 componentize-qjs@0.4.5";

const NODE: Program<'static> = Program {
    name: "node",
    why: "it builds JS and TS tools",
    install: "apt-get install nodejs  (or see https://nodejs.org; Node.js 20 or later)",
};

/// What installs the packages where the author has none.
const NPM: Program<'static> = Program {
    name: "npm",
    why: "toolhost installs esbuild, componentize-js and componentize-qjs, which build JS and \
          TS tools, with it",
    install: "apt-get install npm",
};

/// The engine `project` asks for in its `package.json`
/// (`"toolhost": {"engine": "quickjs" | "starlingmonkey"}`), else QuickJS.
pub(super) fn engine_of(project: &Project) -> Result<JsEngine, AuthorError> {
    #[derive(Deserialize)]
    struct Package {
        #[serde(default)]
        toolhost: Settings,
    }
    #[derive(Deserialize, Default)]
    struct Settings {
        engine: Option<JsEngine>,
    }
    let path = project.dir.join("package.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(JsEngine::Quickjs),
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("cannot read {}", path.display()))
                .into());
        }
    };
    let package: Package = serde_json::from_str(&text).map_err(|err| {
        anyhow::anyhow!(
            "{}: {err} (`toolhost.engine` must be \"quickjs\" or \"starlingmonkey\")",
            path.display()
        )
    })?;
    Ok(package.toolhost.engine.unwrap_or(JsEngine::Quickjs))
}

/// Builds `project` into a component in `scratch` and returns its path: the
/// SDK's `bin/build.mjs` bundles it with esbuild and componentizes it on
/// `engine`, with the npm packages of the nearest `node_modules` that has
/// them (or `$TOOLHOST_JS_DEPS`), else toolhost's own.
pub(super) fn build(
    project: &Project,
    kit: &Kit,
    engine: JsEngine,
    scratch: &Path,
) -> Result<PathBuf, AuthorError> {
    let node = NODE.find(&[])?;
    let deps = match node_modules(&project.dir) {
        Some(deps) => deps,
        None => own_node_modules()?,
    };
    let entry = ["tool.ts", "tool.js"]
        .iter()
        .map(|name| project.dir.join(name))
        .find(|path| path.is_file())
        .with_context(|| format!("{} has no tool.ts or tool.js", project.dir.display()))?;
    let out = scratch.join(format!("{}.wasm", project.name));
    let mut command = Command::new(node);
    command
        .current_dir(&project.dir)
        .arg(kit.js_sdk().join("bin/build.mjs"))
        .arg(&entry)
        .arg("--out")
        .arg(&out)
        .args(["--engine", &engine.to_string()])
        .arg("--wit")
        .arg(kit.wit())
        .arg("--deps")
        .arg(&deps);
    toolchain::run(&project.name, &mut command, false)?;
    Ok(out)
}

/// The pinned packages in toolhost's own npm prefix, installed first if
/// needed.
fn own_node_modules() -> Result<PathBuf, AuthorError> {
    let name = format!("js-{}", &hex::encode(Sha256::digest(PACKAGES))[..12]);
    let prefix = install::ensure(&name, PACKAGES, &NPM, |prefix, npm| {
        toolchain::run(
            &name,
            Command::new(npm)
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .arg("--prefix")
                .arg(prefix)
                .args(PACKAGES.split(' ')),
            false,
        )?;
        Ok(())
    })?;
    Ok(prefix.join("node_modules"))
}

/// The `node_modules` folder with the author's packages: `$TOOLHOST_JS_DEPS`,
/// else the nearest one at or above `dir` that holds esbuild.
fn node_modules(dir: &Path) -> Option<PathBuf> {
    if let Some(deps) = std::env::var_os("TOOLHOST_JS_DEPS").filter(|deps| !deps.is_empty()) {
        return Some(PathBuf::from(deps));
    }
    upward(dir, "node_modules")
        .into_iter()
        .find(|candidate| candidate.join("esbuild/package.json").is_file())
}
