//! `toolhost check`'s lints: what makes a tool hard for a model to use well,
//! though it loads. Descriptions that are missing or one line, parameters
//! with no description, names that are not namespaced when the tools span
//! several systems, input schemas whose root is a combinator or a
//! reference (several model providers reject those), and `x-mcp-header`
//! annotations that MCP clients refuse (they drop the tool).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::tools::registry::{Origin, Tool};

/// Keys that common model providers reject at the root of an input schema.
const REJECTED_ROOT_KEYS: &[&str] = &["anyOf", "oneOf", "allOf", "$ref", "not", "if"];

/// One finding about one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lint {
    /// The tool it is about.
    pub tool: String,
    /// The rule, in kebab-case (`short-description`, …).
    pub rule: &'static str,
    /// What is wrong and what to do, in words.
    pub message: String,
}

/// What the lints look at in one tool.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its input schema.
    pub input_schema: &'a Value,
    /// Whether it is a toolset tool, whose fixed names are not namespaced.
    pub builtin: bool,
}

impl<'a> From<&'a Tool> for Subject<'a> {
    fn from(tool: &'a Tool) -> Self {
        Self {
            name: tool.name(),
            description: &tool.metadata().description,
            input_schema: &tool.metadata().input_schema,
            builtin: tool.origin() == Origin::Toolset,
        }
    }
}

/// Every finding about a set of tools, tool by tool in the order given.
pub fn lint<'a>(subjects: impl IntoIterator<Item = Subject<'a>>) -> Vec<Lint> {
    let subjects: Vec<Subject<'a>> = subjects.into_iter().collect();
    let systems = systems(&subjects);
    let mut lints = Vec::new();
    for subject in &subjects {
        let mut push = |rule, message| {
            lints.push(Lint {
                tool: subject.name.to_string(),
                rule,
                message,
            })
        };
        let sentences = sentence_count(subject.description);
        if sentences < 2 {
            push(
                "short-description",
                format!(
                    "the description is {} ({} characters); say when to use the tool, what \
                     it returns, what each parameter means and what it cannot do, in 3-4 \
                     sentences",
                    if sentences == 0 {
                        "not a sentence"
                    } else {
                        "one sentence"
                    },
                    subject.description.trim().chars().count()
                ),
            );
        }
        for key in REJECTED_ROOT_KEYS {
            if subject.input_schema.get(key).is_some() {
                push(
                    "schema-root",
                    format!(
                        "the input schema has `{key}` at its root, which several model \
                         providers reject; make the root a plain `type: object` with \
                         `properties` (move alternatives into a property)"
                    ),
                );
            }
        }
        let undocumented = undocumented_properties(subject.input_schema);
        if !undocumented.is_empty() {
            push(
                "undocumented-parameter",
                format!(
                    "input properties without a `description`: {}; say what each means \
                     and what values it takes",
                    undocumented.join(", ")
                ),
            );
        }
        for problem in header_annotation_problems(subject.input_schema) {
            push("mcp-header", problem);
        }
        if systems.len() >= 2 && !subject.builtin && !subject.name.contains(['_', '-']) {
            push(
                "not-namespaced",
                format!(
                    "the tools span several systems ({}), but `{}` names none; prefix it \
                     with its system, e.g. `{}_{}`",
                    systems
                        .iter()
                        .map(|s| format!("{s}_*"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    subject.name,
                    systems[0],
                    subject.name
                ),
            );
        }
    }
    lints
}

/// Why a schema's `x-mcp-header` annotations (MCP 2026-07-28, SEP-2243:
/// a property mirrored into an `Mcp-Param-<name>` header) would make MCP
/// clients drop the tool: each must sit on a property reached from the
/// root through `properties`, of a primitive type, named by a non-empty
/// HTTP token unique among them regardless of case.
fn header_annotation_problems(schema: &Value) -> Vec<String> {
    let mut annotated = Vec::new();
    annotated_properties(schema, &mut Vec::new(), &mut annotated);
    let mut problems = Vec::new();
    let on_root = usize::from(schema.get("x-mcp-header").is_some());
    if on_root == 1 {
        problems.push("the input schema's root has `x-mcp-header`; put it on a property".into());
    }
    let elsewhere = annotations_anywhere(schema, false) - on_root - annotated.len();
    if elsewhere > 0 {
        problems.push(format!(
            "{elsewhere} `x-mcp-header` annotation(s) sit where no chain of `properties` from \
             the root reaches (in `items`, a combinator or `$defs`); MCP clients refuse them"
        ));
    }
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (path, header, property) in annotated {
        let Some(name) = header
            .as_str()
            .filter(|n| !n.is_empty() && n.chars().all(is_tchar))
        else {
            problems.push(format!(
                "`x-mcp-header` of `{path}` is {header}; it must be a non-empty header name \
                 (letters, digits and !#$%&'*+-.^_`|~)"
            ));
            continue;
        };
        let primitive = ["string", "number", "integer", "boolean"];
        if !property["type"]
            .as_str()
            .is_some_and(|t| primitive.contains(&t))
        {
            problems.push(format!(
                "`{path}` has `x-mcp-header` but is not a string, number, integer or boolean"
            ));
        }
        if let Some(first) = names.insert(name.to_ascii_lowercase(), path.clone()) {
            problems.push(format!(
                "`{path}` and `{first}` both use the header name `{name}` (names are compared \
                 regardless of case)"
            ));
        }
    }
    problems
}

/// The properties reached from `schema` through `properties` that carry an
/// `x-mcp-header`: their dotted path, the annotation and their schema.
fn annotated_properties<'a>(
    schema: &'a Value,
    path: &mut Vec<&'a str>,
    found: &mut Vec<(String, &'a Value, &'a Value)>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        path.push(name);
        if let Some(header) = property.get("x-mcp-header") {
            found.push((path.join("."), header, property));
        }
        annotated_properties(property, path, found);
        path.pop();
    }
}

/// How many schema objects within `value` carry `x-mcp-header` (a
/// `properties` map's keys are names, not keywords).
fn annotations_anywhere(value: &Value, names: bool) -> usize {
    match value {
        Value::Object(map) => {
            let own = usize::from(!names && map.contains_key("x-mcp-header"));
            let within: usize = map
                .iter()
                .map(|(key, inner)| annotations_anywhere(inner, !names && key == "properties"))
                .sum();
            own + within
        }
        Value::Array(items) => items.iter().map(|v| annotations_anywhere(v, false)).sum(),
        _ => 0,
    }
}

/// Whether `c` may appear in an HTTP token (RFC 9110 `tchar`).
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The namespaces in use: name prefixes (before the first `_` or `-`)
/// shared by at least two tools.
fn systems(subjects: &[Subject<'_>]) -> Vec<String> {
    let mut prefixes: BTreeMap<&str, usize> = BTreeMap::new();
    for subject in subjects.iter().filter(|s| !s.builtin) {
        if let Some((prefix, _)) = subject.name.split_once(['_', '-']) {
            *prefixes.entry(prefix).or_default() += 1;
        }
    }
    prefixes
        .into_iter()
        .filter(|(_, count)| *count >= 2)
        .map(|(prefix, _)| prefix.to_string())
        .collect()
}

/// Sentences in a text: runs ending in `.`, `!` or `?` followed by white
/// space or the end, plus a trailing run without one.
fn sentence_count(text: &str) -> usize {
    let text = text.trim();
    let mut count = 0;
    let mut chars = text.chars().peekable();
    let mut in_sentence = false;
    while let Some(c) = chars.next() {
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()) {
            if in_sentence {
                count += 1;
            }
            in_sentence = false;
        } else if c.is_alphanumeric() {
            in_sentence = true;
        }
    }
    count + usize::from(in_sentence)
}

/// The root properties with no `description`, by name.
fn undocumented_properties(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, property)| {
                    property
                        .get("description")
                        .and_then(Value::as_str)
                        .is_none_or(|d| d.trim().is_empty())
                })
                .map(|(name, _)| format!("`{name}`"))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const GOOD: &str = "Look up an order by id. Returns its status and items. Use it when \
                        the user asks about an order; it cannot change one.";

    fn subject<'a>(name: &'a str, description: &'a str, schema: &'a Value) -> Subject<'a> {
        Subject {
            name,
            description,
            input_schema: schema,
            builtin: false,
        }
    }

    fn rules(lints: &[Lint], tool: &str) -> Vec<&'static str> {
        lints
            .iter()
            .filter(|l| l.tool == tool)
            .map(|l| l.rule)
            .collect()
    }

    #[test]
    fn a_good_tool_has_no_findings() {
        let schema = json!({
            "type": "object",
            "properties": { "id": { "type": "string", "description": "The order id." } }
        });
        assert!(lint([subject("orders_get", GOOD, &schema)]).is_empty());
    }

    #[test]
    fn one_line_descriptions_are_flagged() {
        let schema = json!({ "type": "object" });
        let lints = lint([
            subject("a", "Gets an order.", &schema),
            subject("b", "gets order", &schema),
            subject(
                "c",
                "Version 1.2 of the lookup. Returns the order.",
                &schema,
            ),
        ]);
        assert_eq!(rules(&lints, "a"), ["short-description"]);
        assert!(
            lints[0].message.contains("one sentence"),
            "{}",
            lints[0].message
        );
        assert_eq!(rules(&lints, "b"), ["short-description"]);
        assert!(rules(&lints, "c").is_empty(), "`1.2` is not a sentence end");
    }

    #[test]
    fn root_combinators_and_refs_are_flagged() {
        let any_of = json!({ "type": "object", "anyOf": [{ "required": ["a"] }] });
        let reference = json!({ "$ref": "#/$defs/Input", "$defs": {} });
        let lints = lint([subject("x", GOOD, &any_of), subject("y", GOOD, &reference)]);
        assert_eq!(rules(&lints, "x"), ["schema-root"]);
        assert!(lints[0].message.contains("`anyOf`"));
        assert_eq!(rules(&lints, "y"), ["schema-root"]);
    }

    #[test]
    fn header_annotations_mcp_clients_refuse_are_flagged() {
        let good = json!({ "type": "object", "properties": {
            "region": { "type": "string", "x-mcp-header": "Region", "description": "d" },
            "nested": { "type": "object", "description": "d", "properties": {
                "tenant": { "type": "string", "x-mcp-header": "Tenant", "description": "d" } } },
            "x-mcp-header": { "type": "string", "description": "a property of that name" }
        }});
        assert_eq!(
            rules(&lint([subject("good", GOOD, &good)]), "good"),
            Vec::<&str>::new()
        );
        let bad = json!({ "type": "object", "x-mcp-header": "Root", "properties": {
            "a": { "type": "string", "x-mcp-header": "Same", "description": "d" },
            "b": { "type": "integer", "x-mcp-header": "same", "description": "d" },
            "c": { "type": "array", "x-mcp-header": "List", "description": "d",
                   "items": { "type": "string", "x-mcp-header": "Item" } },
            "d": { "type": "string", "x-mcp-header": "", "description": "d" },
            "e": { "type": "string", "x-mcp-header": "Has Space", "description": "d" },
            "f": { "type": "string", "x-mcp-header": 7, "description": "d" }
        }});
        let lints = lint([subject("bad", GOOD, &bad)]);
        let messages: Vec<&str> = lints.iter().map(|l| l.message.as_str()).collect();
        assert!(lints.iter().all(|l| l.rule == "mcp-header"), "{messages:?}");
        for expected in [
            "root has `x-mcp-header`",
            "1 `x-mcp-header` annotation(s) sit where",
            "`b` and `a` both use the header name `same`",
            "`c` has `x-mcp-header` but is not",
            "`x-mcp-header` of `d` is \"\"",
            "`x-mcp-header` of `e` is \"Has Space\"",
            "`x-mcp-header` of `f` is 7",
        ] {
            assert!(
                messages.iter().any(|m| m.contains(expected)),
                "{expected}: {messages:?}"
            );
        }
        assert_eq!(lints.len(), 7, "{messages:?}");
    }

    #[test]
    fn undocumented_parameters_are_named() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": { "type": "string" },
                "verbose": { "type": "boolean", "description": "More detail." }
            }
        });
        let lints = lint([subject("orders_get", GOOD, &schema)]);
        assert_eq!(rules(&lints, "orders_get"), ["undocumented-parameter"]);
        assert!(lints[0].message.contains("`id`") && !lints[0].message.contains("verbose"));
    }

    #[test]
    fn bare_names_are_flagged_only_when_tools_span_systems() {
        let schema = json!({ "type": "object" });
        let one_system = lint([
            subject("github_search", GOOD, &schema),
            subject("github_merge", GOOD, &schema),
            subject("search", GOOD, &schema),
        ]);
        assert!(one_system.is_empty(), "{one_system:?}");
        let mut read = subject("read", GOOD, &schema);
        read.builtin = true;
        let two = lint([
            subject("github_search", GOOD, &schema),
            subject("github_merge", GOOD, &schema),
            subject("jira_search", GOOD, &schema),
            subject("jira-create", GOOD, &schema),
            subject("search", GOOD, &schema),
            read,
        ]);
        assert_eq!(rules(&two, "search"), ["not-namespaced"]);
        assert!(
            two[0].message.contains("github_*, jira_*"),
            "{}",
            two[0].message
        );
        assert!(rules(&two, "read").is_empty(), "toolset names are fixed");
    }
}
