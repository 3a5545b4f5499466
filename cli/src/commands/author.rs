//! `toolhost new` and `toolhost build`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::DirArgs;
use crate::author::{self, BuildOptions, JsEngine, Kit, Language};

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The tool's name: the project folder's name and the name the model sees.
    name: String,
    /// The language to write it in.
    #[arg(long, short = 'l')]
    lang: Language,
    /// The folder to make the project in.
    #[arg(long = "in", value_name = "DIR", default_value = ".")]
    parent: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// A tool project, or a folder of them (each sub-folder that is one).
    #[arg(default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    dir: DirArgs,
    /// Write the components here instead of the host directory's `tools/`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The JS engine for TypeScript and JavaScript tools (default: the
    /// project's `package.json` `"toolhost": {"engine": …}`, else quickjs).
    #[arg(long, value_name = "ENGINE")]
    js_engine: Option<JsEngine>,
}

pub(crate) fn new(args: NewArgs) -> anyhow::Result<ExitCode> {
    let kit = Kit::materialize()?;
    let dir = author::scaffold(&args.parent, &args.name, args.lang, &kit)?;
    let shown = dir.display();
    println!("created {shown} ({} tool `{}`)", args.lang, args.name);
    println!("build it into ./tools and call it:");
    println!(
        "    toolhost build {shown} && toolhost tool call {} --input '{{\"name\": \"Ada\"}}'",
        args.name
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let projects = author::find_projects(&args.path)?;
    let kit = Kit::materialize()?;
    let options = BuildOptions {
        out_dir: args.out.unwrap_or_else(|| args.dir.dir.join("tools")),
        js_engine: args.js_engine,
    };
    let total = projects.len();
    let mut failed = 0;
    for (index, project) in projects.iter().enumerate() {
        let label = format!(
            "[{}/{total}] {} ({})",
            index + 1,
            project.name,
            project.language
        );
        let progress = spinner(&label);
        match author::build(project, &kit, &options) {
            Ok(built) => finish(
                progress,
                format!(
                    "{label}: {} in {:.1} s with {}, {}",
                    built.path.display(),
                    built.elapsed.as_secs_f64(),
                    built.toolchain,
                    size(built.bytes)
                ),
            ),
            Err(err) => {
                failed += 1;
                finish(progress, format!("{label}: FAILED\n{err}"));
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {total} tools failed to build");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// A spinner on stderr while a build runs (drawn only on a terminal).
fn spinner(label: &str) -> ProgressBar {
    let progress = ProgressBar::new_spinner().with_message(format!("{label}: building"));
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        progress.set_style(style);
    }
    progress.enable_steady_tick(Duration::from_millis(120));
    progress
}

/// Clears the spinner and prints `line` on stderr, terminal or not.
fn finish(progress: ProgressBar, line: String) {
    progress.finish_and_clear();
    eprintln!("{line}");
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1 << 20) as f64),
        b => format!("{:.0} KB", b as f64 / 1024.0),
    }
}
