//! Conformance fixture `slow_compute` (Tasks extension): works `seconds`
//! seconds, then answers. A call still running after `[server]
//! task_after_ms` becomes a task (`task = "optional"`, the default).

use std::time::Duration;

use toolhost_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    /// How long to work, in seconds (at most 600).
    seconds: f64,
    /// A name for the run.
    label: Option<String>,
}

struct SlowCompute;

impl Tool for SlowCompute {
    type Input = Input;
    const DESCRIPTION: &'static str = "Works for the given number of seconds, then answers.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let seconds = input.seconds.clamp(0.0, 600.0);
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let label = input.label.unwrap_or_else(|| "run".into());
        Ok(format!("{label}: computed for {seconds} s").into())
    }
}

export_tool!(SlowCompute);
