//! Test guest: a plain WASI command that does not export the toolhost
//! contract, so it must not load as a tool.

fn main() {
    println!("hello from a component without the toolhost contract");
}
