//! The command line's shape: the commands. Each command's arguments live
//! beside its handler in `commands/`, the ones they share in its `mod.rs`.

use clap::{Parser, Subcommand};

use crate::commands::{DirArgs, author, call, check, inspect, publish, serve, sign, sources};

/// Run untrusted agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List and inspect the tools of a folder.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Call tools.
    Tool {
        #[command(subcommand)]
        command: ToolCommand,
    },
    /// Show a tool's metadata, schema, and imports beside its grants.
    Inspect(inspect::InspectArgs),
    /// Load every tool, report each failing check (exit 1 if any fails) and
    /// lint descriptions, names and schemas (warnings; exit 1 with --strict).
    Check(check::CheckArgs),
    /// Write tools.lock: pin each tool's component, metadata and grants; while
    /// it exists, a tool that differs from it is refused.
    Lock(DirArgs),
    /// Serve the HTTP API (and MCP at /mcp) until interrupted (Ctrl-C or SIGTERM).
    Serve(serve::ServeArgs),
    /// Serve MCP on stdin/stdout until stdin closes.
    Mcp(serve::McpArgs),
    /// Push a component to an OCI registry (oci://HOST/REPO:TAG) as a wasm
    /// artifact, its tool's metadata annotated; prints the reference pinned
    /// to what was pushed.
    Publish(publish::PublishArgs),
    /// Add a tool from an OCI registry: pull it, check it loads, and pin it
    /// to its digest in toolhost.toml's [sources].
    Add(sources::AddArgs),
    /// Read each source's tag again; where it moved, show what changed and
    /// pin the new digest (one source, or all).
    Update(sources::UpdateArgs),
    /// Sign a tool in an OCI registry with a cosign key, in cosign's
    /// signature tag beside it; prints the reference pinned to what was
    /// signed.
    Sign(sign::SignArgs),
    /// Make a cosign key pair to sign tools with: PREFIX.key (encrypted
    /// with COSIGN_PASSWORD) and PREFIX.pub.
    Keygen(sign::KeygenArgs),
    /// Make a tool project (Rust, Python or TypeScript) that builds and
    /// passes `toolhost check` as it is.
    New(author::NewArgs),
    /// Build tool projects into the host directory's `tools/`.
    Build(author::BuildArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List the enabled tools (and the files that did not load).
    List {
        #[command(flatten)]
        dir: DirArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// List this agent's tools (`[agents.<name>]`, or one made over the
        /// API) instead of the tools folder's (`default`).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolCommand {
    /// Call a tool: in-process (an ephemeral session unless --session), or
    /// on a running server with --url.
    Call(call::CallArgs),
}
