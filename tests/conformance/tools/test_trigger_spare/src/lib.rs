//! Conformance fixture `test_trigger_spare`: the component
//! `test_trigger_tool_change` adds and removes: a tool and a prompt
//! (`test_trigger_spare_prompt`) whose coming and going change both lists.

use std::collections::BTreeMap;

use toolhost_sdk::prelude::*;
use toolhost_sdk::prompts::{Message, Prompt, Prompts};

struct Spare;

impl Tool for Spare {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Is there or not, as test_trigger_tool_change decides.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("Still here.".into())
    }
}

struct SparePrompt;

impl Prompts for SparePrompt {
    fn list() -> Vec<Prompt> {
        vec![Prompt::new("test_trigger_spare_prompt").with_description("Comes and goes.")]
    }

    fn get(_name: &str, _arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        Ok(vec![Message::user("Still here.")])
    }

    fn complete(_name: &str, _argument: &str, _value: &str) -> Vec<String> {
        Vec::new()
    }
}

export_tool!(Spare, prompts = SparePrompt);
