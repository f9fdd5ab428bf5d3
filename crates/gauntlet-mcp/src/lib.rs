//! The gateway over the Model Context Protocol — the only crate that names `rmcp` types. It serves a
//! [`Backend`] (the sandbox's gateway, an upstream server behind the proxy's mediation, or an episode of a run)
//! to any MCP client over stdio or streamable HTTP, and connects to upstream MCP servers as a client.
//!
//! Tool names go over MCP in their wire form (`mail__send` for `mail.send`): MCP clients hand tool names on to
//! model APIs, which allow only letters, digits, `_` and `-`.

pub mod http;
pub mod proxy;
pub mod sandbox;

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

pub use http::{HttpOptions, HttpServer, serve_http};
pub use proxy::{ProxyBackend, Upstream};
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

/// Serves `backend` over stdio until the client closes it.
pub async fn serve_stdio<B: Backend>(
    backend: Arc<B>,
    name: &str,
    encode: bool,
) -> Result<(), McpFrontError> {
    let running = McpServer::new(backend, name, encode)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpFrontError::Protocol(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpFrontError::Protocol(e.to_string()))?;
    Ok(())
}

/// Serves `backend` over any byte stream pair (tests, pipes).
pub async fn serve_io<B, R, W>(
    backend: Arc<B>,
    name: &str,
    encode: bool,
    io: (R, W),
) -> Result<(), McpFrontError>
where
    B: Backend,
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = McpServer::new(backend, name, encode)
        .serve(io)
        .await
        .map_err(|e| McpFrontError::Protocol(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpFrontError::Protocol(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for n in ["mail.send", "drive.read_file", "shell.run"] {
            assert_eq!(canonical_name(&wire_name(n)), n);
            assert!(!wire_name(n).contains('.'));
        }
    }
}
