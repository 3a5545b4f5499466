//! Host bindings for the toolhost contract (`toolhost:tool/contract`).
//!
//! Only the toolhost-specific interfaces are generated here; the standard
//! WASI interfaces come from wasmtime-wasi and wasmtime-wasi-http.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "toolhost:tool/contract",
    exports: { default: async },
    // Key-value commits fsync: they run on the blocking pool, not on a
    // runtime worker (see caps::kv).
    imports: {
        "wasi:keyvalue/store": async,
        "wasi:keyvalue/atomics": async,
        "wasi:keyvalue/batch": async,
    },
    with: {
        "wasi:keyvalue/store.bucket": crate::caps::kv::Bucket,
        "wasi:keyvalue/atomics.cas": crate::caps::kv::Cas,
    },
});

pub use self::exports::toolhost::tool::tool as guest;
pub use self::toolhost::tool::types;
