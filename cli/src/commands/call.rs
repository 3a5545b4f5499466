//! `toolhost tool call`: in-process, or on a server with `--url`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use clap::Args;
use serde_json::{Value, json};
use toolhost::Host;
use toolhost::call::{CallOptions, NoApprover, PreApproved};
use toolhost::session::{Session, SessionMode, SessionSpec, parse_instant};
use toolhost_serve::http;

use super::DirArgs;
use super::{cli_principal, warn_failures};
use crate::client::{Answer, Client};
use crate::print::{print_json, terminal_safe};

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool to call.
    pub(crate) name: String,
    /// The input, as JSON.
    #[arg(long, short = 'i', default_value = "{}")]
    pub(crate) input: String,
    #[command(flatten)]
    pub(crate) dir: DirArgs,
    /// Use this directory as the session's workspace (default: a scratch
    /// directory removed afterwards).
    #[arg(long, short = 'w', conflicts_with_all = ["session", "url"])]
    pub(crate) workspace: Option<PathBuf>,
    /// Keep the artifacts the call saves in this directory (default: a
    /// scratch directory removed afterwards).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["session", "url"])]
    pub(crate) artifacts: Option<PathBuf>,
    /// Call in this session (one made by `toolhost serve`'s session API).
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Bind the call by continuation token `<channel>:<key>` (with --url).
    #[arg(
        long,
        value_name = "TOKEN",
        requires = "url",
        conflicts_with = "session"
    )]
    pub(crate) continuation_token: Option<String>,
    /// Call the tool on the server at URL (e.g. http://127.0.0.1:3000)
    /// instead of in-process.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The server's bearer token (with --url).
    #[arg(long, env = "TOOLHOST_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// Run in a dry-run session: reads run, writes are stubbed.
    #[arg(long, conflicts_with_all = ["session", "url"])]
    pub(crate) dry_run: bool,
    /// Freeze the session at this instant (RFC 3339): time arguments may not be later.
    #[arg(long, value_name = "INSTANT", conflicts_with_all = ["session", "url"], value_parser = parse_instant)]
    pub(crate) as_of: Option<DateTime<FixedOffset>>,
    /// Run the tools of this agent (`[agents.<name>]`, or one made over the
    /// API) instead of the tools folder's (`default`).
    #[arg(long, value_name = "NAME", conflicts_with = "session")]
    pub(crate) agent: Option<String>,
    /// That agent's version (default: its latest). In-process only the
    /// latest is loaded; a server keeps the versions its sessions use.
    #[arg(long, value_name = "N", conflicts_with = "session")]
    pub(crate) version: Option<u64>,
    /// Approve the call if the tool is `always_ask` (in-process only: a
    /// server's calls are approved through its approvals route).
    #[arg(long, conflicts_with = "url")]
    pub(crate) approve: bool,
    /// Print the whole envelope as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the call's trace (logs, stdout, stderr) to stderr.
    #[arg(long)]
    pub(crate) trace: bool,
}

/// Parse the arguments and run the command.
async fn remote_call(args: &CallArgs, url: &str) -> anyhow::Result<ExitCode> {
    let input: Value = serde_json::from_str(&args.input)
        .map_err(|e| anyhow::anyhow!("--input is not JSON: {e}"))?;
    let client = Client::new(url, args.token.clone())?;
    let body = json!({
        "input": input,
        "sessionId": args.session,
        "continuationToken": args.continuation_token,
        "auth": cli_principal(),
        "agent": args.agent,
        "version": args.version,
    });
    let answer = client
        .call(&args.name, body, |pending| {
            eprintln!(
                "call {} is {}; waiting (approve with POST {url}{})",
                pending["callId"].as_str().unwrap_or("?"),
                pending["status"].as_str().unwrap_or("waiting"),
                pending["callId"]
                    .as_str()
                    .map(|id| format!("/<slug>/v1/approvals/{id}"))
                    .unwrap_or_default(),
            );
        })
        .await?;
    match answer {
        Answer::Envelope(envelope) => {
            if args.json {
                print_json(&envelope)?;
            } else {
                match &envelope["result"] {
                    Value::String(text) => println!("{}", terminal_safe(text)),
                    other => print_json(other)?,
                }
            }
            Ok(if envelope["isError"] == json!(true) {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Answer::Refused(_, error) if args.json => {
            print_json(&json!({ "ok": false, "error": error }))?;
            Ok(ExitCode::from(2))
        }
        Answer::Refused(status, error) => {
            eprintln!(
                "error: {} ({status}, {})",
                error["message"].as_str().unwrap_or("refused"),
                error["code"].as_str().unwrap_or("?")
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// Call a tool and print its result (or its whole envelope with `--json`).
pub(crate) async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.url {
        return remote_call(&args, url).await;
    }
    // A named agent is loaded with the whole host; the default one's tool
    // alone is enough for a call of it.
    let builder = Host::builder(&args.dir.dir);
    let builder = match &args.agent {
        None => builder.only(&args.name),
        Some(_) => builder,
    };
    let host = builder.build().await?;
    warn_failures(&host);
    let pin = host.pin_for(args.agent.as_deref(), args.version).await?;
    let session = if let Some(id) = &args.session {
        let options = http::ServeOptions::from_config(&host)?;
        let store = options.session_store(&host)?;
        store
            .bind(Some(id), None, Some(&cli_principal()))
            .await
            .map_err(|e| anyhow::anyhow!("--session: {e}"))?
            .session
    } else {
        Arc::new(Session::open(SessionSpec {
            mode: if args.dry_run {
                SessionMode::DryRun
            } else {
                SessionMode::Live
            },
            as_of: args.as_of,
            channel: Some("cli".into()),
            auth: Some(cli_principal()),
            workspace: args.workspace.clone(),
            artifacts: args.artifacts.clone(),
            pin: Some(pin),
            ..SessionSpec::default()
        })?)
    };
    let mut options = CallOptions::new(session.clone())
        .with_approver(Arc::new(NoApprover("pass --approve to approve it".into())));
    if args.approve {
        options = options.with_approver(Arc::new(PreApproved(cli_principal())));
    }
    let result = match host.call(&args.name, args.input.as_str(), &options).await {
        Ok(result) => result,
        Err(refused) if args.json => {
            print_json(&http::ApiError::from(&refused).body())?;
            return Ok(ExitCode::from(2));
        }
        Err(refused) => return Err(refused.into()),
    };
    if args.trace {
        eprintln!("{}", serde_json::to_string_pretty(&result.trace)?);
    }
    let saved = result.usage.artifacts_saved;
    if saved > 0 && args.session.is_none() {
        match &args.artifacts {
            Some(dir) => eprintln!("saved {saved} artifact(s) in {}", dir.display()),
            None => eprintln!(
                "the call saved {saved} artifact(s); a one-shot session's go with it: pass \
                 --artifacts DIR to keep them"
            ),
        }
    }
    if args.json {
        print_json(&serde_json::to_value(&result)?)?;
    } else {
        match &result.result {
            Value::String(text) => println!("{}", terminal_safe(text)),
            other => print_json(other)?,
        }
    }
    Ok(if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
