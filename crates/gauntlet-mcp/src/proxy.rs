//! The proxy: the gateway in front of a real MCP server. Each call is decided by the defense, forwarded
//! upstream, transformed by the injection rules in force and logged with both the raw (upstream) and the
//! observed (client-side) result — the same path as the sandbox's, with the upstream in place of the world.

use crate::upstream_http::HttpUpstream;
use crate::{Backend, CallFuture, McpFrontError, ToolInfo, ToolOutput};
use gauntlet_core::{
    Decision, Effect, EffectKind, GatewayEvent, InjectionApplied, ToolCall, ToolSpec,
};
use gauntlet_defense::{Defense, TaskContext};
use gauntlet_gateway::{InjectionRule, Mediator};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Mutex;

/// A connection to an upstream MCP server.
pub struct Upstream {
    link: Link,
}

/// How the proxy reaches its upstream.
enum Link {
    /// A child process over stdio, through rmcp's client.
    Stdio(RunningService<RoleClient, ()>),
    /// A streamable HTTP endpoint, through our own lean client (see [`crate::upstream_http`]).
    Http(HttpUpstream),
}

impl Upstream {
    /// Starts `cmdline` (run by `sh -c`, so quoting works as in a shell) and speaks MCP with it over stdio.
    pub async fn command(cmdline: &str) -> Result<Upstream, McpFrontError> {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c").arg(format!("exec {cmdline}"));
        gauntlet_core::environment::withhold(cmd.as_std_mut());
        let transport = TokioChildProcess::new(cmd)?;
        let client = ().serve(transport).await.map_err(|e| {
            McpFrontError::Protocol(format!(
                "upstream `{cmdline}` did not start an MCP session: {e}"
            ))
        })?;
        Ok(Upstream {
            link: Link::Stdio(client),
        })
    }

    /// How long a call to an HTTP upstream may take unless told otherwise.
    pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

    /// Connects to an upstream's streamable HTTP endpoint.
    pub async fn url(url: &str) -> Result<Upstream, McpFrontError> {
        Upstream::url_with(url, &[], Upstream::DEFAULT_TIMEOUT).await
    }

    /// Connects to an upstream's streamable HTTP endpoint, sending `headers` (name, value) with every request
    /// and giving each request `timeout` to be answered. Header values are marked sensitive: they are
    /// credentials, as a rule, and never appear in errors.
    pub async fn url_with(
        url: &str,
        headers: &[(String, String)],
        timeout: std::time::Duration,
    ) -> Result<Upstream, McpFrontError> {
        let mut extra = reqwest::header::HeaderMap::new();
        for (name, value) in headers {
            let n = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                McpFrontError::Config(format!("{name:?} is not a valid HTTP header name"))
            })?;
            if extra.contains_key(&n) {
                // The client would send only the first of them.
                return Err(McpFrontError::Config(format!(
                    "header {name} is given twice"
                )));
            }
            let mut v = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                McpFrontError::Config(format!(
                    "the value of header {name} is not a valid HTTP header value"
                ))
            })?;
            v.set_sensitive(true);
            extra.insert(n, v);
        }
        let opts = crate::upstream_http::HttpOptions {
            headers: extra,
            timeout,
        };
        let http = HttpUpstream::connect(url, opts).await.map_err(|e| {
            McpFrontError::Protocol(format!("the upstream did not start an MCP session: {e}"))
        })?;
        Ok(Upstream {
            link: Link::Http(http),
        })
    }

    /// Connects to the upstream a front end names: a command line (`command`) or an HTTP endpoint (`url`, with
    /// `headers` and `timeout` as for [`Upstream::url_with`]); exactly one of the two.
    pub async fn connect(
        command: Option<&str>,
        url: Option<&str>,
        headers: &[(String, String)],
        timeout: std::time::Duration,
    ) -> Result<Upstream, McpFrontError> {
        match (command, url) {
            (Some(cmd), None) => Upstream::command(cmd).await,
            (None, Some(url)) => Upstream::url_with(url, headers, timeout).await,
            _ => Err(McpFrontError::Config(
                "give the upstream server: --upstream 'CMD ARGS' or --upstream-url URL".into(),
            )),
        }
    }

    /// The upstream's tools.
    pub async fn tools(&self) -> Result<Vec<ToolInfo>, McpFrontError> {
        let tools: Vec<Tool> = match &self.link {
            Link::Stdio(client) => client.list_all_tools().await.map_err(|e| {
                McpFrontError::Protocol(format!("listing the upstream's tools: {e}"))
            })?,
            Link::Http(http) => {
                let mut tools = Vec::new();
                let mut cursor: Option<String> = None;
                let mut seen = std::collections::HashSet::new();
                loop {
                    let params = match &cursor {
                        Some(c) => json!({ "cursor": c }),
                        None => json!({}),
                    };
                    let page: ListToolsResult = serde_json::from_value(
                        http.request("tools/list", params).await?,
                    )
                    .map_err(|e| {
                        McpFrontError::Protocol(format!(
                            "the upstream's tool list is malformed: {e}"
                        ))
                    })?;
                    tools.extend(page.tools);
                    // A server whose cursors come round again would be listed for ever.
                    match page.next_cursor {
                        Some(next) if seen.len() < 10_000 && seen.insert(next.clone()) => {
                            cursor = Some(next)
                        }
                        Some(_) => {
                            return Err(McpFrontError::Protocol(
                                "the upstream's tool list pages come round in a cycle".into(),
                            ));
                        }
                        None => break,
                    }
                }
                tools
            }
        };
        Ok(tools
            .into_iter()
            .map(|t| ToolInfo {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect())
    }

    /// Calls a tool upstream: its result as the client would get it.
    pub async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, McpFrontError> {
        match &self.link {
            Link::Stdio(client) => {
                let mut params = CallToolRequestParams::new(tool.to_string());
                if let Value::Object(m) = args {
                    params = params.with_arguments(m);
                }
                client
                    .call_tool(params)
                    .await
                    .map_err(|e| McpFrontError::Protocol(format!("upstream call {tool}: {e}")))
            }
            Link::Http(http) => {
                let result = http
                    .request("tools/call", json!({"name": tool, "arguments": args}))
                    .await?;
                serde_json::from_value(result).map_err(|e| {
                    McpFrontError::Protocol(format!("upstream call {tool}: malformed result: {e}"))
                })
            }
        }
    }

    /// Ends the session (and the child process).
    pub async fn close(self) {
        match self.link {
            Link::Stdio(client) => {
                let _ = client.cancel().await;
            }
            Link::Http(http) => http.close().await,
        }
    }
}

/// What is wrong with an upstream header given as `'Name: value'`. It never holds the value: that is usually a
/// credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// There is no `:` between name and value (the text is not echoed: it may be a bare credential).
    #[error("expected 'Name: value' (no colon found)")]
    NoColon,
    /// The name is empty or has characters other than letters, digits, `-` and `_`.
    #[error("{0:?} is not a header name")]
    BadName(String),
    /// A `${` in the value of the header named has no closing `}`.
    #[error("header {0}: `${{` without a closing `}}`")]
    Unclosed(String),
    /// The value of header `name` names an environment variable `var` that is not set.
    #[error("header {name}: environment variable {var} is not set")]
    Unset {
        /// The header's name.
        name: String,
        /// The variable.
        var: String,
    },
}

/// Parses an upstream header given as `'Name: value'`, replacing each `${VAR}` in the value by `env(VAR)`, so a
/// credential need not appear on a command line. Errors name the header and the variable, never the value.
pub fn parse_header(
    spec: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), HeaderError> {
    let Some((name, value)) = spec.split_once(':') else {
        return Err(HeaderError::NoColon);
    };
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(HeaderError::BadName(name.to_string()));
    }
    let mut out = String::new();
    let mut rest = value.trim();
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            return Err(HeaderError::Unclosed(name.to_string()));
        };
        let var = &rest[at + 2..at + end];
        match env(var) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(HeaderError::Unset {
                    name: name.to_string(),
                    var: var.to_string(),
                });
            }
        }
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok((name.to_string(), out))
}

/// A tool result as one JSON value, as an agent reads it: its text (one string; several text blocks joined by
/// newlines), else its structured content, else the content blocks as JSON.
pub fn result_value(r: &CallToolResult) -> Value {
    let texts: Vec<&str> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    if texts.len() == r.content.len() && !texts.is_empty() {
        Value::String(texts.join("\n"))
    } else if let Some(s) = &r.structured_content {
        s.clone()
    } else {
        serde_json::to_value(&r.content).unwrap_or(Value::Null)
    }
}

/// Mutable state of the proxy's mediation.
struct State {
    /// The gateway's mediation (defense, injection rules, harm), the same as in an episode.
    mediator: Mediator,
    log: Vec<GatewayEvent>,
    denied: u64,
    injected: u64,
}

/// What the proxy has mediated so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyCounts {
    /// Calls mediated.
    pub calls: u64,
    /// Calls denied (by the defense, or because it failed to decide).
    pub denied: u64,
    /// Of those, calls denied because the defense failed to decide them.
    pub defense_failures: u64,
    /// Results an injection rule changed.
    pub injected: u64,
}

impl std::fmt::Display for ProxyCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} calls, {} denied", self.calls, self.denied)?;
        if self.defense_failures > 0 {
            write!(
                f,
                " ({} because the defense failed to decide)",
                self.defense_failures
            )?;
        }
        write!(f, ", {} injected", self.injected)
    }
}

/// The gateway's mediation in front of an [`Upstream`].
pub struct ProxyBackend {
    upstream: tokio::sync::RwLock<Option<Upstream>>,
    tools: Vec<ToolInfo>,
    state: Mutex<State>,
    log: Mutex<Option<Box<dyn Write + Send>>>,
}

impl ProxyBackend {
    /// Lists the upstream's tools and prepares `defense` for them and the user's `task` (empty if none was
    /// given). A proxy has no plan: a defense that allows only a task's plan, such as `exact-args`, denies
    /// everything.
    pub async fn new(
        upstream: Upstream,
        defense: &dyn Defense,
        task: &str,
        rules: Vec<InjectionRule>,
        log: Option<Box<dyn Write + Send>>,
    ) -> Result<ProxyBackend, McpFrontError> {
        let tools = upstream.tools().await?;
        let specs: Vec<ToolSpec> = tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.input_schema.clone(),
                effect: Effect {
                    kind: EffectKind::Write,
                    domain: "upstream".into(),
                    tier: gauntlet_core::HarmTier::H1,
                },
            })
            .collect();
        let policy = defense
            .prepare(&TaskContext {
                case_id: "proxy",
                prompt: task,
                solution: &[],
                tools: &specs,
            })
            .map_err(|e| McpFrontError::Config(format!("--defense: {e}")))?;
        Ok(ProxyBackend {
            upstream: tokio::sync::RwLock::new(Some(upstream)),
            tools,
            state: Mutex::new(State {
                mediator: Mediator::new(policy, rules),
                log: Vec::new(),
                denied: 0,
                injected: 0,
            }),
            log: Mutex::new(log),
        })
    }

    /// What the proxy has mediated so far.
    pub fn counts(&self) -> ProxyCounts {
        self.state
            .lock()
            .map(|s| ProxyCounts {
                calls: s.log.len() as u64,
                denied: s.denied,
                defense_failures: s.mediator.defense_failures(),
                injected: s.injected,
            })
            .unwrap_or_default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<GatewayEvent> {
        self.state.lock().map(|s| s.log.clone()).unwrap_or_default()
    }

    /// Ends the upstream session.
    pub async fn close(&self) {
        if let Some(u) = self.upstream.write().await.take() {
            u.close().await;
        }
    }

    async fn mediate(&self, tool: String, args: Value) -> ToolOutput {
        // The call's id is final once it is logged (see below).
        let call = ToolCall {
            id: String::new(),
            tool,
            args,
        };
        // The defense decides with the log so far in view (under the lock: no copy of the history per call). A
        // defense that cannot decide denies the call, as in an episode (the mediator's one rule).
        let decision = match self.state.lock() {
            Ok(mut s) => {
                let State { mediator, log, .. } = &mut *s;
                mediator.decide(&call, log)
            }
            Err(_) => Decision::Deny {
                reason: "the proxy failed earlier (poisoned lock)".into(),
            },
        };
        let mut untouched = None;
        let (raw, observed, injection, error) = match &decision {
            Decision::Deny { reason } => {
                let (raw, observed, msg) = gauntlet_gateway::mediator::denied(reason);
                (raw, observed, None, Some(msg))
            }
            Decision::Allow => {
                let result = match self.upstream.read().await.as_ref() {
                    Some(u) => u.call(&call.tool, call.args.clone()).await,
                    None => Err(McpFrontError::Protocol(
                        "the upstream session has ended".into(),
                    )),
                };
                match result {
                    Ok(r) => {
                        let raw = result_value(&r);
                        let (observed, injection) = self.inject(&call, &raw);
                        let error = r.is_error.unwrap_or(false).then(|| crate::render(&raw));
                        if injection.is_none() {
                            untouched = Some(r);
                        }
                        (raw, observed, injection, error)
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        (
                            json!({"error": msg}),
                            json!({"error": msg}),
                            None,
                            Some(msg),
                        )
                    }
                }
            }
        };
        let tier = match self.state.lock() {
            Ok(s) => s.mediator.tier(None, &call),
            Err(_) => gauntlet_core::HarmTier::H1,
        };
        let mut event = GatewayEvent {
            seq: 0,
            turn: 1,
            tier,
            call,
            decision,
            raw,
            observed,
            injection,
            error,
            // A proxy's events happen in real time, not on a world's logical clock.
            at: gauntlet_core::utc::now_rfc3339(),
        };
        let mut out = ToolOutput::new(event.observed.clone(), event.error.is_some());
        out.upstream = untouched;
        if let Ok(mut s) = self.state.lock() {
            // Numbered as they complete (concurrent calls may finish out of order), and written in that order.
            event.seq = s.log.len() as u64 + 1;
            event.call.id = format!("call-{}", event.seq);
            if !event.decision.allowed() {
                s.denied += 1;
            }
            if let Ok(mut w) = self.log.lock()
                && let Some(w) = w.as_mut()
            {
                // A log that cannot be written must not stop the proxy; the event is still kept in memory.
                let _ = serde_json::to_writer(&mut *w, &event)
                    .map_err(std::io::Error::from)
                    .and_then(|_| w.write_all(b"\n"))
                    .and_then(|_| w.flush());
            }
            s.log.push(event);
        }
        out
    }

    /// Applies the first matching rule with uses left (the mediator's rules, as in an episode; a proxy writes no
    /// payload into a record: the upstream's records are not its to change).
    fn inject(&self, call: &ToolCall, raw: &Value) -> (Value, Option<InjectionApplied>) {
        let Ok(mut s) = self.state.lock() else {
            return (raw.clone(), None);
        };
        let Some((i, rule)) = s.mediator.fire(call, raw, |_| false) else {
            return (raw.clone(), None);
        };
        let applied = (
            rule.apply(raw),
            Some(InjectionApplied {
                rule: i,
                mode: rule.mode.as_str().to_string(),
                inscribed: false,
            }),
        );
        s.injected += 1;
        applied
    }
}

impl Backend for ProxyBackend {
    fn tools(&self) -> Vec<ToolInfo> {
        self.tools.clone()
    }

    fn call(&self, tool: String, args: Value) -> CallFuture<'_> {
        Box::pin(self.mediate(tool, args))
    }
}

#[cfg(test)]
mod tests {
    use super::{ProxyCounts, parse_header};

    #[test]
    fn upstream_headers_expand_the_environment_and_name_what_is_wrong() {
        let env = |v: &str| (v == "TOK").then(|| "s3cret".to_string());
        let parse = |spec: &str| parse_header(spec, env).map_err(|e| e.to_string());
        assert_eq!(
            parse("Authorization: Bearer ${TOK}"),
            Ok(("Authorization".into(), "Bearer s3cret".into()))
        );
        assert_eq!(
            parse("X-Team:  a ${TOK}${TOK} b "),
            Ok(("X-Team".into(), "a s3crets3cret b".into()))
        );
        assert_eq!(
            parse("Authorization: Bearer ${NOPE}"),
            Err("header Authorization: environment variable NOPE is not set".into())
        );
        assert!(parse("Authorization Bearer x").is_err());
        assert!(parse("Bad Name: x").is_err());
        let e = parse("A: ${TOK").err().unwrap_or_default();
        assert!(e.contains("closing"), "{e}");
    }

    #[test]
    fn counts_say_how_many_denials_were_defense_failures() {
        let mut c = ProxyCounts {
            calls: 5,
            denied: 2,
            defense_failures: 0,
            injected: 1,
        };
        assert_eq!(c.to_string(), "5 calls, 2 denied, 1 injected");
        c.defense_failures = 2;
        assert_eq!(
            c.to_string(),
            "5 calls, 2 denied (2 because the defense failed to decide), 1 injected"
        );
    }
}
