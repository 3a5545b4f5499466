//! `grep`: search file contents in the workspace with a regular expression.

use std::ops::ControlFlow;

use globset::{GlobBuilder, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use toolhost_sdk::prelude::*;
use toolset_common::memchr::memchr;
use toolset_common::wsfs::{Kind, Workspace};
use toolset_common::{check_range, cut_chars, line_bounds, line_numbers, normalize};

/// The most matches one call may ask for.
const MAX_RESULTS: usize = 2000;
/// The most characters of a matching line returned.
const MAX_LINE_CHARS: usize = 500;
/// Larger files are skipped (the sandbox's memory is small).
const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// What to search for, and where.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    /// A regular expression (Rust `regex` syntax, e.g. `fn\s+main`,
    /// `TODO|FIXME`); `^` and `$` match at line starts and ends.
    pattern: String,
    /// The file or directory to search, relative to the workspace root
    /// (default: the root).
    #[serde(default)]
    path: String,
    /// Only search files matching this glob: a pattern without `/` (e.g.
    /// `*.rs`, `*.{ts,tsx}`) matches file names at any depth; one with `/`
    /// (e.g. `src/**/*.rs`) matches paths relative to `path`.
    #[serde(default)]
    glob: Option<String>,
    /// Ignore case (default false).
    #[serde(default)]
    case_insensitive: bool,
    /// The most matching lines to return (default 200, at most 2000).
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1, max = 2000))]
    max_results: usize,
}

fn default_max_results() -> usize {
    200
}

/// What `grep` returns.
#[derive(Serialize, JsonSchema)]
struct GrepOutput {
    /// The matching lines, sorted by path then line.
    matches: Vec<Match>,
    /// How many text files were searched (binary files are skipped).
    files_searched: usize,
    /// Whether the search stopped at `max_results` (more matches may exist).
    truncated: bool,
}

/// One matching line.
#[derive(Serialize, JsonSchema)]
struct Match {
    /// The file, relative to the workspace root.
    path: String,
    /// The 1-based line number.
    line: usize,
    /// The line's text, cut to 500 characters.
    text: String,
}

/// Which files the `glob` filter keeps.
enum Filter {
    /// A pattern without `/`: matched against the file name.
    Name(GlobMatcher),
    /// A pattern with `/`: matched against the path relative to the search root.
    Path(GlobMatcher),
}

impl Filter {
    fn new(pattern: &str) -> Result<Self, ToolError> {
        let cleaned = pattern.strip_prefix("./").unwrap_or(pattern);
        let matcher = GlobBuilder::new(cleaned)
            .literal_separator(true)
            .build()
            .map_err(|err| {
                ToolError::invalid_input(format!("invalid glob {pattern:?}: {}", err.kind()))
            })?
            .compile_matcher();
        Ok(if cleaned.contains('/') {
            Self::Path(matcher)
        } else {
            Self::Name(matcher)
        })
    }

    /// Whether to search the file `name` at `relative` (to the search root).
    fn keeps(&self, name: &str, relative: &str) -> bool {
        match self {
            Self::Name(matcher) => matcher.is_match(name),
            Self::Path(matcher) => matcher.is_match(relative),
        }
    }
}

/// The search's state: results so far and the cap.
struct Search {
    regex: Regex,
    max_results: usize,
    matches: Vec<Match>,
    files_searched: usize,
    truncated: bool,
}

impl Search {
    /// Searches one text file's bytes.
    fn file(&mut self, path: &str, bytes: &[u8]) {
        self.files_searched += 1;
        // The regex runs over the whole buffer; lines are found only around
        // matches, one match per line, no more than the results left.
        let room = self.max_results - self.matches.len();
        let mut lines = Vec::new();
        let mut from = 0;
        while from < bytes.len() {
            let Some(found) = self.regex.find_at(bytes, from) else {
                break;
            };
            if lines.len() == room {
                self.truncated = true;
                break;
            }
            let line = line_bounds(bytes, found.start());
            from = match memchr(b'\n', &bytes[line.end..]) {
                Some(newline) => line.end + newline + 1,
                None => bytes.len(),
            };
            lines.push(line);
        }
        if lines.is_empty() {
            return;
        }
        let starts: Vec<usize> = lines.iter().map(|line| line.start).collect();
        for (line, number) in lines.into_iter().zip(line_numbers(bytes, &starts)) {
            let text = String::from_utf8_lossy(&bytes[line]);
            self.matches.push(Match {
                path: path.to_string(),
                line: number,
                text: cut_chars(&text, MAX_LINE_CHARS).0.to_string(),
            });
        }
    }
}

struct Grep;

impl Tool for Grep {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Search the contents of text files in the workspace for a regular
        expression (Rust regex syntax, like ripgrep's), to find where something is
        defined or used. `pattern` is the regex, `path` the file or directory to
        search (default the workspace root), `glob` an optional file filter such
        as `*.rs`, `case_insensitive` ignores case, and `max_results` caps the
        matching lines (default 200, at most 2000). Returns each matching line's
        path, 1-based line number and text (cut to 500 characters), sorted by path
        then line; the search stops at `max_results` and sets `truncated`. Binary
        files, files over 16 MiB and `.git` are skipped, symlinks are not
        followed, and a match is reported on the line where it starts; use `read`
        to see more context.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn output_schema() -> Option<Value> {
        Some(toolhost_sdk::output_schema_of::<GrepOutput>())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let max_results = check_range("max_results", input.max_results, 1, MAX_RESULTS)?;
        let regex = RegexBuilder::new(&input.pattern)
            .case_insensitive(input.case_insensitive)
            .multi_line(true)
            .crlf(true)
            .build()
            .map_err(|err| {
                ToolError::invalid_input(format!("invalid regex {:?}: {err}", input.pattern))
            })?;
        let filter = input.glob.as_deref().map(Filter::new).transpose()?;
        let relative = normalize(&input.path)?;
        let mut search = Search {
            regex,
            max_results,
            matches: Vec::new(),
            files_searched: 0,
            truncated: false,
        };

        let workspace = Workspace::open()?;
        match workspace.kind(&relative)? {
            // An explicit file is searched whatever the glob says.
            Kind::File => {
                if let Some(bytes) = workspace.read_text(&relative, MAX_FILE_BYTES)? {
                    search.file(&relative, &bytes);
                }
            }
            Kind::Dir => workspace.walk_files(&relative, |file| {
                if filter
                    .as_ref()
                    .is_some_and(|f| !f.keeps(file.name(), file.relative()))
                {
                    return ControlFlow::Continue(());
                }
                // A file removed or unreadable meanwhile is left out.
                if let Ok(Some(bytes)) = file.read_text(MAX_FILE_BYTES) {
                    search.file(file.path(), &bytes);
                }
                if search.matches.len() == search.max_results {
                    // Full: more matches may wait in files not read.
                    search.truncated = true;
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            })?,
            Kind::Other => {
                return Err(ToolError::invalid_input(format!(
                    "{} is neither a file nor a directory",
                    input.path
                )));
            }
        }
        let output = GrepOutput {
            matches: search.matches,
            files_searched: search.files_searched,
            truncated: search.truncated,
        };
        Ok(serde_json::to_value(output)?.into())
    }
}

export_tool!(Grep);
