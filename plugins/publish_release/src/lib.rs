//! `publish_release`: records a release as `/workspace/releases/<version>.json`.

use std::{fs, io::ErrorKind, io::Write};

use toolhost_sdk::prelude::*;

/// Semantic Versioning 2.0.0.
const SEMVER: &str = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$";

/// The release to publish.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The version, e.g. `1.4.0` or `2.0.0-rc.1` (semver).
    #[schemars(regex(pattern = SEMVER))]
    version: String,
    /// Release notes (Markdown).
    notes: Option<String>,
}

/// The schema already checks the pattern; the file name must be safe anyway.
fn is_safe(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
        && !version.contains("..")
}

struct PublishRelease;

impl Tool for PublishRelease {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Publish a release of the project at a semantic version, with optional
        notes. A version can be published only once.
    ";
    const HAS_DRY_RUN: bool = true;

    fn dry_run_result(input: &Input) -> Option<Output> {
        Some(json!({ "published": false, "version": input.version }).into())
    }

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        if !is_safe(&input.version) {
            return Err(ToolError::invalid_input(format!(
                "{:?} is not a semantic version",
                input.version
            )));
        }
        let path = format!("/workspace/releases/{}.json", input.version);
        let record = json!({
            "version": input.version,
            "notes": input.notes,
            "callId": ctx.call_id,
            "approvedBy": ctx.approved_by,
        });
        fs::create_dir_all("/workspace/releases")?;
        let mut file = match fs::File::create_new(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                return Err(ToolError::failed(format!(
                    "release {} is already published",
                    input.version
                )));
            }
            Err(err) => return Err(err.into()),
        };
        file.write_all(toolhost_sdk::serde_json::to_string_pretty(&record)?.as_bytes())?;
        Ok(json!({ "published": true, "version": input.version, "path": path }).into())
    }
}

export_tool!(PublishRelease);
