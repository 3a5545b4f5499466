//! The sandbox: a tool's code and the fresh instance each call runs it in.
//!
//! `engine.rs`: the two compilers, the pooling allocator and the instance
//! pool; `compile_cache.rs`: compiled components kept by content and engine
//! key (it knows no wasmtime type); `code.rs`: a tool's compiled code, its
//! tier and the cell it is swapped in; `tiering.rs`: the background
//! optimizer that swaps baseline code for optimized code; `state.rs`: one
//! call's Store, with every wasmtime view trait and the linking of each
//! capability; `instance.rs`: instantiation under the call's limits, and
//! the guest's exports called within its deadline.

pub(crate) mod code;
pub(crate) mod compile_cache;
pub mod engine;
#[cfg(test)]
mod host_fn_bounds;
pub(crate) mod instance;
pub(crate) mod state;
pub(crate) mod tiering;
