//! Unit tests of the simulated world: one file per service, world-level behaviour here, property tests in
//! `props.rs`.
//!
//! `unwrap()` is fine here: a panic is a test failure with a clear location.
#![allow(clippy::unwrap_used)]

mod bank;
mod calendar;
mod chat;
mod crm;
mod drive;
mod effects;
mod helpdesk;
mod mail;
mod props;
mod repo;
mod shell;
mod web;

use crate::{SetupError, ToolError, World, setup_specs, tool_specs};
use serde_json::{Value, json};

/// Calls a tool that must succeed and returns its result.
pub(super) fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call(tool, &args) {
        Ok(v) => v,
        Err(e) => panic!("{tool} {args} failed: {e:?}"),
    }
}

/// Calls a tool that must fail with a service error and returns the message.
pub(super) fn service_err(w: &mut World, tool: &str, args: Value) -> String {
    match w.call(tool, &args) {
        Err(ToolError::Service(m)) => m,
        other => panic!("{tool} {args}: expected a service error, got {other:?}"),
    }
}

/// Calls a tool that must fail schema validation and returns the message (which must name `field`).
pub(super) fn invalid(w: &mut World, tool: &str, args: Value, field: &str) -> String {
    match w.call(tool, &args) {
        Err(ToolError::InvalidArguments { tool: t, message }) => {
            assert_eq!(t, tool);
            assert!(
                message.contains(field),
                "{tool}: message {message:?} does not name {field:?}"
            );
            message
        }
        other => panic!("{tool} {args}: expected invalid arguments, got {other:?}"),
    }
}

/// Applies a setup operation that must succeed.
pub(super) fn setup(w: &mut World, op: &str, args: Value) {
    if let Err(e) = w.setup(op, &args) {
        panic!("setup {op} {args} failed: {e:?}");
    }
}

/// Applies a setup operation that must conflict with the state built so far; returns the message.
pub(super) fn setup_conflict(w: &mut World, op: &str, args: Value) -> String {
    match w.setup(op, &args) {
        Err(SetupError::Conflict { op: o, message }) => {
            assert_eq!(o, op);
            message
        }
        other => panic!("setup {op} {args}: expected a conflict, got {other:?}"),
    }
}

/// Applies a setup operation whose arguments must be rejected by the schema; returns the message.
pub(super) fn setup_invalid(w: &mut World, op: &str, args: Value, field: &str) -> String {
    match w.setup(op, &args) {
        Err(SetupError::InvalidArguments { op: o, message }) => {
            assert_eq!(o, op);
            assert!(
                message.contains(field),
                "setup {op}: message {message:?} does not name {field:?}"
            );
            message
        }
        other => panic!("setup {op} {args}: expected invalid arguments, got {other:?}"),
    }
}

/// The names of an array of objects' `key` fields.
pub(super) fn pluck(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| {
            x[key]
                .as_str()
                .map_or_else(|| x[key].to_string(), str::to_string)
        })
        .collect()
}

#[test]
fn unknown_tool_is_rejected_before_anything_else() {
    let mut w = World::new();
    let before = w.state();
    assert_eq!(
        w.call("mail.teleport", &json!({})),
        Err(ToolError::UnknownTool("mail.teleport".into()))
    );
    assert_eq!(
        w.call("nonsense", &json!({})),
        Err(ToolError::UnknownTool("nonsense".into()))
    );
    assert_eq!(
        w.call("", &json!(null)),
        Err(ToolError::UnknownTool(String::new()))
    );
    assert_eq!(
        ToolError::UnknownTool("x.y".into()).to_string(),
        "unknown tool `x.y`"
    );
    assert_eq!(w.state(), before);
}

#[test]
fn unknown_setup_op_is_rejected() {
    let mut w = World::new();
    assert_eq!(
        w.setup("mail.explode", &json!({})),
        Err(SetupError::UnknownOp("mail.explode".into()))
    );
    assert_eq!(
        w.setup("world.nothing", &json!({})),
        Err(SetupError::UnknownOp("world.nothing".into()))
    );
    assert_eq!(
        SetupError::UnknownOp("a.b".into()).to_string(),
        "unknown setup operation `a.b`"
    );
}

#[test]
fn invalid_arguments_name_every_violation_with_its_pointer() {
    let mut w = World::new();
    let err = w
        .call(
            "bank.transfer",
            &json!({"iban": 42, "amount": "ten", "extra": true}),
        )
        .unwrap_err();
    let ToolError::InvalidArguments { tool, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(tool, "bank.transfer");
    assert!(message.contains("/iban"), "{message}");
    assert!(message.contains("/amount"), "{message}");
    assert!(message.contains("extra"), "{message}");
    assert_eq!(
        message.matches("; ").count(),
        2,
        "three violations, `; `-separated: {message}"
    );
    assert!(
        err.to_string()
            .starts_with("invalid arguments for bank.transfer: ")
    );
    // Non-object arguments are rejected too.
    invalid(&mut w, "mail.list", json!([]), "object");
    invalid(&mut w, "bank.balance", json!("x"), "object");
}

#[test]
fn empty_world_renders_every_service_with_empty_lists() {
    let s = World::new().state();
    let obj = s.as_object().expect("state is an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "bank", "calendar", "chat", "crm", "drive", "helpdesk", "mail", "now", "repo", "shell",
            "web"
        ]
    );
    assert_eq!(s["now"], "2026-03-02T09:00Z");
    assert!(
        s.get("clock").is_none(),
        "the clock is rendered as `now` only"
    );

    let empty_lists: &[(&str, &[&str])] = &[
        ("mail", &["inbox", "sent", "drafts", "trash", "contacts"]),
        ("calendar", &["events"]),
        ("drive", &["files"]),
        ("repo", &["repos"]),
        ("bank", &["payees", "transactions", "scheduled"]),
        ("chat", &["users", "channels", "dms"]),
        ("web", &["pages", "requests"]),
        ("shell", &["files", "env", "commands", "egress"]),
        (
            "crm",
            &[
                "users", "accounts", "contacts", "deals", "notes", "emails", "exports",
            ],
        ),
        (
            "helpdesk",
            &["agents", "tickets", "orders", "refunds", "outbox"],
        ),
    ];
    for (service, lists) in empty_lists {
        for list in *lists {
            assert_eq!(
                s[service][list],
                json!([]),
                "{service}.{list} must be an empty list, got {}",
                s[service][list]
            );
        }
    }
    assert_eq!(s["mail"]["address"], "me@acme.test");
    assert_eq!(s["mail"]["forwarding"], Value::Null);
    assert!(
        s["mail"].as_object().unwrap().contains_key("forwarding"),
        "forwarding is present (null), not absent"
    );
    assert_eq!(s["calendar"]["owner"], "me@acme.test");
    assert_eq!(s["drive"]["owner"], "me@acme.test");
    assert_eq!(s["repo"]["user"], "me");
    assert_eq!(s["bank"]["owner"], "Alex Morgan");
    assert_eq!(s["bank"]["iban"], "GB29ACME60161331926819");
    assert_eq!(s["bank"]["balance"], json!(0.0));
    assert_eq!(s["bank"]["password"], "initial-Passw0rd");
    assert_eq!(s["chat"]["me"], "me");
    assert_eq!(s["shell"]["user"], "user");
    assert_eq!(s["shell"]["cwd"], "/home/user");
    assert_eq!(s["crm"]["me"], "me@acme.test");
    assert_eq!(s["helpdesk"]["me"], "me@acme.test");
    assert_eq!(s["helpdesk"]["refund_limit"], json!(500.0));
    assert_eq!(World::default().state(), s);
}

#[test]
fn nested_records_render_empty_lists_too() {
    let mut w = World::new();
    setup(&mut w, "repo.create", json!({"name": "bare"}));
    setup(&mut w, "chat.channel", json!({"name": "quiet"}));
    setup(
        &mut w,
        "calendar.event",
        json!({"title": "t", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}),
    );
    setup(&mut w, "drive.file", json!({"name": "f", "content": ""}));
    setup(
        &mut w,
        "mail.deliver",
        json!({"from": "a@b.test", "subject": "s", "body": "b"}),
    );
    let s = w.state();
    let repo = &s["repo"]["repos"][0];
    for k in [
        "files",
        "commits",
        "secrets",
        "collaborators",
        "deploy_keys",
        "pull_requests",
    ] {
        assert_eq!(repo[k], json!([]), "repo.{k}");
    }
    assert_eq!(repo["visibility"], "private");
    assert_eq!(repo["description"], "");
    assert_eq!(s["chat"]["channels"][0]["messages"], json!([]));
    assert_eq!(s["calendar"]["events"][0]["attendees"], json!([]));
    assert_eq!(s["drive"]["files"][0]["shared_with"], json!([]));
    let msg = &s["mail"]["inbox"][0];
    assert_eq!(msg["cc"], json!([]));
    assert_eq!(msg["attachments"], json!([]));
    assert_eq!(
        msg["to"],
        json!(["me@acme.test"]),
        "recipient defaults to the owner"
    );
}

#[test]
fn clone_is_a_snapshot() {
    let mut original = World::new();
    setup(&mut original, "bank.account", json!({"balance": 100.0}));
    setup(
        &mut original,
        "shell.file",
        json!({"path": "a.txt", "content": "A"}),
    );
    let before = original.state();

    let mut copy = original.clone();
    assert_eq!(copy.state(), before);
    ok(
        &mut copy,
        "bank.transfer",
        json!({"iban": "DE89370400440532013000", "amount": 40.0}),
    );
    ok(&mut copy, "shell.run", json!({"command": "rm a.txt"}));
    ok(
        &mut copy,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    assert_eq!(copy.state()["bank"]["balance"], json!(60.0));
    assert_eq!(copy.state()["shell"]["files"], json!([]));
    assert_ne!(copy.state()["now"], before["now"]);

    assert_eq!(
        original.state(),
        before,
        "mutating the clone must not touch the original"
    );
    // Restore = replace: the clone's ids continue from the snapshot, exactly as the original's would.
    let mut restored = original.clone();
    let a = ok(
        &mut original,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    let b = ok(
        &mut restored,
        "mail.send",
        json!({"to": ["x@y.test"], "subject": "s", "body": "b"}),
    );
    assert_eq!(a, b);
    assert_eq!(original.state(), restored.state());
}

fn scripted_episode() -> World {
    let mut w = World::new();
    setup(&mut w, "bank.account", json!({"balance": 500.0}));
    setup(
        &mut w,
        "mail.deliver",
        json!({"from": "boss@acme.test", "subject": "Pay", "body": "please pay"}),
    );
    setup(&mut w, "chat.channel", json!({"name": "general"}));
    let calls = [
        ("mail.list", json!({})),
        (
            "mail.send",
            json!({"to": ["a@b.test"], "subject": "one", "body": "1"}),
        ),
        (
            "mail.send",
            json!({"to": ["a@b.test"], "subject": "two", "body": "2"}),
        ),
        (
            "calendar.create",
            json!({"title": "Sync", "start": "2026-03-04T10:00", "end": "2026-03-04T10:30"}),
        ),
        ("drive.create", json!({"name": "n.txt", "content": "x"})),
        (
            "bank.transfer",
            json!({"iban": "DE89370400440532013000", "amount": 12.5}),
        ),
        ("chat.post", json!({"channel": "general", "text": "hi"})),
        ("web.post", json!({"url": "https://x.test", "body": "b"})),
        (
            "shell.run",
            json!({"command": "echo hi > f.txt && cat f.txt"}),
        ),
        (
            "bank.transfer",
            json!({"iban": "DE89370400440532013000", "amount": 10000.0}),
        ),
    ];
    for (tool, args) in calls {
        let _ = w.call(tool, &args);
    }
    w
}

#[test]
fn same_calls_give_identical_state() {
    let a = scripted_episode().state();
    let b = scripted_episode().state();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // Ids are deterministic and counted per kind, starting at 1.
    assert_eq!(
        pluck(&a["mail"]["sent"], "id"),
        ["msg-2", "msg-3"],
        "msg-1 went to the delivered message"
    );
    assert_eq!(a["mail"]["inbox"][0]["id"], "msg-1");
    assert_eq!(a["calendar"]["events"][0]["id"], "evt-1");
    assert_eq!(a["drive"]["files"][0]["id"], "file-1");
    assert_eq!(pluck(&a["bank"]["transactions"], "id"), ["tx-1"]);
    assert_eq!(a["chat"]["channels"][0]["messages"][0]["id"], "chatmsg-1");
    // Nine writes (mail.list is a read; the refused transfer still took its minute).
    assert_eq!(a["now"], "2026-03-02T09:09Z");
}

#[test]
fn clock_advances_one_minute_per_write_call_only() {
    let mut w = World::new();
    setup(&mut w, "bank.account", json!({"balance": 10.0}));
    assert_eq!(w.clock().now(), "2026-03-02T09:00Z");
    // Reads do not advance the clock.
    for (tool, args) in [
        ("mail.list", json!({})),
        ("bank.balance", json!({})),
        ("web.history", json!({})),
        ("shell.env", json!({})),
        ("repo.list_repos", json!({})),
        ("chat.list_users", json!({})),
        ("calendar.list", json!({})),
        ("drive.list", json!({})),
        ("crm.list_contacts", json!({})),
        ("helpdesk.list_tickets", json!({})),
    ] {
        ok(&mut w, tool, args);
    }
    assert_eq!(w.clock().now(), "2026-03-02T09:00Z");
    // A write advances it by exactly one minute, and stamps the record with the time before the tick.
    ok(
        &mut w,
        "mail.send",
        json!({"to": ["a@b.test"], "subject": "s", "body": "b"}),
    );
    assert_eq!(w.clock().now(), "2026-03-02T09:01Z");
    assert_eq!(w.state()["mail"]["sent"][0]["date"], "2026-03-02T09:00Z");
    ok(&mut w, "shell.run", json!({"command": "pwd"}));
    assert_eq!(w.state()["shell"]["commands"][0]["at"], "2026-03-02T09:01Z");
    assert_eq!(w.state()["now"], "2026-03-02T09:02Z");
    // Arguments rejected by the schema never reach the service: no time passes.
    invalid(
        &mut w,
        "mail.send",
        json!({"subject": "s", "body": "b"}),
        "to",
    );
    assert_eq!(w.clock().now(), "2026-03-02T09:02Z");
    // Unknown tools take no time either.
    let _ = w.call("mail.nope", &json!({}));
    assert_eq!(w.clock().now(), "2026-03-02T09:02Z");
    // A write the service refuses still took its minute (the attempt happened).
    service_err(
        &mut w,
        "bank.transfer",
        json!({"iban": "DE89370400440532013000", "amount": 99.0}),
    );
    assert_eq!(w.clock().now(), "2026-03-02T09:03Z");
    // Sixty writes later it is an hour on.
    for _ in 0..60 {
        ok(&mut w, "shell.run", json!({"command": "pwd"}));
    }
    assert_eq!(w.clock().now(), "2026-03-02T10:03Z");
    assert_eq!(w.clock().today(), "2026-03-02");
}

#[test]
fn world_clock_setup_advances_time() {
    let mut w = World::new();
    setup(&mut w, "world.clock", json!({"advance_minutes": 0}));
    assert_eq!(w.state()["now"], "2026-03-02T09:00Z");
    setup(
        &mut w,
        "world.clock",
        json!({"advance_minutes": 15 * 60 + 30}),
    );
    assert_eq!(w.state()["now"], "2026-03-03T00:30Z");
    setup(
        &mut w,
        "world.clock",
        json!({"advance_minutes": 30 * 24 * 60}),
    );
    assert_eq!(w.state()["now"], "2026-04-02T00:30Z");
    assert_eq!(w.clock().today(), "2026-04-02");
    setup_invalid(
        &mut w,
        "world.clock",
        json!({"advance_minutes": -5}),
        "advance_minutes",
    );
    setup_invalid(&mut w, "world.clock", json!({}), "advance_minutes");
    setup_invalid(
        &mut w,
        "world.clock",
        json!({"advance_minutes": 1, "other": 1}),
        "other",
    );
    assert_eq!(w.state()["now"], "2026-04-02T00:30Z");
}

#[test]
fn world_clock_setup_rejects_absurd_advances_instead_of_overflowing() {
    let mut w = World::new();
    let err = w.setup("world.clock", &json!({"advance_minutes": i64::MAX}));
    assert!(
        matches!(
            err,
            Err(SetupError::Conflict { .. }) | Err(SetupError::InvalidArguments { .. })
        ),
        "{err:?}"
    );
    assert_eq!(w.state()["now"], "2026-03-02T09:00Z");
    // Advancing by a century is still fine.
    setup(
        &mut w,
        "world.clock",
        json!({"advance_minutes": 100 * 365 * 24 * 60}),
    );
    assert!(w.state()["now"].as_str().unwrap().starts_with("2126-"));
}

#[test]
fn catalogue_matches_docs_and_every_op_is_wired() {
    let names: Vec<&str> = tool_specs().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 100, "{names:?}");
    for service in crate::SERVICES {
        assert!(
            names.iter().any(|n| n.starts_with(&format!("{service}."))),
            "{service}"
        );
    }
    let mut dedup = names.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), names.len(), "tool names are unique");
    assert_eq!(
        crate::reference_markdown(),
        include_str!("../../../../docs/tools.md"),
        "docs/tools.md is stale"
    );

    // Every tool dispatches to a real handler: an empty object never yields the "unknown … tool" fallback.
    for t in tool_specs() {
        assert!(crate::tool_spec(&t.name).is_some());
        let mut w = World::new();
        if let Err(ToolError::Service(m)) = w.call(&t.name, &json!({})) {
            assert!(!m.starts_with("unknown "), "{}: {m}", t.name);
        }
    }
    // Every setup op dispatches too: with schema-valid arguments the error is never "unknown operation".
    let setup_names: Vec<&str> = setup_specs().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(setup_names.len(), 34, "{setup_names:?}");
    for s in setup_specs() {
        let mut w = World::new();
        if let Err(SetupError::Conflict { message, .. }) = w.setup(&s.name, &json!({})) {
            assert!(
                !message.starts_with("unknown operation"),
                "{}: {message}",
                s.name
            );
        }
    }
}

#[test]
fn check_args_helpers_agree_with_call() {
    assert_eq!(
        crate::check_tool_args(
            "mail.send",
            &json!({"to": ["a@b.test"], "subject": "s", "body": "b"})
        ),
        None
    );
    let m = crate::check_tool_args("mail.send", &json!({"subject": "s", "body": "b"}))
        .expect("missing to");
    assert!(m.contains("\"to\""), "{m}");
    assert_eq!(crate::check_tool_args("no.such", &json!({})), None);
    assert_eq!(crate::check_setup_args("bank.account", &json!({})), None);
    assert!(
        crate::check_setup_args("bank.account", &json!({"iban": "nope"}))
            .unwrap()
            .contains("/iban")
    );
}

#[test]
fn integral_floats_are_accepted_for_integer_arguments() {
    // JSON Schema counts 5.0 as an integer, so the service must accept it too (models do send it).
    let mut w = World::new();
    setup(
        &mut w,
        "bank.transaction",
        json!({"amount": 1, "counterparty": "a"}),
    );
    setup(
        &mut w,
        "bank.transaction",
        json!({"amount": 2, "counterparty": "b"}),
    );
    setup(&mut w, "chat.channel", json!({"name": "general"}));
    assert_eq!(
        pluck(
            &ok(&mut w, "bank.transactions", json!({"limit": 1.0})),
            "counterparty"
        ),
        ["b"]
    );
    assert_eq!(
        ok(
            &mut w,
            "chat.read_channel",
            json!({"channel": "general", "limit": 2.0})
        ),
        json!([])
    );
    setup(&mut w, "world.clock", json!({"advance_minutes": 60.0}));
    assert_eq!(w.state()["now"], "2026-03-02T10:00Z");
    // A fractional value is still refused by the schema.
    invalid(&mut w, "bank.transactions", json!({"limit": 1.5}), "/limit");
}

/// Each service has its own bit in the `touched` mask, the last of the ten included: a call marks only its service.
#[test]
fn every_service_has_its_own_touched_bit() {
    let reads = [
        ("mail.list", json!({})),
        ("calendar.list", json!({})),
        ("drive.list", json!({})),
        ("repo.list_repos", json!({})),
        ("bank.balance", json!({})),
        ("chat.list_users", json!({})),
        ("web.history", json!({})),
        ("shell.env", json!({})),
        ("crm.list_users", json!({})),
        ("helpdesk.list_agents", json!({})),
    ];
    assert_eq!(reads.len(), crate::SERVICES.len());
    let mut all = World::new();
    for (i, (tool, args)) in reads.iter().enumerate() {
        let mut one = World::new();
        ok(&mut one, tool, args.clone());
        assert_eq!(one.touched(), [crate::SERVICES[i]], "{tool}");
        ok(&mut all, tool, args.clone());
    }
    assert_eq!(all.touched(), crate::SERVICES);
    // A refused call still marks its service (it may have logged something); setup marks nothing.
    let mut w = World::new();
    setup(&mut w, "helpdesk.agent", json!({"email": "a@acme.test"}));
    assert!(w.touched().is_empty());
    service_err(&mut w, "helpdesk.get_ticket", json!({"id": "t1"}));
    assert_eq!(w.touched(), ["helpdesk"]);
}
