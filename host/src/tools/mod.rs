//! Tools: a tools folder loaded, checked and locked into the tools a host
//! serves.
//!
//! `registry/`: the registry, a load and its folder-wide checks, one file
//! per origin of a tool; `lock.rs`: `tools.lock` and its policy; `lint.rs`:
//! `toolhost check`'s lints, what makes a tool hard for a model to use.

pub mod lint;
pub mod lock;
pub mod registry;
