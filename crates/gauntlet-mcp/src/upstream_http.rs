//! The client side of MCP's streamable HTTP transport (protocol 2025-06-18), for the proxy's hop to an HTTP
//! upstream. rmcp's client passes each call through three tasks and their channels, which on a 2-core machine
//! cost as much as the HTTP round trip itself (BENCHMARKS.md, "MCP proxy latency"); this client makes the POST
//! and reads the answer, JSON or an SSE stream, in the caller's task. Sessions (`Mcp-Session-Id`) are kept and
//! renewed once when the server forgets them; requests the server sends on a response stream are answered
//! (`ping`) or refused (anything else: the proxy offers no sampling, roots or elicitation).

use crate::McpFrontError;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The protocol version this client asks for.
const PROTOCOL: &str = "2025-06-18";
/// Versions whose streamable HTTP transport this client speaks; a server that answers another is refused.
const SPOKEN: [&str; 2] = ["2025-06-18", "2025-03-26"];
/// Largest response (a JSON body, or the whole SSE stream up to our answer) read from the upstream.
const MAX_RESPONSE: usize = 16 << 20;
const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";

/// The session the server gave, if any, and the version it agreed to. Replaced whole when renewed, so a call
/// always sends one session's id and version together.
#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
    /// Counts renewals: a call that met an expired session renews it only if no other call did meanwhile.
    epoch: u64,
}

/// How the proxy reaches an HTTP upstream.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    /// Headers sent with every request (credentials, typically).
    pub headers: HeaderMap,
    /// Longest wait for one request's answer (the whole exchange, stream included).
    pub timeout: Duration,
}

/// A connection to one streamable HTTP endpoint.
pub(crate) struct HttpUpstream {
    client: reqwest::Client,
    url: String,
    /// The URL as errors show it: no credentials, no query (hosted servers put keys in either).
    shown: String,
    session: RwLock<Arc<Session>>,
    /// Held while a session is being renewed.
    renewing: tokio::sync::Mutex<()>,
    next_id: AtomicU64,
    timeout: Duration,
}

/// `scheme://host[:port]/path` of a URL: what may appear in an error, a tool result or a log.
fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => format!(
            "{}://{}{}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default(),
            u.path()
        ),
        Err(_) => "the upstream URL".to_string(),
    }
}

impl HttpUpstream {
    /// Connects and runs the initialize handshake.
    pub(crate) async fn connect(
        url: &str,
        opts: HttpOptions,
    ) -> Result<HttpUpstream, McpFrontError> {
        // reqwest is built without a default TLS provider (aws-lc costs minutes of build); ring is ours.
        static CRYPTO: std::sync::Once = std::sync::Once::new();
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let client = reqwest::Client::builder()
            // Small messages, one per call: send each at once (no Nagle), as the server side does.
            .tcp_nodelay(true)
            .default_headers(opts.headers)
            // A redirect would carry the credential headers to another host.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(opts.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| McpFrontError::Protocol(format!("HTTP client: {}", e.without_url())))?;
        let up = HttpUpstream {
            client,
            url: url.to_string(),
            shown: shown(url),
            session: RwLock::new(Arc::new(Session::default())),
            renewing: tokio::sync::Mutex::new(()),
            next_id: AtomicU64::new(0),
            timeout: opts.timeout,
        };
        let fresh = up.within("initialize", up.handshake(0)).await?;
        up.install(fresh);
        Ok(up)
    }

    fn current(&self) -> Arc<Session> {
        self.session
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    fn install(&self, s: Session) {
        match self.session.write() {
            Ok(mut g) => *g = Arc::new(s),
            Err(p) => *p.into_inner() = Arc::new(s),
        }
    }

    /// A new session: initialize, then the initialized notification under the new session's headers.
    async fn handshake(&self, epoch: u64) -> Result<Session, McpFrontError> {
        let params = json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "gauntlet-proxy", "version": env!("CARGO_PKG_VERSION")},
        });
        let none = Session::default();
        let (result, headers) = self
            .exchange("initialize", params, &none)
            .await
            .map_err(McpFrontError::from)?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| self.fail("initialize", "the result has no protocolVersion"))?;
        if !SPOKEN.contains(&version) {
            return Err(self.fail(
                "initialize",
                format!(
                    "the server speaks protocol {version:?}; this client speaks {}",
                    SPOKEN.join(", ")
                ),
            ));
        }
        let session = Session {
            id: headers.get(SESSION).cloned(),
            version: HeaderValue::from_str(version).ok(),
            epoch,
        };
        self.notify("notifications/initialized", &session).await?;
        Ok(session)
    }

    /// Runs `f` within the request timeout.
    async fn within<T>(
        &self,
        method: &str,
        f: impl std::future::Future<Output = Result<T, McpFrontError>>,
    ) -> Result<T, McpFrontError> {
        tokio::time::timeout(self.timeout, f)
            .await
            .unwrap_or_else(|_| {
                Err(self.fail(
                    method,
                    format!("no answer within {:.0} s", self.timeout.as_secs_f64()),
                ))
            })
    }

    /// Sends a request and returns its result; renews the session once if the server has forgotten it.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, McpFrontError> {
        self.within(method, async {
            let session = self.current();
            match self.exchange(method, params.clone(), &session).await {
                Err(Failure::Expired) => {
                    let renewed = {
                        let _one_at_a_time = self.renewing.lock().await;
                        let now = self.current();
                        if now.epoch == session.epoch {
                            // Nobody renewed it since this call began: renew it here.
                            let fresh = self.handshake(session.epoch + 1).await?;
                            self.install(fresh);
                        }
                        self.current()
                    };
                    self.exchange(method, params, &renewed)
                        .await
                        .map(|(v, _)| v)
                        .map_err(McpFrontError::from)
                }
                r => r.map(|(v, _)| v).map_err(McpFrontError::from),
            }
        })
        .await
    }

    /// The headers of every message: content types, and the session's id and version once there is one.
    fn headers(session: &Session) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(id) = &session.id {
            h.insert(SESSION, id.clone());
        }
        if let Some(v) = &session.version {
            h.insert(VERSION, v.clone());
        }
        h
    }

    async fn post(
        &self,
        body: &Value,
        session: &Session,
    ) -> Result<reqwest::Response, McpFrontError> {
        let body = serde_json::to_vec(body)
            .map_err(|e| McpFrontError::Protocol(format!("encoding a message: {e}")))?;
        self.client
            .post(&self.url)
            .headers(Self::headers(session))
            .body(body)
            .send()
            .await
            .map_err(|e| self.fail("POST", e.without_url()))
    }

    /// One request and its answer, with the response's headers.
    async fn exchange(
        &self,
        method: &str,
        params: Value,
        session: &Session,
    ) -> Result<(Value, HeaderMap), Failure> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut resp = self.post(&msg, session).await?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND && session.id.is_some() {
            return Err(Failure::Expired);
        }
        if !status.is_success() {
            let text = read_limited(&mut resp).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            let text: String = text.trim().chars().take(300).collect();
            return Err(self.fail(method, format!("HTTP {status}: {text}")).into());
        }
        let headers = resp.headers().clone();
        let kind = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let answer = if kind.starts_with("application/json") {
            let body = read_limited(&mut resp).await?;
            let v: Value = serde_json::from_slice(&body)
                .map_err(|e| self.fail(method, format!("the response is not JSON: {e}")))?;
            messages(v)
                .into_iter()
                .find(|m| answers(m, id))
                .ok_or_else(|| self.fail(method, "the response does not answer the request"))?
        } else if kind.starts_with("text/event-stream") {
            self.read_stream(&mut resp, method, id, session).await?
        } else {
            return Err(self
                .fail(method, format!("unexpected content type {kind:?}"))
                .into());
        };
        if let Some(e) = answer.get("error") {
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
            return Err(self
                .fail(method, format!("{message} (error {code})"))
                .into());
        }
        match answer {
            Value::Object(mut m) => Ok((m.remove("result").unwrap_or(Value::Null), headers)),
            _ => Err(self.fail(method, "the answer is not an object").into()),
        }
    }

    /// Reads an SSE response until the message that answers `id`, answering the server's own requests.
    async fn read_stream(
        &self,
        resp: &mut reqwest::Response,
        method: &str,
        id: u64,
        session: &Session,
    ) -> Result<Value, McpFrontError> {
        let mut sse = Sse::default();
        let mut total = 0usize;
        loop {
            let chunk = resp.chunk().await.map_err(|e| {
                self.fail(
                    method,
                    format!("reading the event stream: {}", e.without_url()),
                )
            })?;
            let Some(chunk) = chunk else {
                return Err(self.fail(method, "the event stream ended without an answer"));
            };
            total += chunk.len();
            if total > MAX_RESPONSE {
                return Err(self.fail(method, "the event stream is over 16 MiB"));
            }
            for data in sse.push(&chunk) {
                let Ok(v) = serde_json::from_str::<Value>(&data) else {
                    continue;
                };
                for m in messages(v) {
                    if answers(&m, id) {
                        return Ok(m);
                    }
                    if let (Some(their_id), Some(asked)) =
                        (m.get("id"), m.get("method").and_then(Value::as_str))
                    {
                        self.reply(their_id.clone(), asked, session).await;
                    }
                }
            }
        }
    }

    /// Answers a request the server sent on a stream.
    async fn reply(&self, id: Value, method: &str, session: &Session) {
        let msg = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601,
                "message": format!("the Gauntlet proxy does not offer {method}"),
            }})
        };
        // The server asked; if it cannot hear the answer, its own timeout handles that.
        let _ = self.post(&msg, session).await;
    }

    async fn notify(&self, method: &str, session: &Session) -> Result<(), McpFrontError> {
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "method": method}), session)
            .await?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(self.fail(method, format!("HTTP {}", resp.status())))
        }
    }

    fn fail(&self, method: &str, why: impl std::fmt::Display) -> McpFrontError {
        McpFrontError::Protocol(format!("upstream {} ({method}): {why}", self.shown))
    }

    /// Ends the session: tells the server, which may keep it otherwise.
    pub(crate) async fn close(&self) {
        let session = self.current();
        if session.id.is_some() {
            let mut h = Self::headers(&session);
            h.remove(CONTENT_TYPE);
            let _ = tokio::time::timeout(
                self.timeout,
                self.client.delete(&self.url).headers(h).send(),
            )
            .await;
        }
    }
}

/// Why an exchange failed: the session expired (renew it and retry), or anything else.
enum Failure {
    Expired,
    Other(McpFrontError),
}

impl From<McpFrontError> for Failure {
    fn from(e: McpFrontError) -> Self {
        Failure::Other(e)
    }
}

impl From<Failure> for McpFrontError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Expired => McpFrontError::Protocol(
                "the upstream forgot the session again right after it was renewed".into(),
            ),
            Failure::Other(e) => e,
        }
    }
}

/// The messages of a body: one, or (2025-03-26) a batch.
fn messages(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        m => vec![m],
    }
}

/// Whether `m` is the response (result or error) to request `id`.
fn answers(m: &Value, id: u64) -> bool {
    m.get("method").is_none()
        && m.get("id").and_then(Value::as_u64) == Some(id)
        && (m.get("result").is_some() || m.get("error").is_some())
}

async fn read_limited(resp: &mut reqwest::Response) -> Result<Vec<u8>, McpFrontError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| McpFrontError::Protocol(format!("reading a response: {e}")))?
    {
        if out.len() + chunk.len() > MAX_RESPONSE {
            return Err(McpFrontError::Protocol("a response is over 16 MiB".into()));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// An incremental parser of a `text/event-stream` body: bytes in, each event's data out. Only `data` matters
/// here (MCP sends JSON-RPC messages as `message` events); `event`, `id`, `retry` and comments are skipped.
#[derive(Default)]
pub(crate) struct Sse {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    /// The last byte seen was a CR, so a following LF ends nothing.
    after_cr: bool,
}

impl Sse {
    /// Feeds bytes; returns the data of every event they complete (events with no data are not returned).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &b in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, b == b'\r');
            match b {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => self.end_line(&mut out),
                _ => self.line.push(b),
            }
        }
        out
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if std::mem::take(&mut self.has_data) {
                out.push(std::mem::take(&mut self.data));
            }
            return;
        }
        let line = String::from_utf8_lossy(&line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_are_split_on_blank_lines_and_data_lines_joined() {
        let mut p = Sse::default();
        let got = p.push(
            b": comment\ndata: \nid: 0/0\nretry: 3000\n\nevent: message\ndata: {\"a\":\ndata: 1}\n\ndata:x\r\n\r\n",
        );
        assert_eq!(got, vec!["", "{\"a\":\n1}", "x"]);
        // An event is only complete at its blank line.
        assert!(p.push(b"data: tail\n").is_empty());
        assert_eq!(p.push(b"\n"), vec!["tail"]);
    }

    #[test]
    fn only_answers_to_our_id_count() {
        assert!(answers(&json!({"jsonrpc":"2.0","id":3,"result":{}}), 3));
        assert!(answers(
            &json!({"jsonrpc":"2.0","id":3,"error":{"code":1}}),
            3
        ));
        assert!(!answers(&json!({"jsonrpc":"2.0","id":4,"result":{}}), 3));
        assert!(!answers(
            &json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
            3
        ));
        assert!(!answers(
            &json!({"jsonrpc":"2.0","method":"notifications/message"}),
            3
        ));
    }

    /// A scripted streamable HTTP server: 401 without `Authorization: Bearer t0k`; sessions `s1`, `s2`, … (one per initialize); a forgotten session gets
    /// 404; `tools/call` answers on an SSE stream after a ping and a notification; tool `bad` gets an error.
    #[derive(Default)]
    struct Fake {
        sessions: u32,
        forgotten: bool,
        /// Every message the client sent, with the session header it carried.
        got: Vec<(Option<String>, Value)>,
    }

    type Shared = std::sync::Arc<std::sync::Mutex<Fake>>;

    async fn fake(
        axum::extract::State(st): axum::extract::State<Shared>,
        headers: axum::http::HeaderMap,
        body: String,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let sid = headers
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        if headers
            .get(reqwest::header::AUTHORIZATION)
            .is_none_or(|v| v.as_bytes() != b"Bearer t0k")
        {
            return axum::http::StatusCode::UNAUTHORIZED.into_response();
        }
        if msg["params"]["name"] == "slow" {
            tokio::time::sleep(Duration::from_secs(5)).await;
            return axum::http::StatusCode::NO_CONTENT.into_response();
        }
        let Ok(mut f) = st.lock() else {
            return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        f.got.push((sid.clone(), msg.clone()));
        let id = msg["id"].clone();
        match msg["method"].as_str() {
            Some("initialize") => {
                f.sessions += 1;
                f.forgotten = false;
                let body = json!({"jsonrpc":"2.0","id":id,"result":{
                    "protocolVersion":"2025-06-18","capabilities":{},
                    "serverInfo":{"name":"fake","version":"0"}}});
                (
                    [
                        (SESSION, format!("s{}", f.sessions)),
                        ("content-type", "application/json".into()),
                    ],
                    body.to_string(),
                )
                    .into_response()
            }
            _ if f.forgotten || sid.as_deref() != Some(&format!("s{}", f.sessions)) => {
                axum::http::StatusCode::NOT_FOUND.into_response()
            }
            None => axum::http::StatusCode::ACCEPTED.into_response(),
            Some(_) if msg["params"]["name"] == "cut" => (
                [("content-type", "text/event-stream")],
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","method":"notifications/message","params":{}})
                ),
            )
                .into_response(),
            Some(_) if msg["params"]["name"] == "bad" => (
                [("content-type", "application/json")],
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"no tool bad"}})
                    .to_string(),
            )
                .into_response(),
            Some(_) => {
                let answer = json!({"jsonrpc":"2.0","id":id,"result":{
                    "content":[{"type":"text","text":"ok"}]}});
                let stream = format!(
                    "data: \nid: 0\n\nevent: message\ndata: {}\n\ndata: {}\n\ndata: {}\n\n",
                    json!({"jsonrpc":"2.0","id":"srv-1","method":"ping"}),
                    json!({"jsonrpc":"2.0","method":"notifications/message","params":{}}),
                    answer
                );
                ([("content-type", "text/event-stream")], stream).into_response()
            }
        }
    }

    #[tokio::test]
    async fn sessions_streams_server_requests_and_errors_are_handled() {
        let (base, st) = start_fake().await;
        let url = format!("{base}?key=SECRET-IN-QUERY");
        let opts = |headers: HeaderMap| HttpOptions {
            headers,
            timeout: Duration::from_millis(500),
        };
        let e = HttpUpstream::connect(&url, opts(HeaderMap::new()))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("HTTP 401"), "no credentials: {e}");
        assert!(
            !e.contains("SECRET"),
            "the URL's query stays out of errors: {e}"
        );
        // A redirect is not followed (it would carry the credentials elsewhere).
        let e = HttpUpstream::connect(&base.replace("/mcp", "/moved"), opts(HeaderMap::new()))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("HTTP 307"), "{e}");
        let up = connected(&url, Duration::from_millis(500)).await;
        let r = up
            .request("tools/call", json!({"name": "x", "arguments": {}}))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r["content"][0]["text"], "ok");
        // The server forgets the session: the client starts a new one and the call goes through.
        if let Ok(mut f) = st.lock() {
            f.forgotten = true;
        }
        let r = up
            .request("tools/call", json!({"name": "x", "arguments": {}}))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r["content"][0]["text"], "ok");
        let e = up
            .request("tools/call", json!({"name": "bad"}))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("no tool bad (error -32602)"), "{e}");
        assert!(!e.contains("SECRET") && !e.contains("t0k"), "{e}");
        let got = st.lock().map(|f| f.got.clone()).unwrap_or_default();
        let sessions: Vec<Option<&str>> = got.iter().map(|(s, _)| s.as_deref()).collect();
        let methods: Vec<&str> = got
            .iter()
            .map(|(_, m)| m["method"].as_str().unwrap_or("(reply)"))
            .collect();
        assert_eq!(
            methods,
            [
                "initialize",
                "notifications/initialized",
                "tools/call",
                "(reply)",
                "tools/call",
                "initialize",
                "notifications/initialized",
                "tools/call",
                "(reply)",
                "tools/call"
            ]
        );
        assert_eq!(
            sessions,
            [
                None,
                Some("s1"),
                Some("s1"),
                Some("s1"),
                Some("s1"),
                None,
                Some("s2"),
                Some("s2"),
                Some("s2"),
                Some("s2")
            ]
        );
        // The ping on the stream was answered with an empty result under the server's id.
        assert_eq!(got[3].1, json!({"jsonrpc":"2.0","id":"srv-1","result":{}}));
    }

    /// Serves the fake on a free port (and `/moved`, a redirect to it); returns the endpoint's URL and the
    /// shared state.
    async fn start_fake() -> (String, Shared) {
        let st = Shared::default();
        let app = axum::Router::new()
            .route("/mcp", axum::routing::post(fake))
            .route(
                "/moved",
                axum::routing::post(|| async {
                    (
                        axum::http::StatusCode::TEMPORARY_REDIRECT,
                        [("location", "/mcp")],
                    )
                }),
            )
            .with_state(st.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (format!("http://{addr}/mcp"), st)
    }

    /// A client of the fake, with its credential.
    async fn connected(url: &str, timeout: Duration) -> HttpUpstream {
        let mut creds = HeaderMap::new();
        creds.insert(
            reqwest::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer t0k"),
        );
        HttpUpstream::connect(
            url,
            HttpOptions {
                headers: creds,
                timeout,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[tokio::test]
    async fn calls_that_meet_an_expired_session_together_renew_it_once() {
        let (url, st) = start_fake().await;
        let up = connected(&url, Duration::from_secs(5)).await;
        if let Ok(mut f) = st.lock() {
            f.forgotten = true;
        }
        let call = || up.request("tools/call", json!({"name": "x", "arguments": {}}));
        let (a, b, c) = tokio::join!(call(), call(), call());
        for r in [a, b, c] {
            assert_eq!(
                r.unwrap_or_else(|e| panic!("{e}"))["content"][0]["text"],
                "ok"
            );
        }
        assert_eq!(st.lock().map(|f| f.sessions).unwrap_or(0), 2, "one renewal");
    }

    #[tokio::test]
    async fn a_stream_without_the_answer_and_a_silent_server_are_errors() {
        let (url, _st) = start_fake().await;
        let up = connected(&url, Duration::from_millis(300)).await;
        let e = up
            .request("tools/call", json!({"name": "cut"}))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("ended without an answer"), "{e}");
        let e = up
            .request("tools/call", json!({"name": "slow"}))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("no answer within"), "{e}");
    }

    proptest! {
        /// However the stream is cut into chunks, the same events come out, and nothing panics.
        #[test]
        fn chunking_does_not_change_the_events(
            events in proptest::collection::vec("[ -~]{0,40}", 0..6),
            crlf in any::<bool>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
            junk in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let text: String = events
                .iter()
                .map(|e| format!("event: message{nl}data: {e}{nl}{nl}"))
                .collect();
            let bytes = text.as_bytes();
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut p = Sse::default();
            let mut got = Vec::new();
            let mut from = 0;
            for a in at.into_iter().chain([bytes.len()]) {
                got.extend(p.push(&bytes[from..a]));
                from = a;
            }
            prop_assert_eq!(got, events.clone());
            let _ = p.push(&junk);
        }
    }
}
