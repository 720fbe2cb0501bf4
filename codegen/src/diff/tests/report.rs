//! The printed and JSON reports, and a realistic bundle.

use super::*;

#[test]
fn the_human_report_has_one_line_per_change_and_a_summary() {
    let old = params_bundle(
        Pos::Input,
        "0.1.0",
        json!({ "TestParams": object(json!({ "cwd": { "type": "string" } }), &[]) }),
    );
    let new = params_bundle(
        Pos::Input,
        "0.2.0",
        json!({ "TestParams": object(json!({ "model": { "type": "string" } }), &[]) }),
    );
    let report = diff(&old, &new);
    assert_eq!(
        report.to_string(),
        "BREAKING  field-removed  test/run params /cwd: optional field removed\n\
         compatible  optional-field-added  test/run params /model: optional field added\n\
         1 breaking, 1 compatible changes (0.1.0 -> 0.2.0)"
    );
    assert!(report.has_breaking());
    assert_eq!(report.breaking().count(), 1);
    assert_eq!(report.compatible().count(), 1);
}

#[test]
fn the_json_report_carries_every_field() {
    let old = bundle(
        "0.1.0",
        json!({}),
        &[MethodSpec::new(METHOD, "clientRequest")],
    );
    let mut new = bundle("0.2.0", json!({}), &[]);
    edit(&mut new, "", |root| {
        if let Some(map) = root.as_object_mut() {
            map.remove("x-protocol-version");
        }
    });
    // A bundle needs one method; give the new one another.
    let other = bundle(
        "0.2.0",
        json!({}),
        &[MethodSpec::new("b/other", "clientNotification")],
    );
    edit(&mut new, "/definitions", |definitions| {
        definitions["BOtherNotificationEnvelope"] =
            other["definitions"]["BOtherNotificationEnvelope"].clone();
    });
    let report = diff(&old, &new);
    assert_eq!(
        report.to_json(),
        json!({
            "oldVersion": "0.1.0",
            "newVersion": null,
            "breaking": 1,
            "compatible": 1,
            "changes": [
                { "severity": "compatible", "rule": "method-added", "method": "b/other",
                  "location": "b/other", "detail": "client notification added" },
                { "severity": "breaking", "rule": "method-removed", "method": METHOD,
                  "location": METHOD, "detail": "client request removed" },
            ],
        })
    );
    assert!(report.to_string().ends_with("(0.1.0 -> unknown)"));
}

#[test]
fn rule_names_are_unique_kebab_case_and_round_trip() {
    let mut names = std::collections::BTreeSet::new();
    for rule in Rule::ALL {
        let name = rule.name();
        assert!(
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !name.starts_with('-')
                && !name.ends_with('-'),
            "{name}"
        );
        assert!(names.insert(name), "{name} twice");
        assert_eq!(Rule::from_name(name), Some(rule));
        assert_eq!(rule.to_string(), name);
    }
    assert_eq!(Rule::from_name("no-such-rule"), None);
    assert_eq!(Rule::NullableAdded.severities(), (C, B));
    assert_eq!(Severity::Breaking.name(), "breaking");
}

#[test]
fn realistic_changes_are_classified_where_they_happen() {
    let old = realistic();
    let mut new = realistic();
    edit(&mut new, "/x-protocol-version", |v| *v = json!("0.2.0"));
    // An output field goes: every method that sends a thread item reports it.
    remove(
        &mut new,
        "/definitions/ThreadItem/oneOf/1/properties",
        "text",
    );
    pull(
        &mut new,
        "/definitions/ThreadItem/oneOf/1/required",
        &json!("text"),
    );
    // An output enum gains a value.
    push(&mut new, "/definitions/TurnStatus/enum", json!("cancelled"));
    // An input field becomes required.
    edit(&mut new, "/definitions/ThreadStartParams", |params| {
        params["required"] = json!(["cwd"]);
    });
    // An enum used in both directions loses a value.
    pull(
        &mut new,
        "/definitions/AskForApproval/oneOf/0/enum",
        &json!("on-failure"),
    );
    // The answer to a server request (input) loses a value.
    edit(
        &mut new,
        "/definitions/CommandExecutionApprovalDecision/oneOf",
        |v| {
            if let Some(items) = v.as_array_mut() {
                items.pop();
            }
        },
    );
    // A server notification gains a required field (compatible: output).
    edit(&mut new, "/definitions/ItemStartedNotification", |v| {
        v["properties"]["startedAtMs"] = json!({ "type": "integer", "format": "int64" });
        push_required(v, "startedAtMs");
    });
    // A stable method goes; an experimental one goes too.
    for gone in ["ThreadList", "ThreadRollback"] {
        remove(&mut new, "/definitions", &format!("{gone}RequestEnvelope"));
        remove(&mut new, "/definitions", &format!("{gone}ResponseEnvelope"));
        pull(
            &mut new,
            "/definitions/ClientRequest/oneOf",
            &json!({ "$ref": format!("#/definitions/{gone}RequestEnvelope") }),
        );
    }
    // The mcp tool parameter gains a required member.
    edit(&mut new, "/definitions/mcp/CodexToolCallParam", |v| {
        v["properties"]["cwd"] = json!({ "type": "string" });
        push_required(v, "cwd");
    });

    let report = diff(&old, &new);
    let text = report.to_string();
    for (severity, rule, location) in [
        (
            B,
            Rule::FieldRemoved,
            "thread/read response /thread/turns/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "thread/start response /thread/turns/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "turn/start response /turn/items/oneOf[type=agentMessage]/text",
        ),
        (
            B,
            Rule::FieldRemoved,
            "item/started params /item/oneOf[type=agentMessage]/text",
        ),
        (
            C,
            Rule::EnumValueAdded,
            "turn/completed params /turn/status",
        ),
        (
            B,
            Rule::OptionalFieldMadeRequired,
            "thread/start params /cwd",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "thread/start params /approvalPolicy",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "thread/start response /approvalPolicy",
        ),
        (
            B,
            Rule::EnumValueRemoved,
            "item/commandExecution/requestApproval response /decision",
        ),
        (
            C,
            Rule::RequiredFieldAdded,
            "item/started params /startedAtMs",
        ),
        (B, Rule::MethodRemoved, "thread/list"),
        (C, Rule::MethodRemoved, "thread/rollback"),
        (B, Rule::RequiredFieldAdded, "mcp CodexToolCallParam /cwd"),
    ] {
        expect_some(&report, severity, rule, location);
    }
    // Nothing reported under thread/start params besides the two input changes.
    let under_start_params: Vec<_> = report
        .changes
        .iter()
        .filter(|c| c.location.starts_with("thread/start params"))
        .map(|c| c.rule)
        .collect();
    assert_eq!(
        under_start_params,
        [Rule::EnumValueRemoved, Rule::OptionalFieldMadeRequired],
        "{text}"
    );
    // Every line is unique.
    let lines: std::collections::BTreeSet<&str> = text.lines().collect();
    assert_eq!(lines.len(), text.lines().count(), "{text}");
    assert!(text.ends_with("(0.1.0 -> 0.2.0)"), "{text}");
}

fn push_required(schema: &mut Value, name: &str) {
    match schema.get_mut("required").and_then(Value::as_array_mut) {
        Some(required) => required.push(json!(name)),
        None => schema["required"] = json!([name]),
    }
}
