//! The gateway over the Model Context Protocol — the only crate that names `rmcp` types. It serves a
//! [`Backend`] (the sandbox's gateway, an upstream server behind the proxy's mediation, or an episode of a run)
//! to any MCP client over stdio or streamable HTTP, connects to upstream MCP servers as a client, and runs
//! external agent processes as targets whose tools are the episode's gateway ([`CommandTarget`]). [`front`] is
//! what a front end needs to run one: how it listens, its runtime, its event log, serving until the session ends.
//!
//! Tool names go over MCP in their wire form (`mail__send` for `mail.send`): MCP clients hand tool names on to
//! model APIs, which allow only letters, digits, `_` and `-`.

pub mod command;
pub mod front;
pub mod http;
pub mod proxy;
pub mod sandbox;
mod upstream_http;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use command::CommandTarget;
pub use front::{FrontError, Listen};
pub use http::{HttpOptions, HttpServer, serve_http};
pub use proxy::{HeaderError, ProxyBackend, ProxyCounts, Upstream};
pub use sandbox::SandboxBackend;

/// What went wrong serving or connecting.
#[derive(Debug, thiserror::Error)]
pub enum McpFrontError {
    /// The transport or the protocol failed.
    #[error("MCP: {0}")]
    Protocol(String),
    /// A socket could not be bound or a process started.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The configuration is unusable (a non-loopback bind without a token, …).
    #[error("{0}")]
    Config(String),
}

/// A tool as a [`Backend`] offers it: canonical name, description, JSON Schema of the arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Canonical name (`mail.send`), or an upstream server's own name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema (an object schema) of the arguments.
    pub input_schema: Value,
}

impl From<&gauntlet_core::ToolSpec> for ToolInfo {
    /// A tool of the world as offered over MCP.
    fn from(t: &gauntlet_core::ToolSpec) -> ToolInfo {
        ToolInfo {
            name: t.name.clone(),
            description: t.description.clone(),
            input_schema: t.parameters.clone(),
        }
    }
}

/// What a tool call returned to the client.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The result (what the agent observes).
    pub value: Value,
    /// Whether it is an error (denied, unknown tool, bad arguments, a failing service).
    pub is_error: bool,
    /// An upstream's own result, passed on untouched when nothing altered it (its content blocks may be more
    /// than one JSON value can say: images, several blocks, structured content).
    upstream: Option<CallToolResult>,
}

impl ToolOutput {
    /// An output of `value`.
    pub fn new(value: Value, is_error: bool) -> ToolOutput {
        ToolOutput {
            value,
            is_error,
            upstream: None,
        }
    }
}

/// Boxed future of a tool call.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// What an MCP server fronts: a list of tools and a way to call them. Every call goes through the gateway's
/// path (defense, execution, injection, log) inside the backend.
pub trait Backend: Send + Sync + 'static {
    /// The tools, canonical names.
    fn tools(&self) -> Vec<ToolInfo>;
    /// Calls `tool` (canonical name) with `args`.
    fn call(&self, tool: String, args: Value) -> CallFuture<'_>;
}

/// A canonical tool name as MCP clients see it: `.` becomes `__` (reversible, since canonical names never
/// contain `__`).
pub fn wire_name(name: &str) -> String {
    name.replace('.', "__")
}

/// The canonical name of a wire name (either form is accepted).
pub fn canonical_name(name: &str) -> String {
    name.replace("__", ".")
}

/// Renders a tool result as the text content MCP clients show: strings as they are, the rest as JSON.
pub fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An MCP server over a [`Backend`].
pub struct McpServer<B: Backend> {
    backend: Arc<B>,
    name: String,
    /// Canonical names must be wire-encoded (the sandbox); an upstream's names pass through as they are.
    encode: bool,
}

impl<B: Backend> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            backend: self.backend.clone(),
            name: self.name.clone(),
            encode: self.encode,
        }
    }
}

impl<B: Backend> McpServer<B> {
    /// A server named `name` (shown to clients as the server's implementation) over `backend`. With `encode`,
    /// tool names are sent in wire form (`mail__send`).
    pub fn new(backend: Arc<B>, name: &str, encode: bool) -> McpServer<B> {
        McpServer {
            backend,
            name: name.to_string(),
            encode,
        }
    }

    fn mcp_tools(&self) -> Vec<Tool> {
        self.backend
            .tools()
            .into_iter()
            .map(|t| {
                let schema = match t.input_schema {
                    Value::Object(m) => m,
                    _ => serde_json::Map::from_iter([("type".to_string(), Value::from("object"))]),
                };
                let name = if self.encode {
                    wire_name(&t.name)
                } else {
                    t.name
                };
                Tool::new(name, t.description, Arc::new(schema))
            })
            .collect()
    }
}

impl<B: Backend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                self.name.clone(),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Gauntlet's tool gateway: every call is checked by the configured defense, executed, possibly \
                 altered by injection rules, and recorded.",
            )
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, McpError>> + Send + '_ {
        std::future::ready(Ok(ListToolsResult::with_all_items(self.mcp_tools())))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.mcp_tools().into_iter().find(|t| t.name == name)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        let name = if self.encode {
            canonical_name(&request.name)
        } else {
            request.name.to_string()
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        async move {
            let out = self.backend.call(name, args).await;
            if let Some(r) = out.upstream {
                return Ok(CallToolResponse::from(r));
            }
            let text = vec![ContentBlock::text(render(&out.value))];
            let mut result = if out.is_error {
                CallToolResult::error(text)
            } else {
                CallToolResult::success(text)
            };
            // Object results also go as structured content, for clients that read it.
            if out.value.is_object() {
                result.structured_content = Some(out.value);
            }
            Ok(CallToolResponse::from(result))
        }
    }
}

/// Why a long-running command stops: the user's Ctrl-C, or a `kill` (what a container runtime or a CI runner sends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT.
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl StopSignal {
    /// The exit code of a process stopped by this signal, by the shell's convention (128 + its number).
    pub fn exit_code(self) -> i32 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }
}

/// Resolves at the first SIGINT or SIGTERM (a server serving over HTTP, a job that records what it stopped at).
/// The handlers are installed when this is called, not when the future is first polled: call it before saying
/// the server is ready, so that a signal sent on that cue is never the default one that kills the process. Call it
/// inside a tokio runtime.
pub fn stop_signal() -> impl std::future::Future<Output = StopSignal> {
    use tokio::signal::unix::{SignalKind, signal};
    let (interrupt, terminate) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    );
    let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
        match s {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    async move {
        tokio::select! {
            () = wait(interrupt) => StopSignal::Interrupt,
            () = wait(terminate) => StopSignal::Terminate,
        }
    }
}

/// Longest JSON-RPC line accepted over stdio; a longer one is answered with an error and skipped.
pub const MAX_LINE: usize = 4 << 20;

/// Serves `backend` over stdio until the client closes it.
pub async fn serve_stdio<B: Backend>(
    backend: Arc<B>,
    name: &str,
    encode: bool,
) -> Result<(), McpFrontError> {
    serve_lines(
        backend,
        name,
        encode,
        tokio::io::stdin(),
        tokio::io::stdout(),
        MAX_LINE,
    )
    .await
}

/// A JSON-RPC error line (id `null`: the request could not be read far enough to know its id).
fn error_line(code: i64, message: &str) -> Vec<u8> {
    let mut v = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    v.push(b'\n');
    v
}

/// Serves `backend` over newline-delimited JSON-RPC on any byte streams (stdio, pipes, tests). Lines are
/// checked before the MCP layer sees them: a line that is not JSON gets a parse error (-32700), a line longer
/// than `max_line` gets an invalid-request error (-32600) and is skipped, so hostile input is answered, never
/// fatal.
pub async fn serve_lines<B, R, W>(
    backend: Arc<B>,
    name: &str,
    encode: bool,
    input: R,
    mut output: W,
    max_line: usize,
) -> Result<(), McpFrontError>
where
    B: Backend,
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (server_in, mut feed) = tokio::io::duplex(1 << 16);
    let (drain, server_out) = tokio::io::duplex(1 << 16);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    // The server's replies, line by line, to the one writer.
    let replies = {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(drain);
            loop {
                let mut line = Vec::new();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).await.is_err() {
                            break;
                        }
                    }
                }
            }
        })
    };
    // The client's lines, checked, to the server.
    let reader = tokio::spawn(async move {
        let mut input = tokio::io::BufReader::new(input);
        loop {
            let mut line = Vec::new();
            let mut too_long = false;
            // Read one line, keeping at most `max_line` bytes of it.
            loop {
                let buf = match input.fill_buf().await {
                    Ok(b) => b,
                    Err(_) => return,
                };
                if buf.is_empty() {
                    if line.is_empty() && !too_long {
                        return;
                    }
                    break;
                }
                let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => (&buf[..=i], true),
                    None => (buf, false),
                };
                let n = chunk.len();
                if !too_long {
                    if line.len() + n > max_line {
                        too_long = true;
                        line.clear();
                    } else {
                        line.extend_from_slice(chunk);
                    }
                }
                input.consume(n);
                if done {
                    break;
                }
            }
            if too_long {
                if tx
                    .send(error_line(-32600, "message too large"))
                    .await
                    .is_err()
                {
                    return;
                }
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            if text.trim().is_empty() {
                continue;
            }
            if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_err() {
                if tx.send(error_line(-32700, "parse error")).await.is_err() {
                    return;
                }
                continue;
            }
            if feed.write_all(&line).await.is_err() {
                return;
            }
            if !line.ends_with(b"\n") && feed.write_all(b"\n").await.is_err() {
                return;
            }
        }
    });
    let writer = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    // The pumps run already: the session's start reads the client's `initialize` through them.
    let running = McpServer::new(backend, name, encode)
        .serve((server_in, server_out))
        .await;
    let result = match running {
        Ok(r) => {
            // The client closed its side: the reader ends, the server reads the end of its input, answers
            // what it has and stops.
            let _ = reader.await;
            let _ = r.waiting().await;
            Ok(())
        }
        Err(e) => {
            reader.abort();
            Err(McpFrontError::Protocol(e.to_string()))
        }
    };
    let _ = replies.await;
    let _ = writer.await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// Echoes its arguments.
    struct Echo;

    impl Backend for Echo {
        fn tools(&self) -> Vec<ToolInfo> {
            vec![ToolInfo {
                name: "test.echo".into(),
                description: "echo".into(),
                input_schema: serde_json::json!({"type": "object"}),
            }]
        }

        fn call(&self, _tool: String, args: Value) -> CallFuture<'_> {
            Box::pin(std::future::ready(ToolOutput::new(args, false)))
        }
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    const PING: &str = r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#;

    /// Feeds `input` to a server, then closes; returns every line it wrote.
    fn exchange(input: Vec<u8>, max_line: usize) -> Vec<String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async move {
            let (client_in, server_in) = tokio::io::duplex(1 << 16);
            let (server_out, client_out) = tokio::io::duplex(1 << 16);
            let server = tokio::spawn(serve_lines(
                Arc::new(Echo),
                "t",
                true,
                server_in,
                server_out,
                max_line,
            ));
            let writer = tokio::spawn(async move {
                let mut w = client_in;
                let _ = w.write_all(&input).await;
                let _ = w.shutdown().await;
            });
            let mut lines = tokio::io::BufReader::new(client_out).lines();
            let mut out = Vec::new();
            while let Ok(Some(l)) = lines.next_line().await {
                out.push(l);
            }
            let _ = writer.await;
            assert!(server.await.is_ok(), "the server task panicked");
            out
        })
    }

    fn session(junk: &[u8]) -> Vec<u8> {
        let mut input = format!("{INIT}\n{INITIALIZED}\n").into_bytes();
        input.extend_from_slice(junk);
        input.extend_from_slice(format!("\n{PING}\n").as_bytes());
        input
    }

    fn answered_last(out: &[String]) -> bool {
        out.iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v["id"] == "last" && v.get("result").is_some())
    }

    #[test]
    fn unparseable_and_oversized_lines_get_errors_and_the_session_goes_on() {
        let big = "x".repeat(300);
        let junk = format!(
            "{{garbage\n{big}\n[1,2]\n{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":5}}}}\n"
        );
        let out = exchange(session(junk.as_bytes()), 256);
        let codes: Vec<i64> = out
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["error"]["code"].as_i64())
            .collect();
        assert!(codes.contains(&-32700), "{out:?}");
        assert!(
            codes.contains(&-32600),
            "the 300-byte line is too large: {out:?}"
        );
        assert!(codes.len() >= 4, "every bad message answered: {out:?}");
        assert!(answered_last(&out), "{out:?}");
    }

    #[test]
    fn a_tool_call_round_trips_through_the_line_pump() {
        let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"test__echo","arguments":{"a":[1,"<x>"]}}}"#;
        let out = exchange(session(call.as_bytes()), MAX_LINE);
        let reply = out
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["id"] == "c")
            .unwrap_or_else(|| panic!("{out:?}"));
        assert_eq!(
            reply["result"]["structuredContent"]["a"][1], "<x>",
            "{reply}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Arbitrary bytes between a valid start and a final ping: every line the server writes is JSON-RPC,
        /// and the ping is still answered.
        #[test]
        fn hostile_bytes_never_stop_the_server(junk in proptest::collection::vec(any::<u8>(), 0..600)) {
            let out = exchange(session(&junk), 4096);
            for l in &out {
                let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
                prop_assert_eq!(&v["jsonrpc"], "2.0", "{}", l);
            }
            prop_assert!(answered_last(&out), "{:?}", out);
        }

        /// Structurally plausible but wrong JSON-RPC messages.
        #[test]
        fn malformed_requests_get_protocol_errors(
            method in prop::sample::select(vec!["tools/call", "tools/list", "initialize", "nope", "", "ping"]),
            params in prop::sample::select(vec!["null", "5", "\"x\"", "[]", "{\"name\":null}", "{\"name\":\"test__echo\",\"arguments\":7}", "{\"name\":\"missing\"}"]),
            id in prop::sample::select(vec!["1", "\"a\"", "null", "1.5", "[1]", "{}"]),
        ) {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
            let out = exchange(session(line.as_bytes()), MAX_LINE);
            prop_assert!(answered_last(&out), "{} -> {:?}", line, out);
        }
    }

    #[test]
    fn wire_names_round_trip() {
        for n in ["mail.send", "drive.read_file", "shell.run"] {
            assert_eq!(canonical_name(&wire_name(n)), n);
            assert!(!wire_name(n).contains('.'));
        }
    }
}
