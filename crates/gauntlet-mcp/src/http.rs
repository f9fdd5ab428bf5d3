//! The streamable HTTP front: loopback by default, a bearer token (16 characters or more) required on any other
//! address, a request size limit, a request rate limit, and limits that keep strangers from stalling it: a
//! request's headers and body must arrive within a timeout, an idle connection is closed, and only so many
//! connections are served at once (more wait to be accepted).

use crate::{Backend, McpFrontError, McpServer};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::IntoResponse;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Fewest non-blank characters of a token guarding a non-loopback address.
pub const MIN_TOKEN: usize = 16;

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
    /// Longest a client may take to send a request's headers, and its body: past it the connection is closed
    /// (headers) or the request answered 408 (body). A new connection that sends nothing is closed after it too.
    pub read_timeout: Duration,
    /// Longest a connection that has been answered may sit idle before it is closed.
    pub idle_timeout: Duration,
    /// Connections served at once; more wait in the listen queue until one closes.
    pub max_connections: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            max_body: 1 << 20,
            rate_per_sec: 1000,
            read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 256,
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

    /// Stops accepting connections, lets those open finish what they are answering, and waits for the server to end.
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
    let strong = |t: &str| t.chars().filter(|c| !c.is_whitespace()).count() >= MIN_TOKEN;
    if !opts.bind.ip().is_loopback() && !opts.token.as_deref().is_some_and(strong) {
        return Err(McpFrontError::Config(format!(
            "binding {} (not loopback) needs --token of at least {MIN_TOKEN} non-blank characters: anyone who \
             can reach it could drive the sandbox",
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
    let (read_timeout, max_body) = (opts.read_timeout, opts.max_body);
    let guard =
        move |req: Request, next: Next| {
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
                if req.method() != axum::http::Method::POST {
                    return next.run(req).await;
                }
                // The body within the read timeout and the size limit, and JSON, before the MCP layer sees it.
                let (parts, body) = req.into_parts();
                let bytes =
                    match tokio::time::timeout(read_timeout, axum::body::to_bytes(body, max_body))
                        .await
                    {
                        Err(_) => {
                            return (
                                StatusCode::REQUEST_TIMEOUT,
                                "the body did not arrive in time\n",
                            )
                                .into_response();
                        }
                        Ok(Err(_)) => {
                            return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n")
                                .into_response();
                        }
                        Ok(Ok(b)) => b,
                    };
                if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
                    let error = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": {"code": -32700, "message": format!("Parse error: {e}")},
                    });
                    return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
                }
                next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                    .await
            }
        };
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::extract::DefaultBodyLimit::max(opts.max_body))
        .layer(axum::middleware::from_fn(guard));
    let listener = tokio::net::TcpListener::bind(opts.bind).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(accept_loop(listener, app, opts, stopped));
    Ok(HttpServer {
        addr,
        stop: Some(stop),
        task,
    })
}

/// Accepts connections while fewer than `max_connections` are open, serves each on a task of its own, and on
/// `stopped` lets the open ones finish what they are answering.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    opts: HttpOptions,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(opts.max_connections.max(1)));
    let (closing, closed) = tokio::sync::watch::channel(false);
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let slot = tokio::select! {
            _ = &mut stopped => break,
            s = slots.clone().acquire_owned() => s,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            _ = &mut stopped => break,
            a = listener.accept() => a,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            // Out of file descriptors, or a connection reset before it was accepted: try again shortly.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        // Small JSON-RPC messages: send each at once rather than wait to coalesce (Nagle).
        let _ = tcp.set_nodelay(true);
        conns.spawn(serve_connection(
            tcp,
            app.clone(),
            opts.clone(),
            closed.clone(),
            slot,
        ));
        // Reap finished connections as we go, so the set does not grow with every one ever served.
        while conns.try_join_next().is_some() {}
    }
    let _ = closing.send(true);
    // Open connections finish their answers, for at most the read timeout.
    let _ = tokio::time::timeout(opts.read_timeout, async {
        while conns.join_next().await.is_some() {}
    })
    .await;
}

/// Serves one connection: headers within the read timeout (hyper's), and closed when idle: after the read timeout
/// if it has not been answered yet, after the idle timeout once it has.
async fn serve_connection(
    tcp: tokio::net::TcpStream,
    app: axum::Router,
    opts: HttpOptions,
    mut closing: tokio::sync::watch::Receiver<bool>,
    _slot: tokio::sync::OwnedSemaphorePermit,
) {
    let activity = Arc::new(Activity {
        since: Instant::now(),
        last_ms: AtomicU64::new(0),
        answered: AtomicBool::new(false),
    });
    let io = hyper_util::rt::TokioIo::new(Watched {
        io: tcp,
        activity: activity.clone(),
    });
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(opts.read_timeout);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let tick = (opts.read_timeout / 4).max(Duration::from_millis(10));
    loop {
        tokio::select! {
            _ = conn.as_mut() => break,
            changed = closing.changed() => {
                if changed.is_err() || *closing.borrow() {
                    conn.as_mut().graceful_shutdown();
                    // Finish what is being answered; the loop ends when the connection does.
                    let _ = tokio::time::timeout(opts.read_timeout, conn.as_mut()).await;
                    break;
                }
            }
            () = tokio::time::sleep(tick) => {
                let limit = if activity.answered.load(Ordering::Relaxed) {
                    opts.idle_timeout
                } else {
                    opts.read_timeout
                };
                if activity.idle() > limit {
                    break;
                }
            }
        }
    }
}

/// When a connection last moved bytes, and whether it has been answered.
struct Activity {
    since: Instant,
    last_ms: AtomicU64,
    answered: AtomicBool,
}

impl Activity {
    fn touch(&self) {
        let ms = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn idle(&self) -> Duration {
        self.since
            .elapsed()
            .saturating_sub(Duration::from_millis(self.last_ms.load(Ordering::Relaxed)))
    }
}

/// A connection's stream that notes its activity (see [`Activity`]).
struct Watched {
    io: tokio::net::TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
            self.activity.answered.store(true, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
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

    /// Sends raw bytes on a new connection and reads until it closes or `wait` passes; returns what came back.
    fn raw(addr: SocketAddr, bytes: &[u8], wait: Duration) -> String {
        let mut s = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
        let _ = s.set_read_timeout(Some(wait));
        let _ = s.write_all(bytes);
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp);
        String::from_utf8_lossy(&resp).into_owned()
    }

    #[test]
    fn a_body_that_is_not_json_gets_a_json_rpc_parse_error() {
        let (_rt, server) = start(HttpOptions::default());
        let body = "this is not json";
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let resp = raw(server.addr, head.as_bytes(), Duration::from_secs(10));
        assert!(resp.starts_with("HTTP/1.1 400"), "{resp}");
        assert!(
            resp.contains("\"code\":-32700") && resp.contains("\"jsonrpc\":\"2.0\""),
            "{resp}"
        );
    }

    /// Strangers that open connections and send half a request, or nothing, or a body a byte at a time, cannot
    /// keep a valid client out: headers and bodies have a deadline, silent connections are closed, and the
    /// connection limit keeps the rest waiting in the listen queue rather than holding descriptors.
    #[test]
    fn slow_clients_cannot_stall_the_server() {
        let (_rt, server) = start(HttpOptions {
            read_timeout: Duration::from_secs(1),
            max_connections: 8,
            rate_per_sec: 100_000,
            ..HttpOptions::default()
        });
        let a = server.addr;
        // More half-sent requests and silent connections than the server serves at once, held open.
        let mut held = Vec::new();
        for i in 0..24 {
            let mut s = std::net::TcpStream::connect(a).unwrap_or_else(|e| panic!("{e}"));
            if i % 2 == 0 {
                let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
            }
            held.push(s);
        }
        let started = Instant::now();
        assert_eq!(post(a, None, INIT), 200);
        // Each wave of 8 is closed after the 1 s read timeout: three waves and the client, well under 15 s.
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
        // The server closed the half-sent and silent ones (a read sees the end, not a timeout).
        for s in &mut held[..8] {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let mut rest = Vec::new();
            assert!(
                s.read_to_end(&mut rest).is_ok(),
                "a stalled connection was kept open"
            );
        }
        // A body that stops coming is answered 408 at the read timeout, not held.
        let started = Instant::now();
        let resp = raw(
            a,
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"js",
            Duration::from_secs(20),
        );
        assert!(resp.starts_with("HTTP/1.1 408"), "{resp}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        drop(held);
    }

    #[test]
    fn a_non_loopback_address_needs_a_long_token() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        for token in ["tok", "                    ", "short token"] {
            let r = rt.block_on(serve_http(
                Arc::new(Nothing),
                "t",
                true,
                HttpOptions {
                    bind: SocketAddr::from(([0, 0, 0, 0], 0)),
                    token: Some(token.into()),
                    ..HttpOptions::default()
                },
            ));
            assert!(matches!(r, Err(McpFrontError::Config(_))), "{token:?}");
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
