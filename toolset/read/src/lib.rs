//! `read`: a text file's lines, paged by `offset` and `limit`.

use std::fs::{self, File};
use std::io::{BufRead, BufReader};

use toolhost_sdk::prelude::*;
use toolset_common::{
    AtPath, check_range, count_newlines, cut_bytes, display, nul_in_prefix, resolve,
};

/// The most lines one call returns.
const MAX_LIMIT: usize = 10_000;
/// The most bytes of text one call returns (whole lines, except a first line
/// longer than this).
const MAX_CONTENT_BYTES: usize = 256 * 1024;

/// Which file, and which lines of it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// The file, relative to the workspace root (e.g. `src/main.rs`).
    path: String,
    /// The 1-based number of the first line to return (default 1).
    #[serde(default = "default_offset")]
    #[schemars(range(min = 1))]
    offset: usize,
    /// How many lines to return at most (default 2000, at most 10000).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 10000))]
    limit: usize,
}

fn default_offset() -> usize {
    1
}

fn default_limit() -> usize {
    2000
}

/// What `read` returns.
#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    /// The file, relative to the workspace root.
    path: String,
    /// The raw text of lines `start_line` to `end_line`, line breaks included.
    content: String,
    /// The number of the first line returned.
    start_line: usize,
    /// The number of the last line returned (`start_line - 1` when none).
    end_line: usize,
    /// How many lines the file has.
    total_lines: usize,
    /// Whether more lines follow `end_line` (read again from `end_line + 1`).
    truncated: bool,
}

struct Read;

impl Tool for Read {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Read a text file in the workspace: returns the raw text of a range of its
        lines (no line-number prefixes) with `start_line`, `end_line` and
        `total_lines`, and `truncated` when more lines follow. `path` is relative to
        the workspace root; `offset` is the 1-based first line (default 1) and
        `limit` the number of lines (default 2000, at most 10000); a call returns
        at most 256 KiB of text, so page through a long file with offset =
        end_line + 1. Use `grep` to find where something is first, and `list` for
        a directory; binary files (images, archives, compiled code) cannot be read.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<ReadOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let offset = check_range("offset", input.offset, 1, usize::MAX)?;
        let limit = check_range("limit", input.limit, 1, MAX_LIMIT)?;
        let path = resolve(&input.path)?;
        let shown = display(&path);
        let meta = fs::metadata(&path).at(&path)?;
        if meta.is_dir() {
            return Err(ToolError::invalid_input(format!(
                "{shown} is a directory; use `list` to see its entries"
            )));
        }
        let binary = || {
            ToolError::invalid_input(format!(
                "{shown} is a binary file ({} bytes); read only shows text",
                meta.len()
            ))
        };

        let mut reader = BufReader::with_capacity(64 * 1024, File::open(&path).at(&path)?);
        if nul_in_prefix(reader.fill_buf().at(&path)?) {
            return Err(binary());
        }
        // Lines up to the end of the window, one at a time; the rest counted.
        let mut content = Vec::new();
        let mut line = Vec::new();
        let mut lines = 0;
        let mut end_line = offset - 1;
        let mut cut = false;
        let last = offset.saturating_add(limit - 1);
        while lines < last && !cut {
            line.clear();
            if reader.read_until(b'\n', &mut line).at(&path)? == 0 {
                break;
            }
            lines += 1;
            if lines < offset {
                continue;
            }
            if content.len() + line.len() > MAX_CONTENT_BYTES {
                cut = true;
                if lines > offset {
                    break;
                }
            }
            content.extend_from_slice(&line);
            end_line = lines;
        }
        // The rest is only counted: whole lines, and a last one without `\n`.
        let mut total_lines = lines;
        loop {
            let buf = reader.fill_buf().at(&path)?;
            let Some(&last_byte) = buf.last() else { break };
            lines += count_newlines(buf);
            total_lines = lines + usize::from(last_byte != b'\n');
            let len = buf.len();
            reader.consume(len);
        }
        if offset > total_lines.max(1) {
            return Err(ToolError::invalid_input(format!(
                "offset {offset} is past the end: {shown} has {total_lines} lines"
            )));
        }

        let mut content = String::from_utf8(content).map_err(|_| binary())?;
        if content.len() > MAX_CONTENT_BYTES {
            // One line longer than the cap: keep its start.
            let kept = cut_bytes(&content, MAX_CONTENT_BYTES).0.len();
            content.truncate(kept);
        }
        let output = ReadOutput {
            path: shown,
            content,
            start_line: offset,
            end_line,
            total_lines,
            truncated: cut || end_line < total_lines,
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Read);
