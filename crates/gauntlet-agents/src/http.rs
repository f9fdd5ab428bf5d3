//! The HTTP target: any app, in any language, behind `POST {input, turns, session_id}` → `{output,
//! tool_calls?}`. Tool calls the app reports are executed on the simulated world through the gateway (so the
//! verifier sees their effect) and their results are sent back with the next turn. The contract is in
//! `docs/targets.md`.

use crate::{Agent, AgentError, Calibration, Target};
use gauntlet_gateway::Gateway;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// An app behind an HTTP endpoint.
pub struct HttpTarget {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
    client: reqwest::Client,
    timeout: Duration,
    runtime: tokio::runtime::Handle,
    sessions: AtomicU64,
}

impl HttpTarget {
    /// A target at `url` (http or https). Headers are sent with every request (put secrets in them only from
    /// the environment: they are never written to reports).
    pub fn new(
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
        runtime: tokio::runtime::Handle,
    ) -> Result<HttpTarget, AgentError> {
        gauntlet_llm::install_crypto();
        let client = reqwest::Client::builder()
            .redirect(gauntlet_llm::same_origin_redirects())
            .build()
            .map_err(|e| AgentError {
                agent: url.to_string(),
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(HttpTarget {
            name: url.to_string(),
            url: url.to_string(),
            headers,
            client,
            timeout,
            runtime,
            sessions: AtomicU64::new(0),
        })
    }
}

impl Target for HttpTarget {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&self, _calibration: &Calibration) -> Box<dyn Agent> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed);
        Box::new(HttpAgent {
            name: self.name.clone(),
            url: self.url.clone(),
            headers: self.headers.clone(),
            client: self.client.clone(),
            timeout: self.timeout,
            runtime: self.runtime.clone(),
            session_id: format!("gauntlet-{}-{n}", std::process::id()),
            turns: Vec::new(),
        })
    }
}

/// One turn as the app sees it in `turns`.
#[derive(Debug, Clone, Serialize)]
struct PastTurn {
    input: String,
    output: String,
    tool_results: Vec<Value>,
}

/// A call the app reports.
#[derive(Debug, Deserialize)]
struct ReportedCall {
    tool: String,
    #[serde(default)]
    args: Value,
}

#[derive(Debug, Deserialize)]
struct AppReply {
    output: String,
    #[serde(default)]
    tool_calls: Vec<ReportedCall>,
}

struct HttpAgent {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
    client: reqwest::Client,
    timeout: Duration,
    runtime: tokio::runtime::Handle,
    session_id: String,
    turns: Vec<PastTurn>,
}

impl Agent for HttpAgent {
    fn respond(&mut self, user: &str, gw: &mut Gateway) -> Result<String, AgentError> {
        let body = json!({"input": user, "turns": self.turns, "session_id": self.session_id});
        let err = |m: String| AgentError {
            agent: self.name.clone(),
            message: m,
        };
        let mut rb = self
            .client
            .post(&self.url)
            .timeout(self.timeout)
            .json(&body);
        for (k, v) in &self.headers {
            rb = rb.header(k, v);
        }
        let reply: AppReply = self.runtime.block_on(async {
            let resp = rb.send().await.map_err(|e| format!("request failed: {}", gauntlet_llm::error::describe_transport(&e)))?;
            let status = resp.status();
            // Only a redirect to another origin comes back as one: the app's headers stay with its own origin.
            if status.is_redirection() {
                let to = gauntlet_llm::redirect_origin(resp.headers());
                return Err(format!("HTTP {}: redirected to {to}, another origin: not followed, so that the configured headers stay with the app", status.as_u16()));
            }
            let text = gauntlet_llm::read_capped(resp).await.map_err(|e| e.to_string())?;
            if !status.is_success() {
                // The app's error may echo the headers it was sent: their values never reach the record.
                let text = gauntlet_llm::error::redact(&text, self.headers.iter().map(|(_, v)| v.as_str()));
                return Err(format!("HTTP {}: {}", status.as_u16(), text.chars().take(300).collect::<String>()));
            }
            serde_json::from_str::<AppReply>(&text).map_err(|e| format!("the reply is not {{\"output\": string, \"tool_calls\"?: [{{\"tool\", \"args\"}}]}}: {e}"))
        }).map_err(err)?;
        let mut tool_results = Vec::new();
        for c in reply.tool_calls {
            let e = gw.call(&c.tool, c.args);
            tool_results.push(json!({"tool": e.call.tool, "args": e.call.args, "result": e.observed, "error": e.error}));
        }
        self.turns.push(PastTurn {
            input: user.to_string(),
            output: reply.output.clone(),
            tool_results,
        });
        Ok(reply.output)
    }
}
