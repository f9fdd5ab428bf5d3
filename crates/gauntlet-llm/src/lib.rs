//! Models: one [`ChatModel`] interface (messages, tool definitions, tool calls, structured JSON output) with
//! providers for the OpenAI-compatible chat-completions API and the Anthropic messages API, and the [`Pool`]
//! that every job talks to — concurrency and rate limits, retries with backoff that honour `Retry-After`,
//! per-request timeouts, a token and cost ledger with an optional budget, and a content-addressed response
//! cache for record/replay.
//!
//! API keys are read from environment variables (or a `.env` file, [`env`]) when a provider is built and are never
//! written anywhere:
//! not to the cache (requests are keyed without headers), not to logs, not to reports.

#[cfg(feature = "http")]
pub mod anthropic;
pub mod cache;
pub mod env;
pub mod error;
#[cfg(feature = "http")]
pub mod openai;
pub mod pool;
#[cfg(feature = "http")]
pub mod preflight;
pub mod spec;
pub mod types;

pub use cache::{Cache, CacheMode};
pub use error::{LlmError, ModelStopped};
pub use pool::{BREAKER_AFTER, Ledger, LedgerSnapshot, Pool, PoolConfig};
#[cfg(feature = "http")]
pub use spec::build_model;
pub use spec::{ModelSpec, ProviderConfig};
pub use types::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelFuture, Role, ToolCallOut, ToolDef, Usage,
};

/// The redirects every HTTP client of Gauntlet follows (models, HTTP targets): those within the origin of the request
/// (scheme, host and port), at most 10. A redirect to another origin is not followed, so the credentials a request
/// carries — an API key, configured headers such as `X-Api-Key: $APP_TOKEN` — never reach a host they were not
/// configured for; the 3xx is answered to the caller, which reports it as the error it then is.
#[cfg(feature = "http")]
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().first().map(reqwest::Url::origin);
        if from.as_ref() != Some(&attempt.url().origin()) {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

/// Bytes of an HTTP reply body read at most (model providers, HTTP apps): a longer one is an error of that request,
/// never an allocation of the size the peer chose.
#[cfg(feature = "http")]
pub const MAX_REPLY: usize = 16 << 20;

/// Why a reply body could not be read.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The body is (or was announced) longer than [`MAX_REPLY`].
    #[error("{0}")]
    TooLong(String),
    /// The connection failed while the body was read (worth retrying, as any transport failure).
    #[error("reading the reply failed: {0}")]
    Transport(String),
}

/// Reads `resp`'s body as text, at most [`MAX_REPLY`] bytes (a longer or announced-longer body is an error).
#[cfg(feature = "http")]
pub async fn read_capped(mut resp: reqwest::Response) -> Result<String, ReadError> {
    if let Some(n) = resp.content_length().filter(|n| *n > MAX_REPLY as u64) {
        return Err(ReadError::TooLong(format!(
            "the reply announced {n} bytes; replies are read up to {MAX_REPLY}"
        )));
    }
    let mut buf = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ReadError::Transport(error::describe_transport(&e)))?
    {
        if buf.len() + chunk.len() > MAX_REPLY {
            return Err(ReadError::TooLong(format!(
                "the reply is longer than {MAX_REPLY} bytes, the most read"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Where a redirect pointed, as its origin (scheme, host, port) only: its path and query may carry what the request
/// sent (a key echoed into a URL), and errors are stored and printed.
#[cfg(feature = "http")]
pub fn redirect_origin(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| reqwest::Url::parse(v).ok())
        .map_or_else(
            || "an address it did not give as an absolute URL".to_string(),
            |u| u.origin().ascii_serialization(),
        )
}

/// Installs the `ring` crypto provider for rustls (once per process). Building an HTTPS client without a
/// provider panics, so every client in this crate calls this first.
#[cfg(feature = "http")]
pub fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use std::io::{BufRead, BufReader, Write};

    /// A one-shot HTTP server on loopback: answers every request with `answer` and sends each request's head
    /// (request line and headers, lowercased) down the channel.
    pub(crate) fn server(answer: String) -> (u16, std::sync::mpsc::Receiver<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener
            .local_addr()
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut head = String::new();
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    head.push_str(&line.to_lowercase());
                    line.clear();
                }
                let _ = tx.send(head);
                let _ = (&stream).write_all(answer.as_bytes());
            }
        });
        (port, rx)
    }

    #[test]
    fn a_redirect_to_another_origin_is_not_followed_and_carries_no_credential() {
        let (elsewhere, seen_elsewhere) =
            server("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".into());
        let (here, seen_here) = server(format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{elsewhere}/v1/chat/completions\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ));
        let client = crate::openai::client().unwrap_or_else(|e| panic!("{e}"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let status = rt
            .block_on(
                client
                    .post(format!("http://127.0.0.1:{here}/v1/chat/completions"))
                    .header("x-api-key", "sk-secret")
                    .header("authorization", "Bearer sk-secret")
                    .body("{}")
                    .send(),
            )
            .map(|r| r.status().as_u16());
        assert_eq!(
            status.ok(),
            Some(307),
            "the redirect is answered, not followed"
        );
        let head = seen_here
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_default();
        assert!(head.contains("x-api-key: sk-secret"), "{head}");
        assert!(
            seen_elsewhere
                .recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the other origin was asked"
        );
    }

    /// A reply body is read up to `MAX_REPLY`: one announced longer is refused before it is read, and a chunked
    /// one that grows past it is cut off with an error, never held whole.
    #[test]
    fn reply_bodies_are_read_up_to_the_cap() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let client = crate::openai::client().unwrap_or_else(|e| panic!("{e}"));
        let read = |answer: String| {
            let (port, _) = server(answer);
            rt.block_on(async {
                let r = client
                    .post(format!("http://127.0.0.1:{port}/"))
                    .body("{}")
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                crate::read_capped(r).await.map_err(|e| e.to_string())
            })
        };
        let huge = read(
            "HTTP/1.1 200 OK\r\ncontent-length: 4611686018427387904\r\nconnection: close\r\n\r\n"
                .into(),
        );
        assert!(
            huge.as_ref()
                .is_err_and(|e| e.contains("announced 4611686018427387904 bytes")),
            "{huge:?}"
        );
        let chunk = "Z".repeat(1 << 20);
        let mut body = String::from(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        );
        for _ in 0..17 {
            body.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
        }
        body.push_str("0\r\n\r\n");
        let long = read(body);
        assert!(
            long.as_ref()
                .is_err_and(|e| e.contains("longer than 16777216 bytes")),
            "{:?}",
            long.map(|t| t.len())
        );
        let ok = read("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".into());
        assert_eq!(ok.ok().as_deref(), Some("{}"));
    }

    /// A redirect error names where it pointed by origin only: a key echoed into the path or query stays out.
    #[test]
    fn a_redirect_is_named_by_its_origin_alone() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            reqwest::header::LOCATION,
            reqwest::header::HeaderValue::from_static(
                "http://127.0.0.1:1/steal?k=Bearer%20sk-live-0123456789",
            ),
        );
        assert_eq!(crate::redirect_origin(&h), "http://127.0.0.1:1");
        h.insert(
            reqwest::header::LOCATION,
            reqwest::header::HeaderValue::from_static("/relative?k=sk-live-0123456789"),
        );
        assert!(!crate::redirect_origin(&h).contains("sk-live"));
    }
}
