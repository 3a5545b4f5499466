//! The book's configuration reference (`docs/reference/toolhost.toml`)
//! held against what [`Config`] reads: the example parses, every key a
//! section takes stands in it, and every `toml` snippet of the book and the
//! README parses.

use std::path::{Path, PathBuf};

use super::Config;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the host crate sits in the repository")
        .to_path_buf()
}

fn reference() -> (PathBuf, String) {
    let path = repository().join("docs/reference/toolhost.toml");
    let text = std::fs::read_to_string(&path).expect("the reference example");
    (path, text)
}

/// The reference with `[state]`'s commented Redis keys turned on.
fn with_redis(text: &str) -> String {
    let mut in_state = false;
    text.lines()
        .map(|line| {
            if line.starts_with('[') {
                in_state = line.starts_with("[state]");
            }
            match line.strip_prefix("# ") {
                Some(key) if in_state && key.contains(" = ") => key.to_string(),
                _ if in_state && line.starts_with("backend = ") => "backend = \"redis\"".into(),
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_reference_example_parses_on_both_backends() {
    let (path, text) = reference();
    Config::parse(&text, &path).unwrap_or_else(|e| panic!("{e:#}"));
    let redis = with_redis(&text);
    assert!(redis.contains("\nredis_url = "), "{redis}");
    Config::parse(&redis, &path).unwrap_or_else(|e| panic!("with redis: {e:#}"));
}

/// The keys `section` (a TOML header, empty for the root) takes, as
/// serde names them when refusing an unknown one.
fn keys_of(section: &str, required: &str) -> Vec<String> {
    let text = format!("{section}\n{required}\nnot_a_key_of_toolhost = 1\n");
    let err = format!(
        "{:#}",
        Config::parse(&text, Path::new("toolhost.toml")).unwrap_err()
    );
    let expected = err
        .split("expected ")
        .nth(1)
        .unwrap_or_else(|| panic!("{section}: no list of keys in {err}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_key_toolhost_reads_stands_in_the_reference() {
    let (_, text) = reference();
    let redis = with_redis(&text);
    let sections = [
        ("", ""),
        ("[defaults]", ""),
        ("[limits]", ""),
        ("[server]", ""),
        ("[tools.notes]", ""),
        ("[state]", ""),
        ("[telemetry]", ""),
        ("[[toolset]]", "type = \"agent_toolset\""),
        (
            "[[mcp_servers]]",
            "name = \"s\"\ntype = \"stdio\"\ncommand = \"x\"",
        ),
        (
            "[[mcp_servers]]",
            "name = \"s\"\ntype = \"url\"\nurl = \"https://a.example\"",
        ),
        ("[custom_tools.t]", ""),
        ("[agent_tools.t]", ""),
        ("[agents.a]", ""),
        ("[trust.\"*\"]", ""),
        ("[registries]", ""),
    ];
    let mut missing = Vec::new();
    for (section, required) in sections {
        let keys = keys_of(section, required);
        assert!(!keys.is_empty(), "{section}: no keys");
        for key in keys {
            // As a key (commented out where it is an alternative), or as
            // a table.
            let stands = redis.lines().any(|line| {
                let line = line.trim_start().trim_start_matches("# ");
                line.starts_with(&format!("{key} = "))
                    || (line.starts_with('[')
                        && (line.contains(&format!("[{key}]"))
                            || line.contains(&format!("[{key}."))
                            || line.contains(&format!(".{key}."))
                            || line.contains(&format!(".{key}]"))))
            });
            if !stands {
                missing.push(format!("{section} {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/reference/toolhost.toml lacks {missing:?}"
    );
}

/// The `toml` blocks of a Markdown file, each with its first line.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match (&mut open, line.trim_start()) {
            (None, "```toml") => open = Some((n + 2, String::new())),
            (Some(_), "```") => blocks.extend(open.take()),
            (Some((_, block)), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("docs/").flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

#[test]
fn every_toml_snippet_of_the_book_and_the_readme_parses() {
    let root = repository();
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    let mut checked = 0;
    let mut failed = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a page");
        for (line, block) in toml_blocks(&text) {
            if block.contains("{{#include") {
                continue;
            }
            checked += 1;
            // A snippet's relative files (`tools_file`, `script_file`) are
            // not there: it is checked for keys and values.
            if let Err(e) = Config::parse(&block, Path::new("toolhost.toml"))
                && !format!("{e:#}").contains("cannot read")
            {
                failed.push(format!("{}:{line}: {e:#}", file.display()));
            }
        }
    }
    assert!(checked >= 10, "only {checked} snippets found");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The README is the book's entrance: each of its relative links leads to
/// a file of the repository (the book's own links are checked when it is
/// built).
#[test]
fn the_readmes_links_lead_to_files() {
    let root = repository();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut broken = Vec::new();
    for target in readme
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
    {
        if target.contains("://") || target.starts_with('#') {
            continue;
        }
        let file = target.split('#').next().unwrap_or(target);
        if !root.join(file).exists() {
            broken.push(target.to_string());
        }
    }
    assert!(broken.is_empty(), "README.md links to {broken:?}");
}
