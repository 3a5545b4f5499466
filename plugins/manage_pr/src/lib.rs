//! `manage_pr`: view or merge a pull request kept as `/workspace/prs/<number>.json`.

use std::{fs, io::ErrorKind};

use toolhost_sdk::prelude::*;
use toolhost_sdk::serde_json;

/// What to do with the pull request.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Action {
    /// Show its state.
    View,
    /// Merge it (fails if it is already merged).
    Merge,
}

/// A pull-request operation.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The operation.
    action: Action,
    /// The pull request's number.
    #[schemars(range(min = 1))]
    number: u32,
}

struct ManagePr;

impl Tool for ManagePr {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        View a pull request's state, or merge it. Viewing changes nothing;
        merging needs the pull request to be open.
    ";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.action {
            Action::View => Effect::Read,
            Action::Merge => Effect::Write,
        }
    }

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        let number = input.number;
        let path = format!("/workspace/prs/{number}.json");
        let mut pr: Value = match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|err| ToolError::failed(format!("{path} is corrupt: {err}")))?,
            Err(err) if err.kind() == ErrorKind::NotFound => {
                json!({ "number": number, "state": "open" })
            }
            Err(err) => return Err(err.into()),
        };
        if !pr.is_object() {
            return Err(ToolError::failed(format!(
                "{path} is corrupt: not a JSON object"
            )));
        }
        if let Action::View = input.action {
            return Ok(pr.into());
        }
        match pr["state"].as_str() {
            Some("open") => {}
            Some("merged") => {
                return Err(ToolError::failed(format!(
                    "pull request #{number} is already merged"
                )));
            }
            other => {
                let state = other.unwrap_or("in no known state");
                return Err(ToolError::failed(format!(
                    "pull request #{number} is {state}, not open"
                )));
            }
        }
        pr["state"] = json!("merged");
        pr["mergedBy"] = ctx.approved_by.clone().unwrap_or(Value::Null);
        fs::create_dir_all("/workspace/prs")?;
        fs::write(&path, serde_json::to_vec_pretty(&pr)?)?;
        Ok(pr.into())
    }
}

export_tool!(ManagePr);
