//! cargo-fuzz entry point: `cargo fuzz run --features libfuzzer config`
//! (see `toolhost_fuzz::targets::config`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::targets::config(data);
});
