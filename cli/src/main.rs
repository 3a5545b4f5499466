//! The `toolhost` command.
//!
//! Exit codes: 0 success; 1 the tool ran and reported an error (or `check`
//! found a failing tool); 2 the call or command was refused (unknown tool,
//! invalid input, approval required, bad config or usage).

mod args;
mod author;
mod client;
mod commands;
mod print;

use std::process::ExitCode;

use clap::Parser as _;

use args::{Cli, Command, ToolCommand, ToolsCommand};
use commands::{
    author as author_commands, call, check, inspect, list, lock, publish, serve, sign, sources,
};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let outcome = runtime_for(&cli.command)
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run(cli)));
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The runtime a command runs on: `mcp` serves its one client on as many
/// threads as `--threads` says (one by default: a call's request, the call
/// and its answer then never change threads); every other command on one
/// worker per core.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match command {
        Command::Mcp(args) if args.threads.get() == 1 => {
            tokio::runtime::Builder::new_current_thread()
        }
        Command::Mcp(args) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(args.threads.get());
            builder
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.event_interval(EVENT_INTERVAL).enable_all().build()
}

/// How many tasks a worker polls before it looks at the network and the
/// timers again. A running tool holds its worker for up to an epoch tick
/// (5 ms) each poll, so tokio's default of 61 let a request wait ~300 ms
/// behind tools that run; 8 keeps it to tens of milliseconds (the
/// adversarial suite's `/healthz` p99).
const EVENT_INTERVAL: u32 = 8;

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if matches!(cli.command, Command::Serve(_) | Command::Mcp(_)) {
        raise_open_file_limit();
    } else {
        quiet_on_closed_stdout();
    }
    match cli.command {
        Command::Tools {
            command: ToolsCommand::List { dir, json, agent },
        } => list::list(&dir.dir, json, agent.as_deref()).await,
        Command::Tool {
            command: ToolCommand::Call(args),
        } => call::call(args).await,
        Command::Inspect(args) => inspect::inspect(args).await,
        Command::Check(args) => check::check(args).await,
        Command::Lock(dir) => lock::lock(&dir.dir).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Mcp(args) => serve::mcp(args).await,
        Command::Publish(args) => publish::publish(args).await,
        Command::Add(args) => sources::add(args).await,
        Command::Update(args) => sources::update(args).await,
        Command::Sign(args) => sign::sign(args).await,
        Command::Keygen(args) => sign::keygen(args),
        Command::New(args) => author_commands::new(args),
        Command::Build(args) => author_commands::build(args),
    }
}

/// Let a closed stdout end the process quietly, as it does other Unix tools
/// (`toolhost tools list | head`): Rust ignores SIGPIPE, which turns the
/// next print into a panic. Not for the servers, whose peers may hang up.
fn quiet_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: signal(2) only changes how the process treats SIGPIPE; no
    // handler runs, and nothing in these commands relies on ignoring it.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Raise the soft limit on open descriptors to the hard one, so the
/// servers' connections, tools' files and sockets, the compile cache and
/// the key-value store do not run out at the common soft default of 1024.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write only the struct passed.
    let raised = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && {
            let before = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            before == limit.rlim_max || libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
        }
    };
    if !raised {
        tracing::warn!(
            "cannot raise the open-file limit (RLIMIT_NOFILE): {}",
            std::io::Error::last_os_error()
        );
    }
}
