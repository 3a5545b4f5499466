//! Every function a tool can import, and what bounds each in bytes and
//! time.

#![allow(
    clippy::unwrap_used,
    reason = "a test fails by panicking, helpers included"
)]

use std::collections::BTreeSet;
use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker};
use wit_parser::{LiftLowerAbi, ManglingAndAbi, Resolve};

use crate::engine::{EngineOptions, ToolEngine};
use crate::state::CallState;

const BOUNDS: &[(&str, &str)] = &[];

fn probe(resolve: &Resolve, world: wit_parser::WorldId) -> Vec<u8> {
    let mut module =
        wit_component::dummy_module(resolve, world, ManglingAndAbi::Legacy(LiftLowerAbi::Sync));
    wit_component::embed_component_metadata(
        &mut module,
        resolve,
        world,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .unwrap();
    wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}

fn imported_functions(engine: &Engine, component: &Component) -> BTreeSet<String> {
    let ty = component.component_type();
    let mut out = BTreeSet::new();
    let mut resources = Vec::new();
    for (name, import) in ty.imports(engine) {
        match import.ty {
            ComponentItem::ComponentFunc(_) => {
                out.insert(name.to_string());
            }
            ComponentItem::ComponentInstance(instance) => {
                for (item, export) in instance.exports(engine) {
                    match export.ty {
                        ComponentItem::ComponentFunc(_) => {
                            out.insert(format!("{name}#{item}"));
                        }
                        ComponentItem::Resource(resource) if !resources.contains(&resource) => {
                            resources.push(resource);
                            out.insert(format!("{name}#[resource-drop]{item}"));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
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
    crate::state::add_to_linker(&mut linker).unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut plugin = Resolve::default();
    let (pkg, _) = plugin.push_dir(manifest.join("../wit")).unwrap();
    let plugin_world = plugin.select_world(&[pkg], Some("plugin")).unwrap();
    let mut old = Resolve::default();
    let pkg = old.push_file(manifest.join("src/bindings/contract-0.1.0.wit")).unwrap();
    let old_world = old.select_world(&[pkg], Some("contract")).unwrap();
    let mut all = BTreeSet::new();
    for bytes in [probe(&plugin, plugin_world), probe(&old, old_world)] {
        let component = Component::new(engine, &bytes).unwrap();
        linker.instantiate_pre(&component).unwrap();
        all.extend(imported_functions(engine, &component));
    }
    for n in &all { println!("FN {n}"); }
    let table: BTreeSet<String> = BOUNDS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(all, table);
}
