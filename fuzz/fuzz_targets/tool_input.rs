//! cargo-fuzz entry point: `cargo fuzz run --features libfuzzer tool_input`
//! (see `toolhost_fuzz::targets::tool_input`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::targets::tool_input(data);
});
