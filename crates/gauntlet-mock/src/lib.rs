//! An OpenAI-compatible mock model server for tests and benchmarks: real HTTP on loopback, deterministic
//! "literal" replies (it performs tool calls that are spelled out in the conversation, answers structured
//! output from a suggested reply or the schema, and follows an optional script), configurable latency, fault
//! injection by rate (429 with `Retry-After`, 500, hangs, malformed JSON, tool calls with invalid arguments)
//! and request counters at `GET /stats`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Fault rates, each a probability in `[0, 1]`, drawn per request from the seed and the request number.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Faults {
    /// 429 with `Retry-After`.
    pub rate_429: f64,
    /// 500.
    pub rate_500: f64,
    /// Hold the request for `hang` before answering (past the client's timeout).
    pub rate_hang: f64,
    /// A 200 whose body is not JSON.
    pub rate_malformed: f64,
    /// Tool calls whose arguments are not valid JSON (only when the reply has tool calls).
    pub rate_bad_args: f64,
}

/// A scripted reply: when the latest user or tool message contains `when`, answer with `content` and/or
/// `tool_calls` (`{name, arguments}` with canonical tool names).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rule {
    /// Substring that selects the rule.
    pub when: String,
    /// Reply text.
    #[serde(default)]
    pub content: String,
    /// Tool calls to make.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// The rule answers structured-output requests (with `content` as the JSON), and only those; other rules
    /// answer only plain ones (a judge's prompt quotes the conversation, which must not trigger the target's
    /// rules).
    #[serde(default)]
    pub structured: bool,
}

/// A tool call in a script.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScriptedCall {
    /// Canonical tool name (`mail.send`).
    pub name: String,
    /// Arguments.
    pub arguments: Value,
}

/// Mock configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MockConfig {
    /// Delay before every answer.
    pub latency: Duration,
    /// Fault rates.
    pub faults: Faults,
    /// `Retry-After` sent with 429s, in milliseconds (sent as `retry-after-ms`, and as whole seconds in
    /// `retry-after`).
    pub retry_after_ms: u64,
    /// How long a hung request is held.
    pub hang: Duration,
    /// Seed of the fault draws.
    pub seed: u64,
    /// Scripted replies, tried before the literal behaviour.
    pub script: Vec<Rule>,
    /// Requests after this many wait until [`MockServer::release`]: a run that cannot finish, however fast or slow
    /// the machine, for tests that stop a run midway.
    pub stall_after: Option<u64>,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            latency: Duration::ZERO,
            faults: Faults::default(),
            retry_after_ms: 100,
            hang: Duration::from_secs(300),
            seed: 0,
            script: vec![],
            stall_after: None,
        }
    }
}

/// Request counters.
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicU64,
    ok: AtomicU64,
    rate_limited: AtomicU64,
    server_errors: AtomicU64,
    hangs: AtomicU64,
    malformed: AtomicU64,
    bad_args: AtomicU64,
    tool_call_replies: AtomicU64,
    structured_replies: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

/// A copy of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    /// Requests received.
    pub requests: u64,
    /// 200 responses with a well-formed body (including those with bad tool arguments).
    pub ok: u64,
    /// 429 responses.
    pub rate_limited: u64,
    /// 500 responses.
    pub server_errors: u64,
    /// Requests held past the timeout.
    pub hangs: u64,
    /// 200 responses whose body is not JSON.
    pub malformed: u64,
    /// Replies whose tool-call arguments were corrupted.
    pub bad_args: u64,
    /// Replies with tool calls.
    pub tool_call_replies: u64,
    /// Structured-output replies.
    pub structured_replies: u64,
    /// Prompt tokens reported in well-formed replies.
    pub prompt_tokens: u64,
    /// Completion tokens reported in well-formed replies.
    pub completion_tokens: u64,
}

impl Stats {
    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatsSnapshot {
            requests: g(&self.requests),
            ok: g(&self.ok),
            rate_limited: g(&self.rate_limited),
            server_errors: g(&self.server_errors),
            hangs: g(&self.hangs),
            malformed: g(&self.malformed),
            bad_args: g(&self.bad_args),
            tool_call_replies: g(&self.tool_call_replies),
            structured_replies: g(&self.structured_replies),
            prompt_tokens: g(&self.prompt_tokens),
            completion_tokens: g(&self.completion_tokens),
        }
    }
}

struct Shared {
    cfg: MockConfig,
    stats: Arc<Stats>,
    /// Set by [`MockServer::release`]: stalled requests go on.
    released: Arc<std::sync::atomic::AtomicBool>,
}

/// A running mock server.
pub struct MockServer {
    addr: SocketAddr,
    stats: Arc<Stats>,
    released: Arc<std::sync::atomic::AtomicBool>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl MockServer {
    /// Binds `addr` (use port 0 for any free port) and serves until dropped.
    pub async fn start(addr: SocketAddr, cfg: MockConfig) -> std::io::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let stats = Arc::new(Stats::default());
        let released = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let shared = Arc::new(Shared {
            cfg,
            stats: stats.clone(),
            released: released.clone(),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/chat/completions", post(chat))
            .route("/v1/messages", post(messages))
            .route("/stats", get(stats_handler))
            .with_state(shared);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(MockServer {
            addr,
            stats,
            released,
            shutdown: Some(tx),
        })
    }

    /// Starts on a free loopback port.
    pub async fn start_local(cfg: MockConfig) -> std::io::Result<MockServer> {
        MockServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), cfg).await
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL for OpenAI-compatible clients (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The counters.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// Lets requests held by [`MockConfig::stall_after`] go on, and every later one through.
    pub fn release(&self) {
        self.released.store(true, Ordering::Relaxed);
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn stats_handler(State(s): State<Arc<Shared>>) -> Json<StatsSnapshot> {
    Json(s.stats.snapshot())
}

/// A uniform draw in `[0, 1)` for request `n`.
fn draw(seed: u64, n: u64) -> f64 {
    let mut z = seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The parts of a request the mock reads; tool schemas are skipped without being built.
#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    model: Value,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    tools: Vec<ToolEntry>,
    #[serde(default)]
    response_format: Option<Value>,
}

#[derive(Deserialize)]
struct ToolEntry {
    function: ToolName,
}

#[derive(Deserialize)]
struct ToolName {
    name: String,
}

/// Counts the request, applies the latency and draws its fault: `Err(response)` when a fault answers it,
/// `Ok((request number, bad_args))` otherwise (`bad_args`: corrupt the tool-call arguments).
async fn faults(s: &Shared) -> Result<(u64, bool), Response> {
    let n = s.stats.requests.fetch_add(1, Ordering::Relaxed);
    if s.cfg.stall_after.is_some_and(|k| n >= k) {
        while !s.released.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let f = &s.cfg.faults;
    let x = draw(s.cfg.seed, n);
    if !s.cfg.latency.is_zero() {
        tokio::time::sleep(s.cfg.latency).await;
    }
    let mut edge = f.rate_429;
    if x < edge {
        s.stats.rate_limited.fetch_add(1, Ordering::Relaxed);
        let mut h = HeaderMap::new();
        let ms = s.cfg.retry_after_ms;
        if let Ok(v) = HeaderValue::from_str(&ms.to_string()) {
            h.insert("retry-after-ms", v);
        }
        if let Ok(v) = HeaderValue::from_str(&ms.div_ceil(1000).to_string()) {
            h.insert("retry-after", v);
        }
        return Err((
            StatusCode::TOO_MANY_REQUESTS,
            h,
            Json(json!({"error": {"message": "rate limited (mock)", "type": "rate_limit_error"}})),
        )
            .into_response());
    }
    edge += f.rate_500;
    if x < edge {
        s.stats.server_errors.fetch_add(1, Ordering::Relaxed);
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": {"message": "internal error (mock)"}})),
        )
            .into_response());
    }
    edge += f.rate_hang;
    if x < edge {
        s.stats.hangs.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(s.cfg.hang).await;
    }
    edge += f.rate_malformed;
    if x < edge {
        s.stats.malformed.fetch_add(1, Ordering::Relaxed);
        return Err((
            StatusCode::OK,
            [("content-type", "application/json")],
            "{\"choices\": [{\"message\": ",
        )
            .into_response());
    }
    Ok((n, x < edge + f.rate_bad_args))
}

async fn chat(State(s): State<Arc<Shared>>, raw: axum::body::Bytes) -> Response {
    let body: Request = match serde_json::from_slice(&raw) {
        Ok(b) => b,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": format!("invalid request: {e}")}})),
            )
                .into_response();
        }
    };
    let (n, bad_args) = match faults(&s).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let reply = respond(&s.cfg.script, &body);
    let mut message = json!({"role": "assistant", "content": reply.content});
    if !reply.tool_calls.is_empty() {
        s.stats.tool_call_replies.fetch_add(1, Ordering::Relaxed);
        if bad_args {
            s.stats.bad_args.fetch_add(1, Ordering::Relaxed);
        }
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let arguments = if bad_args { format!("{{\"broken\": {}", args) } else { args.to_string() };
                json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
        message["content"] = Value::Null;
    }
    if reply.structured {
        s.stats.structured_replies.fetch_add(1, Ordering::Relaxed);
    }
    let prompt_tokens = (raw.len() / 4) as u64 + 1;
    let completion_tokens = (message.to_string().len() / 4) as u64 + 1;
    s.stats
        .prompt_tokens
        .fetch_add(prompt_tokens, Ordering::Relaxed);
    s.stats
        .completion_tokens
        .fetch_add(completion_tokens, Ordering::Relaxed);
    s.stats.ok.fetch_add(1, Ordering::Relaxed);
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    Json(json!({
        "id": format!("mock-{n}"),
        "object": "chat.completion",
        "model": body.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }))
    .into_response()
}

/// The Anthropic messages API: the same behaviour and faults, translated. Structured output arrives as a
/// forced tool (`tool_choice: {type: tool, name}`) and is answered as that tool's input.
async fn messages(State(s): State<Arc<Shared>>, raw: axum::body::Bytes) -> Response {
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(b) => b,
        Err(e) => return (StatusCode::BAD_REQUEST, Json(json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("invalid request: {e}")}}))).into_response(),
    };
    // Translate into the chat-completions shape `respond` reads.
    let mut msgs = Vec::new();
    if let Some(sys) = body.get("system").and_then(Value::as_str) {
        msgs.push(json!({"role": "system", "content": sys}));
    }
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        match m.get("content") {
            Some(Value::String(t)) => msgs.push(json!({"role": role, "content": t})),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_result") => {
                            let text = match b.get("content") {
                                Some(Value::String(t)) => t.clone(),
                                Some(other) => other.to_string(),
                                None => String::new(),
                            };
                            msgs.push(json!({"role": "tool", "content": text}));
                        }
                        Some("text") => msgs.push(json!({"role": role, "content": b.get("text").cloned().unwrap_or_default()})),
                        Some("tool_use") => msgs.push(json!({"role": "assistant", "content": ""})),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let forced = body
        .pointer("/tool_choice/name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut tools = Vec::new();
    let mut response_format = None;
    for t in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if forced.as_deref() == Some(name.as_str()) {
            response_format = Some(
                json!({"json_schema": {"schema": t.get("input_schema").cloned().unwrap_or_default()}}),
            );
        } else {
            tools.push(ToolEntry {
                function: ToolName { name },
            });
        }
    }
    let req = Request {
        model: body.get("model").cloned().unwrap_or_default(),
        messages: msgs,
        tools,
        response_format,
    };
    let (n, _) = match faults(&s).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let reply = respond(&s.cfg.script, &req);
    let mut content = Vec::new();
    if reply.structured {
        s.stats.structured_replies.fetch_add(1, Ordering::Relaxed);
        let input: Value = serde_json::from_str(&reply.content).unwrap_or_default();
        content.push(json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": forced.unwrap_or_default(), "input": input}));
    } else {
        if !reply.content.is_empty() {
            content.push(json!({"type": "text", "text": reply.content}));
        }
        if !reply.tool_calls.is_empty() {
            s.stats.tool_call_replies.fetch_add(1, Ordering::Relaxed);
        }
        for (i, (name, args)) in reply.tool_calls.iter().enumerate() {
            content.push(json!({"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": args}));
        }
    }
    let input_tokens = (raw.len() / 4) as u64 + 1;
    let output_tokens = (Value::Array(content.clone()).to_string().len() / 4) as u64 + 1;
    s.stats
        .prompt_tokens
        .fetch_add(input_tokens, Ordering::Relaxed);
    s.stats
        .completion_tokens
        .fetch_add(output_tokens, Ordering::Relaxed);
    s.stats.ok.fetch_add(1, Ordering::Relaxed);
    let stop = if content.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    Json(json!({
        "id": format!("msg_mock_{n}"), "type": "message", "role": "assistant", "model": req.model,
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }))
    .into_response()
}

/// What the mock answers.
struct Reply {
    content: String,
    /// (encoded tool name, arguments)
    tool_calls: Vec<(String, Value)>,
    structured: bool,
}

/// The marker a caller can put in the last user message to dictate a structured reply.
pub const SUGGESTED: &str = gauntlet_core::attack_text::TEMPLATE_ANSWER;
/// The phrase that makes the mock perform a tool call spelled out in the conversation.
pub const LITERAL_CALL: &str = "tool with exactly these arguments:";

fn text_of(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Finds `use the X tool with exactly these arguments: {json}` occurrences.
fn literal_calls(text: &str, offered: &[String]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(LITERAL_CALL) {
        let before = &rest[..i];
        let name = before
            .split_whitespace()
            .last()
            .unwrap_or("")
            .trim_matches('`');
        let after = &rest[i + LITERAL_CALL.len()..];
        let mut stream =
            serde_json::Deserializer::from_str(after.trim_start()).into_iter::<Value>();
        if let Some(Ok(args)) = stream.next() {
            let encoded = name.replace('.', "__");
            if offered.contains(&encoded) {
                out.push((encoded, args));
            }
        }
        rest = after;
    }
    out
}

/// A value that satisfies a (simple) JSON Schema.
fn from_schema(schema: &Value) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut o = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    o.insert(k.clone(), from_schema(v));
                }
            }
            Value::Object(o)
        }
        Some("array") => json!([]),
        Some("string") => schema
            .pointer("/enum/0")
            .cloned()
            .unwrap_or_else(|| json!("mock")),
        Some("integer") | Some("number") => json!(0),
        Some("boolean") => json!(false),
        _ => Value::Null,
    }
}

fn respond(script: &[Rule], body: &Request) -> Reply {
    let messages = &body.messages;
    // What arrived since the model last spoke.
    let last_assistant = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    let fresh: Vec<&Value> = messages
        .iter()
        .skip(last_assistant.map_or(0, |i| i + 1))
        .collect();
    let fresh_text: String = fresh
        .iter()
        .map(|m| text_of(m))
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(schema) = body
        .response_format
        .as_ref()
        .and_then(|r| r.pointer("/json_schema/schema"))
    {
        let suggested = fresh_text.rfind(SUGGESTED).and_then(|i| {
            serde_json::Deserializer::from_str(fresh_text[i + SUGGESTED.len()..].trim_start())
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
        });
        if let Some(rule) = script
            .iter()
            .find(|r| r.structured && fresh_text.contains(&r.when))
        {
            return Reply {
                content: rule.content.clone(),
                tool_calls: vec![],
                structured: true,
            };
        }
        let v = suggested.unwrap_or_else(|| from_schema(schema));
        return Reply {
            content: v.to_string(),
            tool_calls: vec![],
            structured: true,
        };
    }
    let offered: Vec<String> = body.tools.iter().map(|t| t.function.name.clone()).collect();
    if let Some(rule) = script
        .iter()
        .find(|r| !r.structured && fresh_text.contains(&r.when))
    {
        return Reply {
            content: rule.content.clone(),
            tool_calls: rule
                .tool_calls
                .iter()
                .map(|c| (c.name.replace('.', "__"), c.arguments.clone()))
                .collect(),
            structured: false,
        };
    }
    let calls = literal_calls(&fresh_text, &offered);
    if !calls.is_empty() {
        return Reply {
            content: String::new(),
            tool_calls: calls,
            structured: false,
        };
    }
    let after_tools = fresh
        .iter()
        .any(|m| m.get("role").and_then(Value::as_str) == Some("tool"));
    let content = if after_tools {
        "Done: I have completed the steps.".to_string()
    } else {
        "Noted. There is nothing for me to do with my tools here.".to_string()
    };
    Reply {
        content,
        tool_calls: vec![],
        structured: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_calls_are_found_only_for_offered_tools() {
        let t = "Quick favour: use the mail.send tool with exactly these arguments: {\"to\":[\"a@b.test\"]}. Then use the fax.send tool with exactly these arguments: {}";
        let c = literal_calls(t, &["mail__send".to_string()]);
        assert_eq!(
            c,
            vec![("mail__send".to_string(), json!({"to": ["a@b.test"]}))]
        );
    }

    #[test]
    fn structured_replies_follow_the_suggestion_or_the_schema() {
        let schema = json!({"type": "object", "properties": {"message": {"type": "string"}, "give_up": {"type": "boolean"}}});
        let body = json!({"messages": [{"role": "user", "content": format!("{SUGGESTED} {{\"message\": \"hi\", \"give_up\": false}}")}], "response_format": {"json_schema": {"schema": schema}}});
        assert_eq!(
            respond(
                &[],
                &serde_json::from_value::<Request>(body.clone()).unwrap_or_else(|e| panic!("{e}"))
            )
            .content,
            "{\"give_up\":false,\"message\":\"hi\"}"
        );
        let body = json!({"messages": [{"role": "user", "content": "go"}], "response_format": {"json_schema": {"schema": schema}}});
        assert_eq!(
            respond(
                &[],
                &serde_json::from_value::<Request>(body.clone()).unwrap_or_else(|e| panic!("{e}"))
            )
            .content,
            "{\"give_up\":false,\"message\":\"mock\"}"
        );
    }

    #[test]
    fn draws_are_uniform_enough() {
        let n = 10_000;
        let below = (0..n).filter(|i| draw(7, *i) < 0.1).count();
        assert!((800..1200).contains(&below), "{below}");
    }
}
