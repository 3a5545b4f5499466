//! A tool's code: a compiled component, and for baseline code what its
//! optimized compile needs. The engine makes it, the compile cache stores
//! and returns it, the registry and the tiering hold it.

use std::path::PathBuf;

use wasmtime::component::Component;

use crate::files::FileStamp;

/// A compiled component and the SHA-256 of its bytes.
pub struct Compiled {
    /// The compiled component.
    pub component: Component,
    /// Hex SHA-256 of the `.wasm` bytes.
    pub sha256: String,
    /// For baseline code: what its optimized compile needs.
    pub(crate) baseline_of: Option<Source>,
}

impl Compiled {
    /// Cranelift code for the content `sha256`.
    pub(crate) fn optimized(component: Component, sha256: String) -> Self {
        Self {
            component,
            sha256,
            baseline_of: None,
        }
    }
}

/// The bytes of a component loaded as baseline code, and the file they
/// came from, for its optimized compile.
pub(crate) struct Source {
    /// The component's `.wasm` bytes.
    pub(crate) bytes: Vec<u8>,
    /// The file and its stamp, for the compile cache's index.
    pub(crate) file: Option<(PathBuf, FileStamp)>,
}
