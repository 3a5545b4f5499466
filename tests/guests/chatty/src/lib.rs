//! Test guest: prints the requested number of bytes to stdout and to stderr
//! (the host must capture and truncate them), logs a line at each level and
//! reports progress if asked, then returns "done".

use std::io::Write;

use toolhost_sdk::prelude::*;

/// How much to print.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Bytes to print to each of stdout and stderr.
    bytes: usize,
    /// Also log one line at each level, least severe first.
    #[serde(default)]
    log: bool,
    /// Also report progress `1..=progress` of `progress`, then a report
    /// that goes back (the host drops it).
    #[serde(default)]
    progress: u32,
}

/// Writes `bytes` bytes of numbered lines; stops quietly if the stream fails.
fn spew(mut out: impl Write, stream: &str, bytes: usize) {
    let mut written = 0;
    let mut line = 0u64;
    while written < bytes {
        let text = format!("{stream} line {line}\n");
        let take = text.len().min(bytes - written);
        if out.write_all(&text.as_bytes()[..take]).is_err() {
            return;
        }
        written += take;
        line += 1;
    }
    let _ = out.flush();
}

struct Chatty;

impl Tool for Chatty {
    type Input = Input;
    const DESCRIPTION: &'static str = "Prints `bytes` bytes to stdout and stderr, logs a line at each level when `log` is true, and reports `progress` steps.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        spew(std::io::stdout().lock(), "stdout", input.bytes);
        spew(std::io::stderr().lock(), "stderr", input.bytes);
        if input.log {
            toolhost_sdk::log::debug("debug line");
            toolhost_sdk::log::info("info line");
            toolhost_sdk::log::warn("warn line");
            toolhost_sdk::log::error("error line");
        }
        let total = f64::from(input.progress);
        for step in 1..=input.progress {
            let message = format!("step {step}");
            toolhost_sdk::progress::report(f64::from(step), Some(total), Some(&message));
        }
        if input.progress > 0 {
            toolhost_sdk::progress::report(0.5, Some(total), Some("going back"));
        }
        Ok("done".into())
    }
}

export_tool!(Chatty);
