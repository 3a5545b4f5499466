//! Conformance fixture `test_trigger_tool_change` (also copied as
//! `test_trigger_prompt_change`): the suite's hook to change the tool and
//! prompt lists. Granted `state = "write"` on a host whose state root is its
//! tools folder (cli/tests/all/conformance.rs), it adds the spare component
//! `test_trigger_spare` (a tool and a prompt) from `spare/`, or removes it
//! when it is there, as an operator would: the host reloads and tells
//! listeners both lists changed.

use std::fs;
use std::path::Path;

use toolhost_sdk::prelude::*;

/// The spare component while it is loaded.
const LOADED: &str = "/state/test_trigger_spare.wasm";
/// Its copy, outside the loaded files.
const SPARE: &str = "/state/spare/test_trigger_spare.wasm";
/// Where the copy is written before it is renamed into place, so the host
/// never sees half a file (not a `.wasm`: the host does not load it).
const WRITING: &str = "/state/test_trigger_spare.partial";

struct TriggerChange;

impl Tool for TriggerChange {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Adds the spare component to the tools folder, or removes it, changing the tool and \
         prompt lists.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let failed = |e: std::io::Error| ToolError::Failed(e.to_string());
        if Path::new(LOADED).exists() {
            fs::remove_file(LOADED).map_err(failed)?;
            return Ok("Removed test_trigger_spare.".into());
        }
        fs::copy(SPARE, WRITING).map_err(failed)?;
        fs::rename(WRITING, LOADED).map_err(failed)?;
        Ok("Added test_trigger_spare.".into())
    }
}

export_tool!(TriggerChange);
