//! Test guest: makes the host allocate on its behalf, one class of attack
//! per `attack`, holding everything it gets until the host refuses. Every
//! attack must end in an error naming the limit, never in a host OOM.

use toolhost_sdk::Content;
use toolhost_sdk::bindings::wasi::http::types::{Fields, OutgoingRequest};
use toolhost_sdk::bindings::wasi::keyvalue::{atomics, batch, store};
use toolhost_sdk::prelude::*;

/// Which attack, and how big.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// `headers` (maps of six 4 KiB headers), `header_map` (one map of
    /// `count` of them), `bodies`, `kv_batch`, `cas`, `tiny_json`, `blocks`
    /// `list` (the workspace listed `count` times), `files` (one file
    /// opened `count` times, every descriptor held) or `reopen` (one file
    /// opened and closed `count` times).
    attack: String,
    /// How many of the attack's unit (header maps, keys, objects, blocks).
    count: u32,
}

struct HostBomb;

impl Tool for HostBomb {
    type Input = Input;
    const DESCRIPTION: &'static str = "Makes the host allocate for it (header maps, bodies, key-value copies, JSON, blocks) until refused.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        match input.attack.as_str() {
            "headers" => headers(input.count, 6),
            "header_map" => headers(1, input.count),
            "bodies" => bodies(input.count),
            "kv_batch" => kv_batch(input.count),
            "cas" => cas(input.count),
            "tiny_json" => Ok(tiny_json(input.count)),
            "blocks" => Ok(Output {
                content: vec![Content::Text(String::new()); input.count as usize],
                ..Output::default()
            }),
            "list" => list(input.count),
            "files" => files(input.count),
            "reopen" => reopen(input.count),
            other => Err(ToolError::InvalidInput(format!("unknown attack `{other}`"))),
        }
    }
}

/// `count` header maps of `per_map` 4 KiB headers each, all held.
fn headers(count: u32, per_map: u32) -> Result<Output, ToolError> {
    let value = vec![b'v'; 4096];
    let mut held = Vec::new();
    for _ in 0..count {
        let fields = Fields::new();
        for i in 0..per_map {
            fields
                .append(&format!("x-bomb-{i}"), &value)
                .map_err(|e| ToolError::Failed(format!("header {i} refused: {e:?}")))?;
        }
        held.push(fields);
    }
    Ok(format!("held {} header maps", held.len()).into())
}

/// Outgoing bodies with as much written as they accept, never sent.
fn bodies(count: u32) -> Result<Output, ToolError> {
    let chunk = vec![b'b'; 64 * 1024];
    let mut held = Vec::new();
    for _ in 0..count {
        let request = OutgoingRequest::new(Fields::new());
        let body = request
            .body()
            .map_err(|()| ToolError::Failed("no body".into()))?;
        let stream = body
            .write()
            .map_err(|()| ToolError::Failed("no stream".into()))?;
        while let Ok(room) = stream.check_write() {
            if room == 0 {
                break;
            }
            let n = (room as usize).min(chunk.len());
            if stream.write(&chunk[..n]).is_err() {
                break;
            }
        }
        held.push((request, body, stream));
    }
    Ok(format!("held {} bodies", held.len()).into())
}

/// One 1 MiB value read `count` times in one batch.
fn kv_batch(count: u32) -> Result<Output, ToolError> {
    let bucket = open()?;
    bucket
        .set("big", &vec![b'k'; 1024 * 1024])
        .map_err(kv_error)?;
    let keys = vec!["big".to_string(); count as usize];
    let values = batch::get_many(&bucket, &keys).map_err(kv_error)?;
    Ok(format!("read {} values", values.len()).into())
}

/// `count` compare-and-swap handles on one 1 MiB value, all held.
fn cas(count: u32) -> Result<Output, ToolError> {
    let bucket = open()?;
    bucket
        .set("big", &vec![b'c'; 1024 * 1024])
        .map_err(kv_error)?;
    let mut held = Vec::new();
    for _ in 0..count {
        held.push(atomics::Cas::new(&bucket, "big").map_err(kv_error)?);
    }
    Ok(format!("held {} handles", held.len()).into())
}

/// The workspace's entries, counted `count` times over.
fn list(count: u32) -> Result<Output, ToolError> {
    let mut entries = 0u64;
    for _ in 0..count {
        let listing = std::fs::read_dir("/workspace")
            .map_err(|e| ToolError::Failed(format!("cannot list /workspace: {e}")))?;
        for entry in listing {
            entry.map_err(|e| ToolError::Failed(format!("listing /workspace: {e}")))?;
            entries += 1;
        }
    }
    Ok(format!("listed {entries} entries").into())
}

/// One workspace file opened `count` times, every descriptor held.
fn files(count: u32) -> Result<Output, ToolError> {
    let path = "/workspace/held";
    std::fs::write(path, b"x")
        .map_err(|e| ToolError::Failed(format!("cannot write {path}: {e}")))?;
    let mut held = Vec::new();
    for i in 0..count {
        let file = std::fs::File::open(path)
            .map_err(|e| ToolError::Failed(format!("open {i} of {path} refused: {e}")))?;
        held.push(file);
    }
    Ok(format!("held {} files", held.len()).into())
}

/// One workspace file opened and closed again `count` times.
fn reopen(count: u32) -> Result<Output, ToolError> {
    let path = "/workspace/reopened";
    std::fs::write(path, b"x")
        .map_err(|e| ToolError::Failed(format!("cannot write {path}: {e}")))?;
    for i in 0..count {
        std::fs::File::open(path)
            .map_err(|e| ToolError::Failed(format!("open {i} of {path} refused: {e}")))?;
    }
    Ok(format!("opened {path} {count} times").into())
}

/// `count` tiny JSON objects in one block.
fn tiny_json(count: u32) -> Output {
    let objects = (0..count).map(|_| json!({ "a": 1 })).collect();
    Output::json(Value::Array(objects))
}

fn open() -> Result<store::Bucket, ToolError> {
    store::open("default").map_err(kv_error)
}

fn kv_error(error: store::Error) -> ToolError {
    ToolError::Failed(match error {
        store::Error::NoSuchStore => "no such store".to_string(),
        store::Error::AccessDenied => "access denied".to_string(),
        store::Error::Other(message) => message,
    })
}

export_tool!(HostBomb);
