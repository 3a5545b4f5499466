//! cargo-fuzz entry point: `cargo fuzz run --features libfuzzer http_request`
//! (see `toolhost_fuzz::targets::http_request`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::targets::http_request(data);
});
