//! Conformance fixture `test_input_required_result_list_roots`: asks the
//! client for its roots under the key `client_roots` and names them.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredListRoots;

impl Tool for InputRequiredListRoots {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the client for its roots, then names them.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let replies =
            ask::ask_all(&[("client_roots", ask::Question::Roots)]).map_err(ToolError::Failed)?;
        let Some(ask::Reply::Roots(roots)) = replies.first() else {
            return Err(ToolError::Failed("no roots came back".into()));
        };
        let named: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
        Ok(format!("The client's roots: {}", named.join(", ")).into())
    }
}

export_tool!(InputRequiredListRoots);
