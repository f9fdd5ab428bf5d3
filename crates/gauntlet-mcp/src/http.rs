//! The streamable HTTP front: loopback by default, a bearer token required on any other address, a request size
//! limit and a request rate limit.

use crate::{Backend, McpFrontError, McpServer};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::IntoResponse;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the HTTP front listens and what it lets in.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to bind (`127.0.0.1:0` picks a free port).
    pub bind: SocketAddr,
    /// Bearer token every request must carry (`Authorization: Bearer …`); required off loopback.
    pub token: Option<String>,
    /// Largest request body accepted, in bytes.
    pub max_body: usize,
    /// Requests per second accepted (a burst of as many is allowed); beyond, 429.
    pub rate_per_sec: u32,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            max_body: 1 << 20,
            rate_per_sec: 1000,
        }
    }
}

/// A running HTTP front.
pub struct HttpServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting requests and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server ends (it ends on `stop` or when the process is interrupted).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

/// A token bucket shared by all requests.
struct Bucket {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn take(&mut self) -> bool {
        let now = Instant::now();
        self.tokens = (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate)
            .min(self.rate.max(1.0));
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from response times.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Serves `backend` at `/mcp` on `opts.bind`. Refuses a non-loopback address without a token.
pub async fn serve_http<B: Backend>(
    backend: Arc<B>,
    name: &str,
    encode: bool,
    opts: HttpOptions,
) -> Result<HttpServer, McpFrontError> {
    if !opts.bind.ip().is_loopback() && opts.token.as_deref().is_none_or(str::is_empty) {
        return Err(McpFrontError::Config(format!(
            "binding {} (not loopback) needs --token: anyone who can reach it could drive the sandbox",
            opts.bind
        )));
    }
    let server = McpServer::new(backend, name, encode);
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(opts.max_body)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        // No sessions: the backend's state is shared by every client anyway, and a session costs a task hop per
        // call. Without them, plain JSON responses for request-response calls (an SSE stream only when the
        // handler needs one): together a tenth of a millisecond per call on 2 cores.
        .with_legacy_session_mode(false)
        .with_json_response(true);
    if !opts.bind.ip().is_loopback() {
        // Off loopback the token guards the server; the Host check is for DNS rebinding against loopback.
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token = opts.token.clone();
    let bucket = Arc::new(Mutex::new(Bucket {
        rate: f64::from(opts.rate_per_sec.max(1)),
        tokens: f64::from(opts.rate_per_sec.max(1)),
        last: Instant::now(),
    }));
    let guard = move |req: Request, next: Next| {
        let token = token.clone();
        let bucket = bucket.clone();
        async move {
            if let Some(t) = &token {
                let ok = req
                    .headers()
                    .get(axum::http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .is_some_and(|given| same(given.as_bytes(), t.as_bytes()));
                if !ok {
                    return (StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n")
                        .into_response();
                }
            }
            if !bucket.lock().map(|mut b| b.take()).unwrap_or(false) {
                return (StatusCode::TOO_MANY_REQUESTS, "rate limit\n").into_response();
            }
            next.run(req).await
        }
    };
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::extract::DefaultBodyLimit::max(opts.max_body))
        .layer(axum::middleware::from_fn(guard));
    let listener = tokio::net::TcpListener::bind(opts.bind).await?;
    let addr = listener.local_addr()?;
    // Small JSON-RPC messages: send each at once rather than wait to coalesce (Nagle).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp: &mut tokio::net::TcpStream| {
        let _ = tcp.set_nodelay(true);
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    Ok(HttpServer {
        addr,
        stop: Some(stop),
        task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CallFuture, ToolInfo, ToolOutput};
    use std::io::{Read, Write};

    struct Nothing;

    impl Backend for Nothing {
        fn tools(&self) -> Vec<ToolInfo> {
            Vec::new()
        }
        fn call(&self, _tool: String, _args: serde_json::Value) -> CallFuture<'_> {
            Box::pin(std::future::ready(ToolOutput::new(
                serde_json::Value::Null,
                false,
            )))
        }
    }

    /// Sends one raw HTTP/1.1 POST to `/mcp`; returns the status code.
    fn post(addr: SocketAddr, auth: Option<&str>, body: &str) -> u16 {
        post_bytes(addr, auth, body.as_bytes())
    }

    /// Sends one raw HTTP/1.1 POST to `/mcp` with any body; returns the status code (0: no answer).
    fn post_bytes(addr: SocketAddr, auth: Option<&str>, body: &[u8]) -> u16 {
        let mut s = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
        let auth = auth.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(&[head.as_bytes(), body].concat());
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        resp.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
    }

    fn start(opts: HttpOptions) -> (tokio::runtime::Runtime, HttpServer) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let server = rt
            .block_on(serve_http(Arc::new(Nothing), "t", true, opts))
            .unwrap_or_else(|e| panic!("{e}"));
        (rt, server)
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[test]
    fn the_token_the_size_limit_and_the_rate_limit_hold() {
        let (_rt, server) = start(HttpOptions {
            token: Some("tok".into()),
            max_body: 2048,
            rate_per_sec: 5,
            ..HttpOptions::default()
        });
        let a = server.addr;
        assert_eq!(post(a, None, INIT), 401, "no token");
        assert_eq!(post(a, Some("wrong"), INIT), 401, "wrong token");
        assert_eq!(post(a, Some("tok"), INIT), 200);
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(4096));
        assert_eq!(post(a, Some("tok"), &big), 413, "body over --max-body");
        // The burst is 5 a second: well within a second, some of 12 requests must be refused.
        let codes: Vec<u16> = (0..12).map(|_| post(a, Some("tok"), INIT)).collect();
        assert!(codes.contains(&429), "{codes:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
        /// Hostile bodies (random bytes, JSON that is not JSON-RPC, requests with wrong shapes) get a client error
        /// or a JSON-RPC error, never a server error or a dropped connection, and the server goes on serving.
        #[test]
        fn hostile_bodies_get_errors_and_the_server_goes_on(
            junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            method in "[a-z/]{0,12}",
            id in proptest::prelude::any::<i64>(),
        ) {
            let (_rt, server) = start(HttpOptions { rate_per_sec: 100_000, ..HttpOptions::default() });
            let shaped = [
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":7}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{id}}}}}"#),
                format!(r#"[{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}]"#),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
                "null".to_string(),
            ];
            for body in shaped.iter().map(|b| b.as_bytes()).chain([junk.as_slice()]) {
                let code = post_bytes(server.addr, None, body);
                proptest::prop_assert!(
                    (200..500).contains(&code),
                    "{code} for {:?}", String::from_utf8_lossy(body)
                );
            }
            proptest::prop_assert_eq!(post(server.addr, None, INIT), 200);
        }
    }

    #[test]
    fn a_non_loopback_address_needs_a_token() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let r = rt.block_on(serve_http(
            Arc::new(Nothing),
            "t",
            true,
            HttpOptions {
                bind: SocketAddr::from(([0, 0, 0, 0], 0)),
                ..HttpOptions::default()
            },
        ));
        assert!(matches!(r, Err(McpFrontError::Config(_))));
    }
}
