//! Test guest: sends many GET requests (the host's per-call request cap must
//! stop it) and reports how far it got.

use toolhost_sdk::http::Request;
use toolhost_sdk::prelude::*;

/// What to request, how often.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The URL to GET.
    url: String,
    /// How many requests to send.
    count: u32,
}

struct HttpFlood;

impl Tool for HttpFlood {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Sends `count` GET requests to `url`; reports successes and the first error.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let (mut succeeded, mut failed, mut first_error) = (0u32, 0u32, None);
        for _ in 0..input.count {
            match Request::new("GET", input.url.as_str())
                .max_body_bytes(4096)
                .send()
            {
                Ok(_) => succeeded += 1,
                Err(err) => {
                    failed += 1;
                    first_error.get_or_insert_with(|| err.to_string());
                }
            }
        }
        Ok(json!({ "succeeded": succeeded, "failed": failed, "firstError": first_error }).into())
    }
}

export_tool!(HttpFlood);
