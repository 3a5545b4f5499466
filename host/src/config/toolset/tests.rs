use super::*;

fn parse(text: &str) -> anyhow::Result<crate::config::Config> {
    crate::config::Config::parse(text, std::path::Path::new("toolhost.toml"))
}

fn toolset(text: &str) -> Toolset {
    parse(text).unwrap().toolset.agent.unwrap()
}

#[test]
fn both_types_are_stored_canonically_and_echoed_dated() {
    for kind in [TOOLSET_TYPE, TOOLSET_TYPE_DATED] {
        let set = toolset(&format!("[toolset]\ntype = {kind:?}\n"));
        assert_eq!(
            set.to_json(),
            json!({
                "type": "agent_toolset_20260401",
                "default_config": {
                    "enabled": true,
                    "permission_policy": { "type": "always_allow" }
                },
                "configs": [],
                "http": [],
            })
        );
    }
    let array = toolset("[[toolset]]\ntype = \"agent_toolset\"\n");
    assert!(array.resolve("grep").enabled);
}

#[test]
fn other_types_and_second_toolsets_are_refused() {
    let err = parse("[toolset]\ntype = \"mcp_toolset\"\n").unwrap_err();
    assert!(
        format!("{err:#}").contains("needs `mcp_server_name`"),
        "{err:#}"
    );
    let err =
        parse("[[toolset]]\ntype = \"agent_toolset\"\n[[toolset]]\ntype = \"agent_toolset\"\n")
            .unwrap_err();
    assert!(
        format!("{err:#}").contains("declare `agent_toolset` once"),
        "{err:#}"
    );
    let err = parse("[toolset]\ntype = \"agent_toolset\"\ncolour = 1\n").unwrap_err();
    assert!(format!("{err:#}").contains("colour"), "{err:#}");
}

#[test]
fn array_form_accepts_only_builtin_names() {
    let set = toolset(
        "[toolset]\ntype = \"agent_toolset\"\n\
             configs = [{ name = \"write\", permission_policy = { type = \"always_ask\" } }]\n",
    );
    assert_eq!(set.resolve("write").permission, Permission::AlwaysAsk);
    assert_eq!(set.resolve("read").permission, Permission::AlwaysAllow);
    for name in ["list", "delete", "frobnicate"] {
        let err = parse(&format!(
            "[toolset]\ntype = \"agent_toolset\"\nconfigs = [{{ name = {name:?} }}]\n"
        ))
        .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("configs[0]") && text.contains(name), "{text}");
        assert!(
            text.contains("bash, edit, read, write, glob, grep, web_fetch, web_search"),
            "{text}"
        );
    }
    let err = parse("[toolset]\ntype = \"agent_toolset\"\nconfigs = [{ enabled = false }]\n")
        .unwrap_err();
    assert!(format!("{err:#}").contains("needs a `name`"));
}

#[test]
fn table_form_names_list_and_delete_and_keeps_unknown_keys() {
    let set = toolset(
        "[toolset]\ntype = \"agent_toolset\"\n\
             default_config = { enabled = false }\n\
             [toolset.configs]\nlist = { enabled = true }\ndelete = { enabled = true, permission_policy = \"always_ask\" }\n\
             frobnicate = { anything = 1 }\n",
    );
    assert!(set.resolve("list").enabled);
    assert_eq!(set.resolve("delete").permission, Permission::AlwaysAsk);
    assert!(!set.resolve("read").enabled, "inherits default_config");
    assert_eq!(set.ignored_keys(), ["frobnicate"]);
    assert_eq!(
        set.to_json()["configs"]["frobnicate"],
        json!({ "anything": 1 })
    );
    assert_eq!(set.to_json()["default_config"]["enabled"], json!(false));
}

#[test]
fn enabled_resolves_entry_over_default_over_true() {
    let set = toolset(
        "[toolset]\ntype = \"agent_toolset\"\n\
             default_config = { enabled = false, permission_policy = \"always_ask\" }\n\
             configs = [{ name = \"read\", enabled = true }, { name = \"bash\" }]\n",
    );
    assert_eq!(
        set.resolve("read"),
        Resolved {
            enabled: true,
            permission: Permission::AlwaysAsk,
            effect: None,
        }
    );
    assert!(!set.resolve("grep").enabled);
    assert!(
        !set.resolve("bash").enabled,
        "an entry without enabled inherits"
    );
    assert_eq!(set.unavailable().count(), 0);
    assert_eq!(
        toolset("[toolset]\ntype = \"agent_toolset\"\n")
            .unavailable()
            .map(|(name, _)| name)
            .collect::<Vec<_>>(),
        ["web_search"],
        "bash's availability is the sandbox's, probed when the tools load"
    );
}

#[test]
fn bad_policies_name_the_choices() {
    let err = parse(
            "[toolset]\ntype = \"agent_toolset\"\ndefault_config = { permission_policy = \"sometimes\" }\n",
        )
        .unwrap_err();
    assert!(format!("{err:#}").contains("expected \"always_allow\" or \"always_ask\""));
}

#[test]
fn implied_grants_follow_the_tool() {
    let set = toolset("[toolset]\ntype = \"agent_toolset\"\nhttp = [\"https://docs.rs\"]\n");
    let read = set.settings_for("read").unwrap();
    assert_eq!(read.workspace, Some(DirAccess::Read));
    assert_eq!(read.http, Some(vec![]));
    assert_eq!(
        set.settings_for("edit").unwrap().workspace,
        Some(DirAccess::Write)
    );
    let fetch = set.settings_for("web_fetch").unwrap();
    assert_eq!(fetch.workspace, Some(DirAccess::None));
    assert_eq!(fetch.http, Some(vec!["https://docs.rs".to_string()]));
    let bash = set.settings_for("bash").unwrap();
    assert_eq!(bash.workspace, Some(DirAccess::Write));
    // What its sandbox may reach through the host's proxy.
    assert_eq!(bash.http, Some(vec!["https://docs.rs".to_string()]));
    assert!(set.settings_for("someday").is_none());
}
