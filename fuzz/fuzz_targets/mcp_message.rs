//! cargo-fuzz entry point: `cargo fuzz run --features libfuzzer mcp_message`
//! (see `toolhost_fuzz::targets::mcp_message`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::targets::mcp_message(data);
});
