//! Every function a tool can import, and what bounds each in bytes and
//! time.
//!
//! An epoch interrupts wasm, never a host function: each function the
//! contract's world imports must do work linear in its input, check its
//! caps before that work, and end in bounded time. [`BOUNDS`] says how each
//! one does, and the test below fails when the world imports a function it
//! has no entry for, so a new host function cannot land unbounded.
//!
//! The entries use these words:
//! - **fuel**: wasmtime's hostcall fuel (`instance.rs`, `usage.rs`
//!   `hostcall_bytes`, 32 MiB by default). A call whose strings and lists
//!   are larger traps before the host function runs.
//! - **sync**: a synchronous host function; nothing preempts it.
//! - **dropped at the deadline**: an async host function's awaits end when
//!   `Instance::within` drops the call, 250 ms past its deadline.
//! - **gated**: disk work on a blocking thread through
//!   [`crate::blocking::run`]: at most 16 at once host-wide, told when its
//!   call has gone.
//! - **inline**: a wasmtime-wasi filesystem syscall run on the worker that
//!   runs the guest (`allow_blocking_current_thread`), not preempted.
//! - **GAP**: the bound is missing; the entry says what is unbounded.

mod filesystem;
mod http;
mod io;
mod keyvalue;
mod sockets;
mod toolhost;

use std::collections::BTreeSet;
use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker};
use wit_parser::{LiftLowerAbi, ManglingAndAbi, Resolve, WorldId};

use crate::sandbox::engine::{EngineOptions, ToolEngine};
use crate::sandbox::state::CallState;

/// A `tcp-socket` method: no tool can reach one.
const NO_TCP_SOCKET: &str = "O(1) and unreachable: create-tcp-socket is refused, so a tool holds no \
                             tcp-socket handle";

/// A `udp` method: no tool can reach one.
const NO_UDP_SOCKET: &str = "O(1) and unreachable: create-udp-socket is refused, so a tool holds no \
                             udp-socket or datagram-stream handle";

/// The server side of `wasi:http/types`: no tool can reach it.
const NO_INCOMING_REQUEST: &str = "O(1) and unreachable: a tool exports no incoming handler, so it \
                                   holds no incoming-request or response-outparam handle";

/// Every function the world imports, keyed `<interface>#<function>` as the
/// component type names it (a destructor as `#[resource-drop]<resource>`,
/// under the interface that defines the resource), with what bounds it.
const BOUNDS: &[&[(&str, &str)]] = &[
    toolhost::BOUNDS,
    keyvalue::BOUNDS,
    io::BOUNDS,
    filesystem::BOUNDS,
    sockets::BOUNDS,
    http::BOUNDS,
];

/// A component made from `world` of `resolve` that imports every function
/// of it: wit-component's stand-in core module, which lowers them all
/// (a real guest's component imports only what it calls).
fn probe(resolve: &Resolve, world: WorldId) -> Vec<u8> {
    let mut module =
        wit_component::dummy_module(resolve, world, ManglingAndAbi::Legacy(LiftLowerAbi::Sync));
    wit_component::embed_component_metadata(
        &mut module,
        resolve,
        world,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .expect("the world's metadata embeds");
    wit_component::ComponentEncoder::default()
        .module(&module)
        .expect("the stand-in module is one wit-component takes")
        .validate(true)
        .encode()
        .expect("the probe component encodes")
}

/// The world `name` of the WIT at `path` (a directory with `deps/`, or a
/// file) and what it was resolved in.
fn world(path: &Path, name: &str) -> (Resolve, WorldId) {
    let mut resolve = Resolve::default();
    let package = match path.is_dir() {
        true => resolve.push_dir(path).map(|(package, _)| package),
        false => resolve.push_file(path),
    }
    .unwrap_or_else(|e| panic!("cannot read {}: {e:#}", path.display()));
    let world = resolve
        .select_world(&[package], Some(name))
        .unwrap_or_else(|e| panic!("{} has no world {name}: {e:#}", path.display()));
    (resolve, world)
}

/// Every function `component` imports, named `<interface>#<function>`,
/// and `<interface>#[resource-drop]<resource>` for each resource's
/// destructor, under the interface that defines it: an interface that
/// `use`s a resource names the same type again, later in the imports.
fn imported_functions(engine: &Engine, component: &Component) -> BTreeSet<String> {
    let ty = component.component_type();
    let mut functions = BTreeSet::new();
    let mut resources = Vec::new();
    for (name, import) in ty.imports(engine) {
        match import.ty {
            ComponentItem::ComponentFunc(_) => {
                functions.insert(name.to_string());
            }
            ComponentItem::ComponentInstance(instance) => {
                for (item, export) in instance.exports(engine) {
                    match export.ty {
                        ComponentItem::ComponentFunc(_) => {
                            functions.insert(format!("{name}#{item}"));
                        }
                        ComponentItem::Resource(resource) if !resources.contains(&resource) => {
                            resources.push(resource);
                            functions.insert(format!("{name}#[resource-drop]{item}"));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    functions
}

/// What the test says when the functions imported and [`BOUNDS`] differ.
fn mismatch(missing: &[&str], extra: &[&str]) -> String {
    let mut message = String::new();
    if !missing.is_empty() {
        message.push_str(
            "the world imports these functions, and BOUNDS has no entry for them: add an entry \
             to BOUNDS in host/src/host_fn_bounds/ (the file of its package) saying how it is bounded in \
             bytes and time (its caps, checked before its work, and what ends it):\n",
        );
        for name in missing {
            message.push_str(&format!("  {name}\n"));
        }
    }
    if !extra.is_empty() {
        message.push_str(
            "BOUNDS has entries for these functions, which the world no longer imports: remove \
             them from host/src/host_fn_bounds/, or fix their names:\n",
        );
        for name in extra {
            message.push_str(&format!("  {name}\n"));
        }
    }
    message
}

#[test]
fn every_imported_function_has_its_bounds() {
    let cache = tempfile::tempdir().unwrap();
    let tool_engine = ToolEngine::new(&EngineOptions {
        max_memory_bytes: 16 << 20,
        max_instances: 1,
        cache_dir: cache.path().to_path_buf(),
        cache_max_bytes: 1 << 20,
        shared_cache: None,
    })
    .unwrap();
    let engine = tool_engine.engine();
    let mut linker = Linker::<CallState>::new(engine);
    crate::sandbox::state::add_to_linker(&mut linker).unwrap();
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    let worlds = [
        // The current contract with every standard interface; `@unstable`
        // items are left out, as in a guest built against it.
        world(&host.join("../wit"), "plugin"),
        // Contract 0.1.0, whose components keep loading: its log and
        // progress.
        world(&host.join("src/bindings/contract-0.1.0.wit"), "contract"),
    ];
    let mut imported = BTreeSet::new();
    for (resolve, world) in &worlds {
        let name = &resolve.worlds[*world].name;
        let component = Component::new(engine, probe(resolve, *world))
            .unwrap_or_else(|e| panic!("the probe of {name} compiles: {e:#}"));
        linker
            .instantiate_pre(&component)
            .unwrap_or_else(|e| panic!("the host's linker defines every import of {name}: {e:#}"));
        imported.extend(imported_functions(engine, &component));
    }

    let bounds: Vec<&(&str, &str)> = BOUNDS.iter().flat_map(|part| part.iter()).collect();
    let table: BTreeSet<&str> = bounds.iter().map(|(name, _)| *name).collect();
    assert_eq!(table.len(), bounds.len(), "BOUNDS names a function twice");
    for (name, bound) in bounds {
        assert!(!bound.trim().is_empty(), "BOUNDS says nothing for {name}");
    }
    let missing: Vec<&str> = imported
        .iter()
        .map(String::as_str)
        .filter(|name| !table.contains(name))
        .collect();
    let extra: Vec<&str> = table
        .iter()
        .copied()
        .filter(|name| !imported.contains(*name))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{}",
        mismatch(&missing, &extra)
    );
}
