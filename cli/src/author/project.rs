//! What a tool project is: a folder named by the tool, in one language.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::AuthorError;
use toolhost::tool;

/// The language a tool project is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// A `cdylib` crate built for `wasm32-wasip2` (`Cargo.toml`).
    Rust,
    /// A `tool.py` componentized with componentize-py.
    #[value(alias = "py")]
    Python,
    /// A `tool.ts` or `tool.js` bundled with esbuild and componentized with jco.
    #[value(name = "ts", alias = "typescript", alias = "js", alias = "javascript")]
    TypeScript,
}

impl Language {
    /// The language of the project in `dir`, told by its files: `Cargo.toml`,
    /// `tool.py`, or `tool.ts` / `tool.js`.
    pub fn of(dir: &Path) -> Option<Self> {
        if dir.join("Cargo.toml").is_file() {
            Some(Self::Rust)
        } else if dir.join("tool.py").is_file() {
            Some(Self::Python)
        } else if dir.join("tool.ts").is_file() || dir.join("tool.js").is_file() {
            Some(Self::TypeScript)
        } else {
            None
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Rust => "rust",
            Self::Python => "python",
            Self::TypeScript => "ts",
        })
    }
}

/// One tool project.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project folder.
    pub dir: PathBuf,
    /// The tool's name: the folder's name.
    pub name: String,
    /// What it is written in.
    pub language: Language,
}

impl Project {
    /// The project in `dir`, or `None` when `dir` is not one.
    pub fn open(dir: &Path) -> Result<Option<Self>, AuthorError> {
        let Some(language) = Language::of(dir) else {
            return Ok(None);
        };
        let dir = dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let name = dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_string();
        check_name(&dir, &name)?;
        Ok(Some(Self {
            dir,
            name,
            language,
        }))
    }
}

/// The projects at `path`: `path` itself when it is one, else every project
/// in the folders below it (down to `MAX_DEPTH`: 3 levels, not inside a project, and
/// skipping dependency, build and hidden folders), by name.
pub fn find_projects(path: &Path) -> Result<Vec<Project>, AuthorError> {
    if let Some(project) = Project::open(path)? {
        return Ok(vec![project]);
    }
    let mut projects = Vec::new();
    collect(path, 1, &mut projects)?;
    if projects.is_empty() {
        return Err(AuthorError::NoProject(path.to_path_buf()));
    }
    projects.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(projects)
}

/// How deep below the given folder `find_projects` looks.
pub const MAX_DEPTH: usize = 3;

/// Folders that hold no projects of their own.
const SKIPPED: &[&str] = &["node_modules", "target", "__pycache__", "tools"];

fn collect(dir: &Path, depth: usize, projects: &mut Vec<Project>) -> Result<(), AuthorError> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !entry.file_type().is_ok_and(|kind| kind.is_dir())
            || name.starts_with('.')
            || SKIPPED.contains(&&*name)
        {
            continue;
        }
        match Project::open(&entry.path())? {
            Some(project) => projects.push(project),
            None if depth < MAX_DEPTH => collect(&entry.path(), depth + 1, projects)?,
            None => {}
        }
    }
    Ok(())
}

/// A project's name must be a tool name, since it names the `.wasm` file.
pub(super) fn check_name(dir: &Path, name: &str) -> Result<(), AuthorError> {
    tool::check_name(name).map_err(|err| AuthorError::BadName {
        dir: dir.to_path_buf(),
        reason: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_is_told_by_files() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Language::of(dir.path()), None);
        std::fs::write(dir.path().join("tool.ts"), "").unwrap();
        assert_eq!(Language::of(dir.path()), Some(Language::TypeScript));
        std::fs::write(dir.path().join("tool.py"), "").unwrap();
        assert_eq!(Language::of(dir.path()), Some(Language::Python));
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(Language::of(dir.path()), Some(Language::Rust));
    }

    #[test]
    fn a_folder_of_projects_is_listed_by_name_and_bad_names_are_refused() {
        let root = tempfile::tempdir().unwrap();
        for (name, file) in [
            ("zeta", "tool.py"),
            ("ts/alpha", "tool.js"),
            ("notes", ""),
            ("ts/node_modules/dep", "tool.js"),
        ] {
            let dir = root.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            if !file.is_empty() {
                std::fs::write(dir.join(file), "").unwrap();
            }
        }
        let names: Vec<_> = find_projects(root.path())
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.language))
            .collect();
        assert_eq!(
            names,
            [
                ("alpha".to_string(), Language::TypeScript),
                ("zeta".to_string(), Language::Python)
            ]
        );

        let bad = root.path().join("has space");
        std::fs::create_dir(&bad).unwrap();
        std::fs::write(bad.join("tool.py"), "").unwrap();
        let err = find_projects(root.path()).unwrap_err().to_string();
        assert!(
            err.contains("has space") && err.contains("invalid"),
            "{err}"
        );

        let empty = tempfile::tempdir().unwrap();
        let err = find_projects(empty.path()).unwrap_err().to_string();
        assert!(
            err.contains("no tool project") && err.contains("tool.py"),
            "{err}"
        );
    }
}
