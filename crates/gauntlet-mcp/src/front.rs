//! Running an MCP front from a front end (the binary's `gauntlet gateway serve|proxy`): how it listens
//! ([`Listen`]), the runtime it runs on ([`runtime`]), the log of its events ([`Listen::log_writer`]), and serving
//! a backend until the session ends ([`serve`]). Kept here so that every front end serves the same way.

use crate::{Backend, HttpOptions, McpFrontError};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What went wrong starting or running an MCP front; the message names the flag to fix where there is one.
#[derive(Debug, thiserror::Error)]
pub enum FrontError {
    /// The async runtime could not start.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// The event log (`--log`) cannot be opened for appending.
    #[error("--log: cannot open {}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Serving over stdio failed.
    #[error("serving MCP over stdio")]
    Stdio(#[source] McpFrontError),
    /// The HTTP front (`--http`) could not start.
    #[error("--http")]
    Http(#[source] McpFrontError),
}

/// How an MCP front listens: over stdio, unless an HTTP address is given, and where its events are logged.
#[derive(Debug, Clone)]
pub struct Listen {
    /// Serve over streamable HTTP on this address (the endpoint is `/mcp`) instead of stdio.
    pub http: Option<SocketAddr>,
    /// Bearer token HTTP clients must send; an empty one counts as none.
    pub token: Option<String>,
    /// Largest HTTP request body accepted, in bytes.
    pub max_body: usize,
    /// HTTP requests accepted per second (beyond: 429).
    pub rate: u32,
    /// Append every gateway event to this file as JSON lines.
    pub log: Option<PathBuf>,
}

impl Listen {
    /// How a front end's flags say to listen (`--http`, `--token`, `--max-body`, `--rate`, `--log`).
    pub fn new(
        http: Option<SocketAddr>,
        token: Option<String>,
        max_body: usize,
        rate: u32,
        log: Option<PathBuf>,
    ) -> Listen {
        Listen {
            http,
            token,
            max_body,
            rate,
            log,
        }
    }

    /// The HTTP front's options for listening on `bind`; the limits not given here keep their defaults.
    fn http_options(&self, bind: SocketAddr) -> HttpOptions {
        HttpOptions {
            bind,
            token: self.token.clone().filter(|t| !t.is_empty()),
            max_body: self.max_body,
            rate_per_sec: self.rate,
            ..Default::default()
        }
    }

    /// The event log opened for appending (created if missing), if one is asked for.
    pub fn log_writer(&self) -> Result<Option<Box<dyn Write + Send>>, FrontError> {
        let Some(path) = &self.log else {
            return Ok(None);
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| FrontError::Log {
                path: path.clone(),
                source,
            })?;
        Ok(Some(Box::new(std::io::BufWriter::new(file))))
    }
}

/// The runtime a front runs on.
pub fn runtime() -> Result<tokio::runtime::Runtime, FrontError> {
    // One thread: a call hops between several tasks (transport, session, handler, upstream client), and
    // hops on one thread cost no cross-thread wake-ups; the gateway mediates one call at a time anyway.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(FrontError::Runtime)
}

/// Serves `backend` (named `name`; `encode`: tool names in wire form) as `listen` says, until stdin closes
/// (stdio) or the process is interrupted (HTTP). Over HTTP, `ready` is told the endpoint's URL once the server
/// listens and the stop handlers are installed, so a client may stop the server as soon as it reads the URL.
pub fn serve<B: Backend>(
    rt: &tokio::runtime::Runtime,
    backend: Arc<B>,
    name: &str,
    encode: bool,
    listen: &Listen,
    ready: impl FnOnce(&str),
) -> Result<(), FrontError> {
    match listen.http {
        None => rt
            .block_on(crate::serve_stdio(backend, name, encode))
            .map_err(FrontError::Stdio),
        Some(addr) => rt.block_on(async {
            let server = crate::serve_http(backend, name, encode, listen.http_options(addr))
                .await
                .map_err(FrontError::Http)?;
            // Handlers first: a client may stop the server as soon as it reads the URL.
            let stop = crate::stop_signal();
            ready(&server.url());
            stop.await;
            server.stop().await;
            Ok(())
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_token_is_none_and_an_unopenable_log_names_the_flag_and_file() {
        let listen = Listen {
            http: None,
            token: Some(String::new()),
            max_body: 7,
            rate: 3,
            log: Some(PathBuf::from("/nonexistent-dir/gauntlet/log.jsonl")),
        };
        let o = listen.http_options(SocketAddr::from(([127, 0, 0, 1], 0)));
        assert_eq!(
            (o.token, o.max_body, o.rate_per_sec),
            (None, 7, 3),
            "the flags reach the HTTP front"
        );
        let Err(e) = listen.log_writer() else {
            panic!("a log in a missing directory cannot be opened")
        };
        assert_eq!(
            e.to_string(),
            "--log: cannot open /nonexistent-dir/gauntlet/log.jsonl"
        );
        assert!(
            std::error::Error::source(&e).is_some(),
            "the io::Error stays in the chain"
        );
        let none = Listen {
            log: None,
            ..listen
        };
        assert!(matches!(none.log_writer(), Ok(None)));
    }
}
