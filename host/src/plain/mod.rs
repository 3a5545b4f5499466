//! Plain components: a component that does not implement the toolhost
//! contract but exports ordinary functions becomes one tool per function.
//!
//! A function exported at the top level is named `<file slug>_<function>`;
//! one exported from an interface too, unless two would then collide, when
//! both get the interface's name in between (`<slug>_<interface>_<function>`).
//! Kebab-case becomes snake_case; a name over 64 characters is cut and ends
//! in a stable hash. `wasi:cli/run` and resource constructors, methods and
//! static functions are not tools, nor are functions that take or return
//! resources, futures or streams (they cannot be written as JSON).
//!
//! The input schema is an object with one property per parameter
//! ([`schema`]); a call's JSON becomes component values and its results
//! become JSON ([`convert`]).

pub mod convert;
pub mod schema;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem, Type};
use wasmtime::component::{Component, ComponentExportIndex};

use crate::tool::MAX_NAME_CHARS;

/// Exports that are entry points, not functions to call as tools.
const NOT_TOOLS: &[&str] = &["wasi:cli/run"];

/// Functions a language runtime exports for itself, by (instance, function):
/// componentize-py's pre-initialisation hook, which its build calls once
/// with the app's name and symbol tables.
const RUNTIME_INTERNAL: &[(&str, &str)] = &[("exports", "init")];

/// One exported function, as a tool.
#[derive(Clone)]
pub struct PlainFunction {
    /// The tool's name.
    pub name: String,
    /// The interface it is exported from (`None`: the component's top level).
    pub interface: Option<String>,
    /// The function's export name.
    pub function: String,
    /// Where to find it in an instance of the component.
    pub(crate) index: ComponentExportIndex,
    /// Its parameters, by name.
    pub(crate) params: Vec<(String, Type)>,
    /// Its result type, if it returns one.
    pub(crate) result: Option<Type>,
    /// The JSON Schema of its input.
    pub input_schema: Value,
    /// The JSON Schema of its result, wrapped as `{"result": …}`.
    pub output_schema: Option<Value>,
}

impl std::fmt::Debug for PlainFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainFunction")
            .field("name", &self.name)
            .field("interface", &self.interface)
            .field("function", &self.function)
            .finish_non_exhaustive()
    }
}

impl PlainFunction {
    /// `interface#function`, or `function` at the top level: how the WIT
    /// names it.
    pub fn export_path(&self) -> String {
        match &self.interface {
            Some(interface) => format!("{interface}#{}", self.function),
            None => self.function.clone(),
        }
    }
}

/// A function that is exported but cannot be a tool, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// `interface#function` or `function`.
    pub export: String,
    /// Why.
    pub reason: String,
}

/// The functions of a plain component, as tools named after `slug`, and the
/// exported functions that cannot be tools.
pub fn functions(
    engine: &Engine,
    component: &Component,
    slug: &str,
) -> (Vec<PlainFunction>, Vec<Skipped>) {
    let mut found: Vec<(Option<String>, String, ComponentFunc)> = Vec::new();
    let mut skipped = Vec::new();
    let ty = component.component_type();
    for (name, export) in ty.exports(engine) {
        match export.ty {
            ComponentItem::ComponentFunc(func) => found.push((None, name.to_string(), func)),
            ComponentItem::ComponentInstance(instance) if !is_entry_point(name) => {
                for (inner, export) in instance.exports(engine) {
                    if RUNTIME_INTERNAL.contains(&(name, inner)) {
                        continue;
                    }
                    if let ComponentItem::ComponentFunc(func) = export.ty {
                        found.push((Some(name.to_string()), inner.to_string(), func));
                    }
                }
            }
            _ => {}
        }
    }

    let names = tool_names(slug, &found);
    let mut functions = Vec::new();
    for ((interface, function, func), name) in found.into_iter().zip(names) {
        let export = match &interface {
            Some(i) => format!("{i}#{function}"),
            None => function.clone(),
        };
        if function.starts_with('[') {
            skipped.push(Skipped {
                export,
                reason: "resource constructors, methods and static functions are not tools".into(),
            });
            continue;
        }
        let index = interface
            .as_deref()
            .and_then(|i| component.get_export_index(None, i))
            .map(|instance| component.get_export_index(Some(&instance), function.as_str()))
            .unwrap_or_else(|| component.get_export_index(None, function.as_str()));
        let Some(index) = index else {
            skipped.push(Skipped {
                export,
                reason: "the export could not be found in the component".into(),
            });
            continue;
        };
        let params: Vec<(String, Type)> = func
            .params()
            .map(|(name, ty)| (name.to_string(), ty))
            .collect();
        let result = func.results().next();
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        let mut unsupported = None;
        for (param, ty) in &params {
            match schema::of(ty) {
                Ok(schema) => {
                    if !matches!(ty, Type::Option(_)) {
                        required.push(json!(param));
                    }
                    properties.insert(param.clone(), schema);
                }
                Err(why) => unsupported = Some(format!("parameter `{param}`: {why}")),
            }
        }
        let output_schema = match result.as_ref().map(schema::of).transpose() {
            Ok(schema) => schema.map(|s| {
                json!({
                    "type": "object",
                    "properties": { "result": s },
                    "required": ["result"],
                })
            }),
            Err(why) => {
                unsupported = Some(format!("result: {why}"));
                None
            }
        };
        if let Some(reason) = unsupported {
            skipped.push(Skipped { export, reason });
            continue;
        }
        functions.push(PlainFunction {
            name,
            interface,
            function,
            index,
            params,
            result,
            input_schema: json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }),
            output_schema,
        });
    }
    (functions, skipped)
}

/// Whether an exported interface is an entry point (`wasi:cli/run@…`).
fn is_entry_point(interface: &str) -> bool {
    let unversioned = interface.split('@').next().unwrap_or(interface);
    NOT_TOOLS.contains(&unversioned)
}

/// The tool name of each function: `<slug>_<function>`, with the interface
/// in between for interface functions whose short name is taken twice.
fn tool_names(slug: &str, found: &[(Option<String>, String, ComponentFunc)]) -> Vec<String> {
    let short = |function: &str| snake(&format!("{slug}_{function}"));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (_, function, _) in found {
        *counts.entry(short(function)).or_default() += 1;
    }
    found
        .iter()
        .map(|(interface, function, _)| {
            let name = match interface {
                Some(interface) if counts[&short(function)] > 1 => {
                    snake(&format!("{slug}_{}_{function}", interface_name(interface)))
                }
                _ => short(function),
            };
            shorten(&name)
        })
        .collect()
}

/// The bare name of an interface: `wasi:http/handler@0.2.0` -> `handler`.
fn interface_name(interface: &str) -> &str {
    let bare = interface.rsplit('/').next().unwrap_or(interface);
    bare.split('@').next().unwrap_or(bare)
}

/// kebab-case (and any other character a tool name cannot hold) to snake_case.
fn snake(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Hex digits of the hash a cut name ends with.
const NAME_HASH_CHARS: usize = 8;

/// A name over [`MAX_NAME_CHARS`], cut and given a stable hash of the whole.
fn shorten(name: &str) -> String {
    if name.len() <= MAX_NAME_CHARS {
        return name.to_string();
    }
    let hash = hex::encode(&Sha256::digest(name.as_bytes())[..NAME_HASH_CHARS / 2]);
    format!("{}_{hash}", &name[..MAX_NAME_CHARS - hash.len() - 1])
}

/// Whether `name` may be the tool name of a function of a plain component
/// whose file slug is `slug`, as `tool_names` makes them: it starts with
/// the snake-cased `<slug>_`, or, cut, with as much of it as a cut keeps.
pub fn may_be_function_of(slug: &str, name: &str) -> bool {
    let prefix = snake(&format!("{slug}_"));
    let kept = MAX_NAME_CHARS - NAME_HASH_CHARS - 1;
    name.starts_with(&prefix)
        || (name.len() == MAX_NAME_CHARS && prefix.starts_with(name.get(..kept).unwrap_or(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case_and_at_most_64_characters() {
        assert_eq!(snake("shapes_safe-divide"), "shapes_safe_divide");
        assert_eq!(interface_name("test:shapes/text@0.1.0"), "text");
        let long = format!("shapes_{}", "a_very_long_name".repeat(6));
        let short = shorten(&long);
        assert_eq!(short.len(), 64);
        assert_eq!(short, shorten(&long), "stable");
        assert!(
            may_be_function_of("shapes", &short),
            "a cut name is still known as shapes'"
        );
        assert!(!may_be_function_of("shape", &short));
        assert_ne!(short, shorten(&format!("{long}x")));
        assert_eq!(shorten("shapes_add"), "shapes_add");
        assert!(is_entry_point("wasi:cli/run@0.2.6") && !is_entry_point("wasi:cli/runner"));
    }
}
