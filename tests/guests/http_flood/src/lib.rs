//! Test guest: sends many requests (the host's per-call request cap must
//! stop it) and reports how far it got. Its effect is `read`, so any method
//! but GET and HEAD must be refused even where the grant allows the origin.

use toolhost_sdk::http::Request;
use toolhost_sdk::prelude::*;

/// What to request, how often, with which method.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The URL to request.
    url: String,
    /// How many requests to send.
    count: u32,
    /// The method (default GET).
    #[serde(default)]
    method: Option<String>,
}

struct HttpFlood;

impl Tool for HttpFlood {
    type Input = Input;
    const DESCRIPTION: &'static str = "Sends `count` requests (GET unless `method` says otherwise) to `url`; reports successes and the first error.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let method = input.method.as_deref().unwrap_or("GET");
        let (mut succeeded, mut failed, mut first_error) = (0u32, 0u32, None);
        for _ in 0..input.count {
            // No request body: the refusal, not a closed body stream, is
            // what the guest sees first.
            match Request::new(method, input.url.as_str())
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
