//! `toolhost new`: a tool project that builds and passes `toolhost check`
//! as it is.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::project::{Language, check_name};
use super::{AuthorError, Kit};

/// A template file: where it goes in the project, and its text with
/// `{{name}}` (and for Rust `{{sdk}}`) to fill in.
type Template = (&'static str, &'static str);

const RUST_STANDALONE: &[Template] = &[
    ("Cargo.toml", include_str!("templates/rust/Cargo.toml")),
    ("src/lib.rs", include_str!("templates/rust/lib.rs")),
    (
        ".cargo/config.toml",
        include_str!("templates/rust/config.toml"),
    ),
    (".gitignore", "/target\n"),
];

/// In a toolhost checkout's `plugins/`: a workspace member named as the
/// checkout's build expects (`plugin-<name>`).
const RUST_MEMBER: &[Template] = &[
    (
        "Cargo.toml",
        include_str!("templates/rust/member.Cargo.toml"),
    ),
    ("src/lib.rs", include_str!("templates/rust/lib.rs")),
];

const PYTHON: &[Template] = &[("tool.py", include_str!("templates/python/tool.py"))];

const TYPESCRIPT: &[Template] = &[
    ("tool.ts", include_str!("templates/ts/tool.ts")),
    ("package.json", include_str!("templates/ts/package.json")),
    ("tsconfig.json", include_str!("templates/ts/tsconfig.json")),
    (".gitignore", "/node_modules\n"),
];

/// Writes a new `language` project for the tool `name` in `parent/name` and
/// returns its folder. Refuses a name that is not a tool name and a folder
/// that exists.
pub fn scaffold(
    parent: &Path,
    name: &str,
    language: Language,
    kit: &Kit,
) -> Result<PathBuf, AuthorError> {
    let dir = parent.join(name);
    check_name(&dir, name)?;
    if dir.exists() {
        return Err(AuthorError::Exists(dir));
    }
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let (templates, sdk) = match language {
        Language::Rust => match checkout_plugins(parent) {
            Some(_) => (RUST_MEMBER, String::new()),
            None => (RUST_STANDALONE, kit.rust_sdk().display().to_string()),
        },
        Language::Python => (PYTHON, String::new()),
        Language::TypeScript => (TYPESCRIPT, kit.js_sdk().display().to_string()),
    };
    // Written beside the final folder and renamed: no half project is left.
    let staging = tempfile::Builder::new()
        .prefix(".toolhost-new-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    for (path, text) in templates {
        let target = staging.path().join(path);
        if let Some(folder) = target.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
        }
        let text = text
            .replace("{{name}}", name)
            .replace("{{package}}", &name.to_lowercase().replace('_', "-"))
            .replace("{{sdk}}", &sdk);
        std::fs::write(&target, text)
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    std::fs::rename(staging.keep(), &dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// `parent`, when it is the `plugins/` folder of a toolhost checkout (whose
/// workspace takes every crate in it as a member).
fn checkout_plugins(parent: &Path) -> Option<PathBuf> {
    let parent = parent.canonicalize().ok()?;
    let root = parent.parent()?;
    let is_checkout = parent.file_name()? == "plugins"
        && std::fs::read_to_string(root.join("sdk/rust/Cargo.toml"))
            .is_ok_and(|text| text.contains("name = \"toolhost-sdk\""))
        && std::fs::read_to_string(root.join("Cargo.toml"))
            .is_ok_and(|text| text.contains("\"plugins/*\""));
    is_checkout.then_some(parent)
}
