//! A tool's code: a compiled component, for baseline code what its
//! optimized compile needs, and what a call instantiates, held in a cell
//! the tiering swaps optimized code into. The engine makes it, the compile
//! cache stores and returns it, the registry and the tiering hold it.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use wasmtime::component::{Component, InstancePre};

use crate::bindings::ContractPre;
use crate::files::FileStamp;
use crate::plain::PlainFunction;
use crate::sandbox::state::CallState;

/// Which compiler made the code a tool runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeTier {
    /// Winch: a tool loaded baseline-first, until its Cranelift compile is in.
    Baseline,
    /// Cranelift.
    Optimized,
}

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

/// What to instantiate: a contract tool, or a plain component.
pub(crate) enum Pre<'a> {
    /// A component that implements the toolhost contract.
    Contract(&'a ContractPre<CallState>),
    /// A plain component: its exported functions are the tools.
    Plain(&'a InstancePre<CallState>),
}

/// What a call instantiates.
#[derive(Clone)]
pub(crate) enum Code {
    /// A component that implements the contract, its imports resolved.
    Contract(ContractPre<CallState>),
    /// A function of a plain component.
    Plain(Arc<PlainCall>),
}

impl Code {
    /// What to instantiate.
    pub(crate) fn pre(&self) -> Pre<'_> {
        match self {
            Self::Contract(pre) => Pre::Contract(pre),
            Self::Plain(call) => Pre::Plain(&call.pre),
        }
    }

    /// The addresses its compiled code occupies (to count loaded code).
    pub(crate) fn image(&self) -> std::ops::Range<usize> {
        let component = match self {
            Self::Contract(pre) => pre.instance_pre().component(),
            Self::Plain(call) => call.pre.component(),
        };
        let range = component.image_range();
        range.start as usize..range.end as usize
    }
}

/// A tool's code, replaced in place when its optimized compile is done.
#[derive(Clone)]
pub(crate) struct CodeCell(Arc<RwLock<(Code, CodeTier)>>);

impl CodeCell {
    /// A cell holding `code` of `tier`.
    pub(crate) fn new(code: Code, tier: CodeTier) -> Self {
        Self(Arc::new(RwLock::new((code, tier))))
    }

    /// The code as it is now.
    pub(crate) fn get(&self) -> Code {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// Which compiler made it.
    pub(crate) fn tier(&self) -> CodeTier {
        self.0.read().unwrap_or_else(PoisonError::into_inner).1
    }

    pub(crate) fn set_optimized(&self, code: Code) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = (code, CodeTier::Optimized);
    }
}

/// A plain component's function, ready to instantiate and call.
pub(crate) struct PlainCall {
    /// The component, its imports resolved.
    pub pre: InstancePre<CallState>,
    /// The function.
    pub function: PlainFunction,
}
