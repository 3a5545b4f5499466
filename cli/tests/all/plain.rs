//! Plain components: a component that exports ordinary functions (records,
//! variants, options, lists, results, flags, tuples) becomes one tool per
//! function, with a schema derived from the WIT types, validated input, and
//! results as JSON. `tests/guests/plain_shapes` is the component.

use crate::common;

use serde_json::{Value, json};
use toolhost::Host;

async fn shapes(config: &str) -> (tempfile::TempDir, Host) {
    common::host(&["plain_shapes"], config).await
}

async fn call(host: &Host, tool: &str, input: Value) -> (bool, Value) {
    let result = host
        .call(tool, input, &common::live())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    (result.is_error, result.result.clone())
}

#[tokio::test]
async fn each_function_is_a_tool_named_after_the_file() {
    let (_dir, host) = shapes("").await;
    let names: Vec<String> = host
        .registry()
        .tools()
        .map(|t| t.name().to_string())
        .collect();
    let long = names
        .iter()
        .find(|n| n.contains("really_long"))
        .expect("the long name");
    assert_eq!(long.len(), 64, "{long}");
    assert!(long.starts_with("plain_shapes_a_function_with_a_really_long_name"));
    let expected = [
        "plain_shapes_add",
        "plain_shapes_classify",
        "plain_shapes_describe_point",
        "plain_shapes_first_word",
        "plain_shapes_no_docs",
        "plain_shapes_safe_divide",
        "plain_shapes_set_flags",
        "plain_shapes_shape_area",
        "plain_shapes_sum_list",
        "plain_shapes_swap",
        "plain_shapes_text_add",
        "plain_shapes_upper",
    ];
    for name in expected {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    assert_eq!(
        names.len(),
        expected.len() + 1,
        "resource methods are no tools: {names:?}"
    );

    let registry = host.registry();
    let tool = registry.get("plain_shapes_text_add").unwrap();
    assert_eq!(tool.plain_export().unwrap(), "test:shapes/text@0.1.0#add");
    assert_eq!(
        tool.metadata().effect.to_string(),
        "write",
        "write unless configured"
    );
    let description = &registry
        .get("plain_shapes_no_docs")
        .unwrap()
        .metadata()
        .description;
    assert!(
        description.contains("no description")
            && description.contains("[tools.plain_shapes_no_docs] description"),
        "{description}"
    );
}

#[tokio::test]
async fn schemas_follow_the_wit_types() {
    let (_dir, host) = shapes("").await;
    let registry = host.registry();
    let schema = |tool: &str| registry.get(tool).unwrap().metadata().input_schema.clone();
    let point = &schema("plain_shapes_describe_point")["properties"]["p"];
    assert_eq!(
        point["required"],
        json!(["x", "y"]),
        "an option field may be left out"
    );
    assert_eq!(
        point["properties"]["label"]["anyOf"][1],
        json!({"type": "null"})
    );
    assert_eq!(
        schema("plain_shapes_classify")["properties"]["n"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    let shape = &schema("plain_shapes_shape_area")["properties"]["s"]["oneOf"];
    assert_eq!(shape[2], json!({"const": "empty"}));
    assert_eq!(shape[1]["required"], json!(["rect"]));
    let pair = &schema("plain_shapes_swap")["properties"]["pair"];
    assert_eq!(pair["minItems"], json!(2));
    assert_eq!(
        schema("plain_shapes_set_flags")["properties"]["f"]["items"]["enum"],
        json!(["read", "write", "exec"])
    );
    let output = registry
        .get("plain_shapes_safe_divide")
        .unwrap()
        .metadata()
        .output_schema
        .clone()
        .unwrap();
    assert_eq!(
        output["properties"]["result"]["oneOf"][1]["required"],
        json!(["err"])
    );
}

#[tokio::test]
async fn calls_carry_values_both_ways() {
    let (_dir, host) = shapes("").await;
    let cases = [
        ("plain_shapes_add", json!({"a": 2, "b": 3}), json!(5)),
        (
            "plain_shapes_text_add",
            json!({"a": 2, "b": 3}),
            json!(1005),
        ),
        (
            "plain_shapes_describe_point",
            json!({"p": {"x": 1.5, "y": 2.0, "label": "home"}}),
            Value::Null,
        ),
        ("plain_shapes_classify", json!({"n": 150}), json!("large")),
        (
            "plain_shapes_safe_divide",
            json!({"a": 1.0, "b": 4.0}),
            json!({"ok": 0.25}),
        ),
        (
            "plain_shapes_first_word",
            json!({"text": "   "}),
            Value::Null,
        ),
        (
            "plain_shapes_first_word",
            json!({"text": "hello world"}),
            json!("hello"),
        ),
        (
            "plain_shapes_sum_list",
            json!({"items": [1, -2, 40]}),
            json!(39),
        ),
        (
            "plain_shapes_shape_area",
            json!({"s": {"rect": {"width": 2, "height": 3}}}),
            json!(6.0),
        ),
        ("plain_shapes_shape_area", json!({"s": "empty"}), json!(0.0)),
        (
            "plain_shapes_set_flags",
            json!({"f": ["exec", "read"]}),
            json!(["read", "exec"]),
        ),
        (
            "plain_shapes_swap",
            json!({"pair": ["x", 7]}),
            json!([7, "x"]),
        ),
        ("plain_shapes_upper", json!({"s": "abc"}), json!("ABC")),
        ("plain_shapes_no_docs", json!({}), json!(true)),
    ];
    for (tool, input, expected) in cases {
        let (is_error, result) = call(&host, tool, input.clone()).await;
        assert!(!is_error, "{tool} {input}: {result}");
        if !expected.is_null() {
            assert_eq!(result["result"], expected, "{tool} {input}");
        }
    }
    let (_, point) = call(
        &host,
        "plain_shapes_describe_point",
        json!({"p": {"x": 1.5, "y": 2.0}}),
    )
    .await;
    assert!(point["result"].as_str().unwrap().contains("1.5"), "{point}");

    let (is_error, result) = call(&host, "plain_shapes_safe_divide", json!({"a": 1, "b": 0})).await;
    assert!(is_error, "an err result is an error the model sees");
    assert_eq!(result["result"], json!({"err": "division by zero"}));
}

#[tokio::test]
async fn inputs_are_validated_against_the_derived_schema() {
    let (_dir, host) = shapes("").await;
    for (tool, input, pointer) in [
        ("plain_shapes_classify", json!({"n": 256}), "/n"),
        ("plain_shapes_add", json!({"a": 1}), ""),
        ("plain_shapes_add", json!({"a": 1, "b": 2, "c": 3}), ""),
        (
            "plain_shapes_shape_area",
            json!({"s": {"triangle": 1}}),
            "/s",
        ),
        (
            "plain_shapes_describe_point",
            json!({"p": {"x": "1", "y": 2}}),
            "/p/x",
        ),
        ("plain_shapes_swap", json!({"pair": ["x"]}), "/pair"),
        ("plain_shapes_set_flags", json!({"f": ["fly"]}), "/f/0"),
    ] {
        let err = host
            .call(tool, input.clone(), &common::live())
            .await
            .expect_err(&format!("{tool} {input} passed"));
        assert_eq!(err.code(), "invalid_tool_input", "{tool} {input}");
        let toolhost::CallError::InvalidInput { errors, .. } = err else {
            unreachable!()
        };
        assert!(
            errors.iter().any(|e| e.pointer == pointer),
            "{tool} {input}: {errors:?}"
        );
    }
}

#[tokio::test]
async fn the_config_describes_functions_and_sets_their_effect() {
    let config = "[tools.plain_shapes_add]\n\
                  description = \"Add two integers. Returns their sum. Use it for arithmetic.\"\n\
                  effect = \"read\"\n\
                  permission = \"always_ask\"\n";
    let (_dir, host) = shapes(config).await;
    let registry = host.registry();
    let add = registry.get("plain_shapes_add").unwrap();
    assert!(add.metadata().description.starts_with("Add two integers."));
    assert_eq!(add.metadata().effect.to_string(), "read");
    let err = host
        .call("plain_shapes_add", json!({"a": 1, "b": 1}), &common::live())
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        "approval_required",
        "policies apply per function"
    );

    let dir = common::host_dir(&["echo"], "[tools.echo]\ndescription = \"x\"\n");
    let host = common::load(dir.path()).await;
    let registry = host.registry();
    let failure = &registry.failures()[0];
    assert!(
        failure
            .reason
            .contains("only functions of plain components"),
        "{failure}"
    );

    let dir = common::host_dir(&["echo"], "[defaults]\neffect = \"read\"\n");
    let Err(err) = Host::builder(dir.path()).build().await else {
        panic!("[defaults] effect loaded");
    };
    assert!(format!("{err:#}").contains("[tools.<name>]"), "{err:#}");
}

#[tokio::test]
async fn a_reloaded_plain_component_is_called_on_either_tier() {
    let (dir, host) = common::host(&["plain_shapes"], "").await;
    std::fs::write(
        dir.path().join("tools/plain_shapes.wasm"),
        common::fresh_copy("plain_shapes"),
    )
    .unwrap();
    let registry = host.reload().await.unwrap();
    let add = registry.get("plain_shapes_add").unwrap().clone();
    let tiers = [
        toolhost::engine::CodeTier::Baseline,
        toolhost::engine::CodeTier::Optimized,
    ];
    for tier in tiers {
        if tier == toolhost::engine::CodeTier::Optimized {
            host.engine().wait_optimized().await;
        }
        assert_eq!(add.code_tier(), tier);
        let result = host
            .call("plain_shapes_add", json!({"a": 2, "b": 3}), &common::live())
            .await
            .unwrap();
        assert_eq!(result.result, json!({"result": 5}), "{tier:?}");
        let text_add = host
            .call(
                "plain_shapes_text_add",
                json!({"a": 2, "b": 3}),
                &common::live(),
            )
            .await
            .unwrap();
        assert_eq!(text_add.result, json!({"result": 1005}), "{tier:?}");
    }
}

/// `plain_shapes.wasm` exports `swap`, the tool `plain_shapes_swap`; a file
/// of that slug beside it must not lose its grants to the function (or take
/// the function's name): both are refused, naming each other.
#[tokio::test]
async fn a_function_named_like_another_file_is_refused_with_that_file() {
    let config = "[tools.plain_shapes_swap]\nkv = [\"default\"]\n";
    for added_later in [false, true] {
        let dir = common::host_dir(&["plain_shapes"], config);
        let impostor = dir.path().join("tools/plain_shapes_swap.wasm");
        std::fs::copy(common::artifact("echo"), &impostor).unwrap();
        let host = if added_later {
            // The reload path keeps unchanged tools from the last load.
            std::fs::remove_file(&impostor).unwrap();
            let host = common::load(dir.path()).await;
            assert!(host.registry().get("plain_shapes_swap").is_some());
            std::fs::copy(common::artifact("echo"), &impostor).unwrap();
            host.reload().await.unwrap();
            host
        } else {
            common::load(dir.path()).await
        };
        let registry = host.registry();
        assert!(
            registry.get("plain_shapes_swap").is_none(),
            "added_later={added_later}: the contested name must not load"
        );
        let refusals: Vec<_> = registry
            .failures()
            .iter()
            .filter(|f| f.tool.as_deref() == Some("plain_shapes_swap"))
            .collect();
        assert_eq!(refusals.len(), 2, "one for each file: {refusals:?}");
        for refusal in &refusals {
            assert!(refusal.reason.contains("claimed twice"), "{refusal}");
            assert!(
                refusal.reason.contains("plain_shapes_swap.wasm"),
                "{refusal}"
            );
            assert!(refusal.reason.contains("plain_shapes.wasm"), "{refusal}");
        }
        assert!(
            registry.get("plain_shapes_add").is_some(),
            "the other functions load"
        );
    }
}

/// A plain component's result is measured before it is turned into JSON.
#[tokio::test]
async fn a_result_over_the_output_cap_is_refused_before_it_is_converted() {
    let (_dir, host) = shapes("[tools.plain_shapes_upper]\nmax_output_bytes = 1024\n").await;
    let result = host
        .call(
            "plain_shapes_upper",
            json!({"s": "a".repeat(2000)}),
            &common::live(),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    let text = result.result.to_string();
    assert!(
        text.contains("output cap hit: `test:shapes/text@0.1.0#upper` returned 1 JSON values in at least 2003 bytes"),
        "{text}"
    );
    assert_eq!(
        result.usage.limit.map(|l| (l.name.name(), l.value)),
        Some(("output", 1024))
    );
}

/// A host whose one file is `tests/python/<guest>` (WIT world `world`)
/// built with componentize-py, as `tools/<slug>.wasm`; `None` without
/// componentize-py, outside CI.
async fn python_host(guest: &str, world: &str, slug: &str) -> Option<(tempfile::TempDir, Host)> {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-guests");
    let wasm = toolhost_test_artifacts::python::componentize(guest, world, &out)?;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    std::fs::copy(&wasm, dir.path().join(format!("tools/{slug}.wasm"))).unwrap();
    std::fs::write(dir.path().join("toolhost.toml"), "").unwrap();
    let host = common::load(dir.path()).await;
    Some((dir, host))
}

#[tokio::test]
async fn a_python_runtimes_own_exports_are_not_tools() {
    let Some((_dir, host)) = python_host("py_plain", "calc", "calc").await else {
        return;
    };
    let names: Vec<String> = host
        .registry()
        .tools()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(
        names,
        ["calc_add"],
        "componentize-py's exports#init is no tool"
    );
    let (is_error, result) = call(&host, "calc_add", json!({"a": 2, "b": 3})).await;
    assert!(!is_error, "{result}");
    assert_eq!(result["result"], json!(5), "{result}");
}

/// The Python tool issue 25's Python figures are measured with
/// (`tests/python/py_eval`): it runs Python in the sandbox, and Python's
/// errors come back as the tool's errors.
#[tokio::test]
async fn a_python_evaluator_runs_python_and_reports_its_errors() {
    let Some((_dir, host)) = python_host("py_eval", "evaluator", "python").await else {
        return;
    };
    let mut names: Vec<String> = host
        .registry()
        .tools()
        .map(|t| t.name().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["python_eval", "python_exec"]);

    let (is_error, result) = call(
        &host,
        "python_eval",
        json!({"expression": "sum(range(10)) * 2"}),
    )
    .await;
    assert!(!is_error, "{result}");
    assert_eq!(result["result"], json!({"ok": "90"}), "{result}");
    let (is_error, result) = call(
        &host,
        "python_exec",
        json!({"statements": "for i in range(3):\n    print(i * i)"}),
    )
    .await;
    assert!(!is_error, "{result}");
    assert_eq!(result["result"], json!({"ok": "0\n1\n4\n"}), "{result}");

    let (is_error, result) = call(&host, "python_eval", json!({"expression": "1 / 0"})).await;
    assert!(is_error, "{result}");
    assert_eq!(
        result["result"],
        json!({"err": "ZeroDivisionError: division by zero"})
    );
    // No grant, no file: the sandbox has no filesystem to read from.
    let (is_error, result) = call(
        &host,
        "python_eval",
        json!({"expression": "open('/etc/hostname').read()"}),
    )
    .await;
    assert!(is_error, "{result}");
    assert!(
        result["result"]["err"]
            .as_str()
            .is_some_and(|e| e.starts_with("FileNotFoundError")),
        "{result}"
    );
}
