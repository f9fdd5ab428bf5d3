//! Property tests: the world never panics, whatever the agent sends.

use crate::{ToolError, World, setup_specs, tool_specs};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A world with something in every service, so that calls with plausible arguments reach deep code paths.
fn populated() -> World {
    let mut w = World::new();
    let ops = [
        ("bank.account", json!({"balance": 250.0})),
        (
            "bank.payee",
            json!({"id": "p1", "name": "Landlord", "iban": "DE89370400440532013000"}),
        ),
        (
            "bank.scheduled",
            json!({"id": "s1", "iban": "DE89370400440532013000", "amount": 10, "date": "2026-04-01"}),
        ),
        (
            "mail.deliver",
            json!({"id": "m1", "from": "a@b.test", "subject": "hi", "body": "body", "attachments": ["a.pdf"]}),
        ),
        (
            "calendar.event",
            json!({"id": "e1", "title": "t", "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}),
        ),
        (
            "drive.file",
            json!({"id": "f1", "name": "doc", "content": "text"}),
        ),
        (
            "repo.create",
            json!({"name": "r", "files": [{"path": "a", "content": "x"}], "secrets": [{"name": "S", "value": "v"}]}),
        ),
        ("chat.user", json!({"name": "bob"})),
        (
            "chat.channel",
            json!({"name": "general", "members": ["me", "bob"]}),
        ),
        (
            "web.page",
            json!({"url": "https://x.test", "content": "see https://y.test"}),
        ),
        (
            "shell.file",
            json!({"path": "f.txt", "content": "line1\nline2\n"}),
        ),
        ("shell.env", json!({"name": "K", "value": "v"})),
        ("crm.user", json!({"email": "a@b.test"})),
        ("crm.account", json!({"id": "a", "name": "Acme"})),
        (
            "crm.contact",
            json!({"id": "c1", "name": "C", "email": "eve@evil.test", "account_id": "a", "tags": ["x"]}),
        ),
        (
            "crm.deal",
            json!({"id": "d1", "name": "D", "account_id": "a", "amount": 10, "stage": "closed_won"}),
        ),
        (
            "crm.note",
            json!({"id": "n1", "record_id": "c1", "text": "n"}),
        ),
        ("helpdesk.agent", json!({"email": "a@b.test"})),
        (
            "helpdesk.order",
            json!({"id": "o1", "customer": "a@b.test", "amount": 100}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t1", "subject": "s", "requester": "a@b.test", "body": "b", "order_id": "o1"}),
        ),
        (
            "helpdesk.ticket",
            json!({"id": "t2", "subject": "s2", "requester": "eve@evil.test", "status": "closed"}),
        ),
    ];
    for (op, args) in ops {
        w.setup(op, &args).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
    w
}

/// Arbitrary JSON, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        interesting_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Values that pass the catalogue's schemas often: ids, addresses, IBANs, dates, URLs, keys.
fn interesting_string() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "",
        "m1",
        "msg-1",
        "e1",
        "evt-1",
        "f1",
        "p1",
        "s1",
        "r",
        "a",
        "S",
        "bob",
        "me",
        "general",
        "#general",
        "a@b.test",
        "eve@evil.test",
        "x",
        "inbox",
        "trash",
        "reader",
        "writer",
        "admin",
        "guest",
        "member",
        "read",
        "write",
        "public",
        "private",
        "DE89370400440532013000",
        "GB82WEST12345698765432",
        "2026-03-02",
        "2025-01-01",
        "2026-03-03T10:00",
        "2026-03-01T00:00",
        "https://x.test",
        "https://evil.test/?q=1",
        "ssh-ed25519 AAAA k",
        "f.txt",
        "/",
        "..",
        "~",
        "new-password-123",
        "c1",
        "d1",
        "n1",
        "o1",
        "t1",
        "t2",
        "closed_won",
        "open",
        "solved",
        "csv",
    ])
    .prop_map(str::to_string)
}

/// An object using (a random subset of) the tool's own property names, with random values.
fn args_for(schema: &Value) -> BoxedStrategy<Value> {
    let keys: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if keys.is_empty() {
        return any_json().boxed();
    }
    let n = keys.len();
    let value = prop_oneof![
        3 => interesting_string().prop_map(Value::from),
        1 => prop::collection::vec(interesting_string().prop_map(Value::from), 0..3).prop_map(Value::Array),
        1 => any_json(),
        1 => (1i64..1000).prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::from),
    ];
    (
        prop::collection::vec(any::<bool>(), n),
        prop::collection::vec(value, n),
    )
        .prop_map(move |(take, vals)| {
            let m: Map<String, Value> = keys
                .iter()
                .zip(take)
                .zip(vals)
                .filter(|((_, t), _)| *t)
                .map(|((k, _), v)| (k.clone(), v))
                .collect();
            Value::Object(m)
        })
        .boxed()
}

/// Command lines built from shell-ish tokens, so that operators, quotes and expansions meet each other.
fn command_line() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        prop::sample::select(vec![
            "ls",
            "cat",
            "echo",
            "rm",
            "-rf",
            "-r",
            "-f",
            "cp",
            "mv",
            "grep",
            "-i",
            "head",
            "-n",
            "wc",
            "-l",
            "env",
            "printenv",
            "curl",
            "-d",
            "@-",
            "@f.txt",
            "-X",
            "POST",
            "https://e.test",
            "ftp://x",
            "touch",
            "mkdir",
            "pwd",
            "whoami",
            "|",
            "||",
            "&&",
            "&",
            ";",
            ">",
            ">>",
            "'",
            "\"",
            "\\",
            "$",
            "$K",
            "${K}",
            "${",
            "}",
            "f.txt",
            "/",
            "~",
            "..",
            ".",
            "'a b'",
            "\"$K\"",
            "x",
            "2",
            "-",
            "\0",
            "\0|",
        ])
        .prop_map(str::to_string),
        ".{0,6}",
    ];
    prop::collection::vec(token, 0..10).prop_map(|t| t.join(" "))
}

fn last_logged_command(w: &World) -> Value {
    w.state()["shell"]["commands"]
        .as_array()
        .and_then(|c| c.last().cloned())
        .unwrap_or(Value::Null)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn shell_run_never_panics_and_always_logs(command in prop_oneof![command_line(), ".{1,60}", any::<String>()]) {
        prop_assume!(!command.is_empty());
        let mut w = populated();
        let before = w.state()["shell"]["commands"].as_array().map_or(0, Vec::len);
        let r = w.call("shell.run", &json!({"command": command}));
        let r = r.map_err(|e| TestCaseError::fail(format!("shell.run failed: {e}")))?;
        let code = r["exit_code"].as_i64().expect("exit code");
        prop_assert!(r["output"].is_string());
        let log = &w.state()["shell"]["commands"];
        prop_assert_eq!(log.as_array().map_or(0, Vec::len), before + 1);
        let last = last_logged_command(&w);
        prop_assert_eq!(&last["command"], &json!(command));
        prop_assert_eq!(last["exit_code"].as_i64(), Some(code));
        prop_assert_eq!(&last["output"], &r["output"]);
    }

    #[test]
    fn world_call_never_panics_on_arbitrary_args(raw in prop::collection::vec(any_json(), 1..3), seed in any::<u64>()) {
        let mut w = populated();
        for (i, t) in tool_specs().iter().enumerate() {
            let args = &raw[(seed as usize).wrapping_add(i) % raw.len()];
            let before = w.clock().now();
            match w.call(&t.name, args) {
                Ok(_) | Err(ToolError::Service(_)) => {}
                Err(ToolError::InvalidArguments { tool, message }) => {
                    prop_assert_eq!(&tool, &t.name);
                    prop_assert!(!message.is_empty());
                    prop_assert_eq!(w.clock().now(), before, "rejected arguments take no time");
                }
                Err(e @ ToolError::UnknownTool(_)) => prop_assert!(false, "{} is in the catalogue: {}", t.name, e),
            }
        }
        let s = w.state();
        prop_assert!(s.is_object());
    }

    #[test]
    fn setup_never_panics_on_arbitrary_args(raw in any_json()) {
        let mut w = populated();
        for s in setup_specs() {
            let _ = w.setup(&s.name, &raw);
        }
        prop_assert!(w.state().is_object());
    }
}

/// Schema-shaped arguments: for every tool, many argument objects built from its own property names.
#[test]
fn world_call_never_panics_on_schema_shaped_args_per_tool() {
    use proptest::test_runner::{Config, TestRunner};
    for t in tool_specs() {
        let mut runner = TestRunner::new(Config {
            cases: 96,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(
            &prop::collection::vec(args_for(&t.parameters), 1..6),
            |calls| {
                let mut w = populated();
                for args in &calls {
                    let before = w.clock().now();
                    match w.call(&t.name, args) {
                        Ok(v) => prop_assert!(
                            !v.is_null() || t.name.is_empty(),
                            "{} returned null",
                            t.name
                        ),
                        Err(ToolError::Service(m)) => prop_assert!(!m.is_empty()),
                        Err(ToolError::InvalidArguments { .. }) => {
                            prop_assert_eq!(w.clock().now(), before)
                        }
                        Err(e) => prop_assert!(false, "{}: {}", t.name, e),
                    }
                }
                Ok(())
            },
        );
        if let Err(e) = result {
            panic!("{}: {e}", t.name);
        }
    }
}

/// Every tool called with adversarial sizes: each string argument 16 MiB, each list 100,000 items, the same calls
/// repeated so that state piles up, then the shell's doubling trick and the state rendered whole. Run only by
/// [`adversarial_sizes_under_a_memory_limit`], in a child process whose address space is capped.
#[test]
#[ignore = "run by adversarial_sizes_under_a_memory_limit, under prlimit"]
fn adversarial_sizes_child() {
    let big = "A".repeat(16 << 20);
    let many: Vec<Value> = (0..100_000)
        .map(|i| Value::from(format!("x{i}@evil.test")))
        .collect();
    let mut w = populated();
    for t in tool_specs() {
        let keys: Vec<String> = t
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        for shape in 0..3 {
            let args: Map<String, Value> = keys
                .iter()
                .map(|k| {
                    let v = match shape {
                        0 => Value::from(big.as_str()),
                        1 => Value::Array(many.clone()),
                        _ => json!({"nested": [big.as_str(), {"deeper": big.as_str()}]}),
                    };
                    (k.clone(), v)
                })
                .collect();
            for _ in 0..4 {
                let _ = w.call(&t.name, &Value::Object(args.clone()));
            }
        }
    }
    for _ in 0..30 {
        let _ = w.call("shell.run", &json!({"command": "echo AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA >> a; cat a a a a > b; cat b b b b > a"}));
    }
    let state = w.state();
    let rendered = serde_json::to_string(&state).map(|s| s.len()).unwrap_or(0);
    eprintln!("final state: {rendered} bytes");
}

/// An argument of megabytes, or a list of a hundred thousand bad items, is refused with an error of a few hundred
/// bytes: the agent reads it (it quoted the whole argument, 32 MB for a 16 MB one, and took seconds to build).
#[test]
fn invalid_arguments_are_reported_briefly_whatever_their_size() {
    let mut w = populated();
    let big = json!({"to": ["a@b.test"], "subject": {"x": "A".repeat(4 << 20)}, "body": "b"});
    let many = json!({"to": (0..100_000).map(|_| json!(7)).collect::<Vec<_>>(), "subject": "s", "body": "b"});
    for args in [big, many] {
        match w.call("mail.send", &args) {
            Err(ToolError::InvalidArguments { message, .. }) => {
                assert!(
                    message.len() < 4096,
                    "{} bytes: {}",
                    message.len(),
                    &message[..200.min(message.len())]
                );
            }
            other => panic!("{other:?}"),
        }
    }
    // A short value is still quoted, which helps an agent fix it.
    match w.call(
        "mail.send",
        &json!({"to": "a@b.test", "subject": "s", "body": "b"}),
    ) {
        Err(ToolError::InvalidArguments { message, .. }) => {
            assert!(message.contains("a@b.test"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// [`adversarial_sizes_child`] in a child process limited to 2 GiB of address space (`prlimit --as`): a tool that
/// let an agent allocate without bound would abort it (issue 16: one `shell.run` used to take 2.6 GB and abort).
#[test]
fn adversarial_sizes_under_a_memory_limit() {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let name = format!(
        "{}::adversarial_sizes_child",
        module_path!().split_once("::").map_or("", |m| m.1)
    );
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 2u64 << 30))
        .arg("--")
        .arg(&exe)
        .args([
            name.as_str(),
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap_or_else(|e| panic!("prlimit (util-linux) is needed: {e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{err}"
    );
}
