//! cargo-fuzz entry point: `cargo fuzz run --features libfuzzer component`
//! (see `toolhost_fuzz::targets::component`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::targets::component(data);
});
