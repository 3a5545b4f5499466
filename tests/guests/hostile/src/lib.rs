//! Test guest: attacks the host's *time*, one class of attack per
//! `attack`, each a loop of `count` host calls at or past a limit. Epochs
//! interrupt only wasm, so a host function that does work beyond linear in
//! its input, or waits unbounded, would hold the call past its deadline and
//! the worker with it; each attack must end by the deadline with an error
//! naming a limit, or finish at once.

use std::collections::BTreeMap;

use toolhost_sdk::bindings::wasi::http::types::{Fields, OutgoingRequest};
use toolhost_sdk::bindings::wasi::keyvalue::store;
use toolhost_sdk::bindings::wasi::random::random;
use toolhost_sdk::prelude::*;
use toolhost_sdk::resources::{self, Contents, ReadError, Resources, Template};
use toolhost_sdk::{artifacts, log, metrics, reminders, sessions};

/// Which attack, and how many host calls it makes.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// `resource_uri` (a 1 MiB address announced), `resource_match` (2 KiB
    /// addresses that nearly match a 16-expression template), `log` (8 MiB
    /// lines), `random` (1 MiB of random bytes a call, then 64 MiB),
    /// `http_parts` (requests with a 1 MiB authority and method, held),
    /// `sessions` (lookups of a 1 MiB channel and id), `metrics` (1 MiB
    /// names of control characters), `reminder_at` (a 1 MiB instant),
    /// `kv_cursor` (a 1 MiB listing cursor), `fs_sync` (4 MiB written and
    /// synced), `artifacts` (one-byte artifacts saved) or `spin` (no host
    /// call: the guest loops).
    attack: String,
    /// How many host calls the attack makes.
    count: u32,
}

struct Hostile;

impl Tool for Hostile {
    type Input = Input;
    const DESCRIPTION: &'static str = "Calls host functions with inputs at and past their limits, to hold the host past the call's deadline.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let count = input.count;
        let refused = match input.attack.as_str() {
            "resource_uri" => repeat(count, || {
                resources::updated(&format!("hostile://{}", "a".repeat(1 << 20)))
            }),
            "resource_match" => {
                let uri = format!("hostile://m/{}!", "-".repeat(2000));
                repeat(count, || resources::updated(&uri))
            }
            "log" => {
                let line = "x".repeat(8 << 20);
                for _ in 0..count {
                    log::info(&line);
                }
                None
            }
            "random" => {
                for _ in 0..count {
                    random::get_random_bytes(1 << 20);
                }
                random::get_random_bytes(64 << 20);
                None
            }
            "http_parts" => http_parts(count),
            "sessions" => {
                let long = "\u{1}".repeat(1 << 20);
                repeat(count, || {
                    sessions::get_session(&long, &long)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            }
            "metrics" => {
                let long = "\u{1}".repeat(1 << 20);
                repeat(count, || {
                    metrics::counter(&long)
                        .add(1.0, &[])
                        .map_err(|e| e.to_string())
                })
            }
            "reminder_at" => {
                let at = "\u{1}".repeat(1 << 20);
                repeat(count, || {
                    reminders::message(reminders::When::At(at.clone()), "hi")
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            }
            "kv_cursor" => {
                let bucket =
                    store::open("default").map_err(|e| ToolError::Failed(format!("{e:?}")))?;
                let cursor = "k".repeat(1 << 20);
                repeat(count, || {
                    bucket
                        .list_keys(Some(&cursor))
                        .map(|_| ())
                        .map_err(|e| format!("{e:?}"))
                })
            }
            "fs_sync" => fs_sync(count),
            "artifacts" => repeat(count, || {
                artifacts::save("a.bin", "application/octet-stream", b"x", &[])
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }),
            "spin" => {
                let mut n = 0u64;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                    if n == u64::MAX {
                        break None;
                    }
                }
            }
            other => return Err(ToolError::InvalidInput(format!("unknown attack `{other}`"))),
        };
        match refused {
            Some(error) => Err(ToolError::Failed(format!("refused: {error}"))),
            None => Ok(format!("{} x{count}: nothing refused", input.attack).into()),
        }
    }
}

/// Call `attempt` `count` times; the first refusal, if any.
fn repeat(count: u32, mut attempt: impl FnMut() -> Result<(), String>) -> Option<String> {
    (0..count).find_map(|_| attempt().err())
}

/// Outgoing requests with a 1 MiB authority and method, all held.
fn http_parts(count: u32) -> Option<String> {
    let authority = format!("{}.example", "a".repeat(1 << 20));
    let method = "M".repeat(1 << 20);
    let mut held = Vec::new();
    for i in 0..count {
        let request = OutgoingRequest::new(Fields::new());
        if request.set_authority(Some(&authority)).is_err() {
            return Some(format!("authority {i} refused"));
        }
        use toolhost_sdk::bindings::wasi::http::types::Method;
        if request.set_method(&Method::Other(method.clone())).is_err() {
            return Some(format!("method {i} refused"));
        }
        held.push(request);
    }
    None
}

/// 4 MiB written to a workspace file and synced, `count` times.
fn fs_sync(count: u32) -> Option<String> {
    use std::io::Write;
    let chunk = vec![b'f'; 4 << 20];
    let mut file = match std::fs::File::create("/workspace/synced") {
        Ok(file) => file,
        Err(e) => return Some(format!("cannot create /workspace/synced: {e}")),
    };
    for i in 0..count {
        if let Err(e) = file.write_all(&chunk).and_then(|()| file.sync_data()) {
            return Some(format!("write {i}: {e}"));
        }
    }
    None
}

/// One template of 16 expressions: the address `resource_match` nearly
/// matches, which a backtracking matcher tries every split of.
struct Addresses;

impl Resources for Addresses {
    fn templates() -> Vec<Template> {
        let expressions: String = (0..16).map(|i| format!("{{v{i}}}-")).collect();
        vec![
            Template::new("hostile://{a}!", "any"),
            Template::new(format!("hostile://m/{expressions}end"), "many"),
        ]
    }

    fn read(uri: &str, _parameters: &BTreeMap<String, String>) -> Result<Vec<Contents>, ReadError> {
        Ok(vec![Contents::text(uri, "")])
    }
}

export_tool!(Hostile, resources = Addresses);
