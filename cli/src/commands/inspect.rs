//! `toolhost inspect`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde_json::{Value, json};
use toolhost::config::Config;
use toolhost::registry::{self, Tool};
use toolhost::{Host, caps};

use super::DirArgs;
use super::permission_name;
use crate::print::{indent, print_json, terminal_safe};

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// A `.wasm` file, or the name of a tool in the folder.
    pub(crate) target: String,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Show one tool (or each function of a plain component): metadata,
/// schemas, and its imports beside its grants.
pub(crate) async fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let path = PathBuf::from(&args.target);
    let name = registry::slug(&path);
    let tools: Vec<Arc<Tool>> = if path.extension().is_some_and(|e| e == "wasm") {
        // Just this file, under the folder's config: the rest of the folder
        // need not load.
        anyhow::ensure!(path.is_file(), "{} does not exist", path.display());
        let config = Config::load(&args.dir.dir)?;
        let engine = super::file_engine(&args.dir.dir, &config)?;
        match registry::load_tool(&engine, &path, &name, &config).await {
            Ok(tools) => tools.into_iter().map(Arc::new).collect(),
            Err(reason) => {
                eprintln!("error: {} (tool `{name}`): {reason}", path.display());
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        let host = Host::builder(&args.dir.dir).only(&name).build().await?;
        let registry = host.registry();
        if let Some(tool) = registry.all().find(|t| t.name() == name) {
            vec![tool.clone()]
        } else if let Some(failure) = registry
            .failures()
            .iter()
            .find(|f| f.tool.as_deref() == Some(&name))
        {
            eprintln!("error: {failure}");
            return Ok(ExitCode::from(1));
        } else {
            anyhow::bail!("no tool `{name}` in {}", host.tools_dir().display());
        }
    };
    if args.json {
        let mut described: Vec<Value> = tools.iter().map(|t| t.inspection()).collect();
        let out = if described.len() == 1 {
            described.remove(0)
        } else {
            json!({ "file": path, "plainComponent": true, "tools": described })
        };
        print_json(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if tools.len() > 1 {
        println!(
            "{} is a plain component: {} tools, one per exported function\n",
            path.display(),
            tools.len()
        );
    }
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            println!("\n{}\n", "-".repeat(72));
        }
        print_inspection(tool)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A tool as `inspect` prints it.
fn print_inspection(tool: &Tool) -> anyhow::Result<()> {
    let meta = tool.metadata();
    println!("tool:        {}", tool.name());
    match tool.upstream() {
        Some(server) => println!(
            "from:        MCP server `{}` (runs outside the sandbox; its effect is what its \
             annotations or toolset say)",
            server.spec().name
        ),
        None => println!("file:        {}", tool.path().display()),
    }
    if let Some(function) = tool.plain_export() {
        println!("function:    {function} (plain component)");
    }
    match tool.upstream() {
        Some(_) => println!("definition:  sha256 {}", tool.sha256()),
        None => println!("sha256:      {}", tool.sha256()),
    }
    println!("effect:      {}", meta.effect);
    println!("permission:  {}", permission_name(tool.policy().permission));
    println!("enabled:     {}", tool.policy().enabled);
    println!(
        "dry-run:     {}",
        if meta.has_dry_run_result {
            "tool supplies a result"
        } else {
            "\"Operation acknowledged.\""
        }
    );
    if !meta.time_args.is_empty() {
        println!("time args:   {}", meta.time_args.join(", "));
    }
    println!(
        "\ndescription:\n{}\n",
        indent(&terminal_safe(&meta.description))
    );
    println!(
        "input schema:\n{}\n",
        indent(&serde_json::to_string_pretty(&meta.input_schema)?)
    );
    if let Some(output) = &meta.output_schema {
        println!(
            "output schema:\n{}\n",
            indent(&serde_json::to_string_pretty(output)?)
        );
    }
    if !tool.prompts().is_empty() {
        println!("prompts (for MCP clients; * marks a required argument):");
        for prompt in tool.prompts() {
            let arguments: Vec<String> = prompt
                .arguments
                .iter()
                .map(|a| format!("{}{}", a.name, if a.required { "*" } else { "" }))
                .collect();
            let about = prompt.description.as_deref().unwrap_or_default();
            println!(
                "  {}({}) {}",
                prompt.name,
                arguments.join(", "),
                terminal_safe(about)
            );
        }
        println!();
    }
    if !tool.resources().is_empty() || !tool.resource_templates().is_empty() {
        println!("resources (for MCP clients):");
        let listed = tool.resources().iter().map(|r| (&r.uri, &r.about));
        let templated = tool
            .resource_templates()
            .iter()
            .map(|t| (&t.uri_template, &t.about));
        for (address, about) in listed.chain(templated) {
            let media_type = about
                .media_type
                .as_deref()
                .map(|m| format!(" [{m}]"))
                .unwrap_or_default();
            let described = about.description.as_deref().unwrap_or(&about.name);
            println!(
                "  {}{} {}",
                terminal_safe(address),
                terminal_safe(&media_type),
                terminal_safe(described)
            );
        }
        println!();
    }
    if tool.upstream().is_some() {
        return Ok(());
    }
    println!("imports (what it could ask for) and grants:");
    for import in tool.imports() {
        println!(
            "  {import:<48} {}",
            caps::import_status(&tool.policy().grants, import)
        );
    }
    Ok(())
}
