//! `gauntlet doctor`: what this machine and configuration have and lack for Gauntlet's jobs — the store, each
//! provider (base URL, key variable set or not, reachable), each model named (one request: latency, tool calling,
//! structured output), and the optional parts (Python with the MCP SDK, Chromium). Keys are reported as set or
//! not set, never shown.

use crate::{Config, Limits, Models};
use gauntlet_llm::{ChatModel, ChatRequest, Message, ToolDef};
use std::path::Path;
use std::time::{Duration, Instant};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Present and working.
    Ok,
    /// Absent or failing, and a job the user asked about needs it.
    Failed,
    /// Absent, but only some jobs need it.
    Optional,
}

impl Status {
    /// The word printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Optional => "optional",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked (`store …`, `provider openai`, `model openai/gpt-4.1-mini`).
    pub item: String,
    /// How it came out.
    pub status: Status,
    /// What was found, and what to do about it.
    pub detail: String,
}

/// Providers reported without being named: the built-in ones and those of the config file.
const BUILTIN: [&str; 7] = [
    "openai",
    "anthropic",
    "ollama",
    "openrouter",
    "lmstudio",
    "vllm",
    "llamacpp",
];

/// Runs every check: the store at `store`, every provider (reachability within `timeout`), and one request to each
/// of `models` (`provider/model`).
pub fn check(cfg: &Config, store: &Path, models: &[String], timeout_secs: f64) -> Vec<Check> {
    let secs = if timeout_secs.is_finite() {
        timeout_secs.clamp(0.1, 3600.0)
    } else {
        10.0
    };
    let timeout = Duration::from_secs_f64(secs);
    let mut out = vec![store_check(store)];
    // One attempt each: the doctor reports what happens, it does not wait through a backoff schedule.
    let mut cfg_once = Config {
        providers: cfg.providers.clone(),
        targets: cfg.targets.clone(),
        pool: cfg.pool.clone(),
        redteam: None,
    };
    cfg_once.pool.max_retries = Some(0);
    let cfg = &cfg_once;
    let set = match Models::build(
        cfg,
        true,
        Limits {
            timeout: Some(timeout.as_secs_f64()),
            ..Limits::default()
        },
        None,
    ) {
        Ok(m) => m,
        Err(e) => {
            out.push(Check {
                item: "models".into(),
                status: Status::Failed,
                detail: e.to_string(),
            });
            return out;
        }
    };
    out.extend(provider_checks(cfg, &set, timeout));
    for spec in models {
        out.push(model_check(&set, spec));
    }
    out.extend(optional_checks());
    out
}

fn store_check(store: &Path) -> Check {
    let item = format!("store {}", store.display());
    match gauntlet_store::Store::open(store) {
        Ok(_) => Check {
            item,
            status: Status::Ok,
            detail: "opens and is writable".into(),
        },
        Err(e) => Check {
            item,
            status: Status::Failed,
            detail: format!("{e} (give --store PATH, or --no-store on the job)"),
        },
    }
}

fn provider_checks(cfg: &Config, set: &Models, timeout: Duration) -> Vec<Check> {
    let mut names: Vec<String> = BUILTIN.iter().map(|s| s.to_string()).collect();
    names.extend(
        cfg.providers
            .keys()
            .filter(|k| !BUILTIN.contains(&k.as_str()))
            .cloned(),
    );
    let resolved: Vec<(String, Result<gauntlet_llm::ProviderConfig, String>)> = names
        .into_iter()
        .map(|n| {
            let r =
                gauntlet_llm::spec::resolve(&n, cfg.providers.get(&n)).map_err(|e| e.to_string());
            (n, r)
        })
        .collect();
    let endpoints: Vec<gauntlet_llm::preflight::Endpoint> = resolved
        .iter()
        .filter_map(|(n, r)| {
            r.as_ref().ok().and_then(|p| p.base_url.clone()).map(|url| {
                gauntlet_llm::preflight::Endpoint {
                    what: n.clone(),
                    url,
                }
            })
        })
        .collect();
    let unreachable = match set.handle() {
        Ok(h) => h.block_on(gauntlet_llm::preflight::check(&endpoints, timeout)),
        Err(_) => vec![],
    };
    resolved
        .into_iter()
        .map(|(name, r)| {
            let item = format!("provider {name}");
            let p = match r {
                Ok(p) => p,
                Err(e) => {
                    return Check {
                        item,
                        status: Status::Failed,
                        detail: e,
                    };
                }
            };
            let url = p.base_url.clone().unwrap_or_default();
            let key = match &p.api_key_env {
                None => "no key needed".to_string(),
                Some(var) if gauntlet_llm::env::var(var).is_some_and(|v| !v.is_empty()) => {
                    format!("key {var} set")
                }
                Some(var) => format!("key {var} not set"),
            };
            let down = unreachable.iter().find(|u| u.what.contains(&name));
            let reach = match down {
                Some(u) => format!("cannot be reached at {}: {}", u.at, u.cause),
                None => "reachable".into(),
            };
            // A provider is only needed when a model names it: not being able to use one is not a failure.
            let usable = down.is_none() && !key.ends_with("not set");
            Check {
                item,
                status: if usable { Status::Ok } else { Status::Optional },
                detail: format!("{url}; {key}; {reach}"),
            }
        })
        .collect()
}

/// One short request to a model, then one asking it to call a tool and one for structured output.
fn model_check(set: &Models, spec: &str) -> Check {
    let item = format!("model {spec}");
    let failed = |detail: String| Check {
        item: item.clone(),
        status: Status::Failed,
        detail,
    };
    let (pool, handle) = match (set.pool("doctor", spec, "--model"), set.handle()) {
        (Ok(p), Ok(h)) => (p, h),
        (Err(e), _) | (_, Err(e)) => return failed(e.to_string()),
    };
    let ask = |req: ChatRequest| {
        let started = Instant::now();
        let r = handle.block_on(pool.chat(&req));
        (r, started.elapsed())
    };
    let base = ChatRequest {
        messages: vec![Message::user("Reply with the single word OK.")],
        tools: Default::default(),
        response_schema: None,
        temperature: Some(0.0),
        max_tokens: Some(256),
    };
    let (first, latency) = ask(base.clone());
    // A reply cut at the limit still shows the model answers (a reasoning model spends its tokens thinking).
    match first {
        Ok(_) | Err(gauntlet_llm::LlmError::Truncated { .. }) => {}
        Err(e) => return failed(e.to_string()),
    }
    let tools = ask(ChatRequest {
        messages: vec![Message::user(
            "Please use the net.ping tool with exactly these arguments: {\"host\": \"example.test\"}",
        )],
        tools: vec![ToolDef {
            name: "net.ping".into(),
            description: "Ping a host.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}),
        }]
        .into(),
        max_tokens: Some(512),
        ..base.clone()
    });
    let structured = ask(ChatRequest {
        messages: vec![Message::user("Give the answer 2 as JSON.")],
        response_schema: Some((
            "answer".into(),
            serde_json::json!({"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}),
        )),
        max_tokens: Some(512),
        ..base
    });
    let calls = matches!(&tools.0, Ok(r) if !r.tool_calls.is_empty());
    let json = matches!(&structured.0, Ok(r) if serde_json::from_str::<serde_json::Value>(&r.content).is_ok_and(|v| v.get("answer").is_some()));
    let mut detail = format!(
        "answered in {:.2} s; tool calling {}; structured output {}",
        latency.as_secs_f64(),
        if calls {
            "yes"
        } else {
            "no (as an agent it cannot act)"
        },
        if json {
            "yes"
        } else {
            "no (as a judge its replies may not parse)"
        },
    );
    if latency > Duration::from_secs(20) {
        let suggested = (latency.as_secs_f64() * 10.0).ceil().max(120.0);
        detail.push_str(&format!(
            "; slow: a run's first request carries the tool schemas and takes longer, give --timeout {suggested:.0}"
        ));
    }
    // It answers: usable; what it cannot do is in the detail (an agent needs tool calls, a judge structured output).
    Check {
        item,
        status: Status::Ok,
        detail,
    }
}

/// The parts only some jobs need: Python with the MCP SDK (agents written with it, the interoperability tests) and
/// Chromium (the HTML report's check in CI).
fn optional_checks() -> Vec<Check> {
    let run = |cmd: &str, args: &[&str]| {
        std::process::Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let python = run("python3", &["--version"]);
    let mcp = python.as_ref().and_then(|_| {
        run(
            "python3",
            &[
                "-c",
                "import mcp, importlib.metadata as m; print(m.version('mcp'))",
            ],
        )
    });
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|c| run(c, &["--version"]));
    let line = |item: &str, found: Option<String>, missing: &str| Check {
        item: item.into(),
        status: if found.is_some() {
            Status::Ok
        } else {
            Status::Optional
        },
        detail: found.unwrap_or_else(|| missing.into()),
    };
    vec![
        line(
            "python3",
            python,
            "not found: only adapters/agentdojo and agents written in Python need it",
        ),
        line(
            "python MCP SDK",
            mcp.map(|v| format!("mcp {v}")),
            "not installed (pip install mcp): only agents and tests written with it need it",
        ),
        line(
            "chromium",
            chromium,
            "not found: only the HTML report's check in CI needs it",
        ),
    ]
}
