//! Model errors.

use std::time::Duration;

/// `text` with every secret in `secrets` (API keys, configured header values) replaced by `[REDACTED]`, and so the
/// token of a `Bearer TOKEN` or `Basic TOKEN` value alone; values shorter than 8 characters are not secrets worth
/// the name and are left (redacting them would garble ordinary text).
pub fn redact<'s>(text: &str, secrets: impl IntoIterator<Item = &'s str>) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        let token = secret.rsplit(' ').next().unwrap_or(secret);
        for s in [secret, token] {
            if s.len() >= 8 && out.contains(s) {
                out = out.replace(s, "[REDACTED]");
            }
        }
    }
    out
}

/// Why a model request failed. Retryable kinds are retried by the pool; the rest end the request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// 429: too many requests; the server's `Retry-After`, if any.
    #[error("rate limited (HTTP 429){}", retry_after.map(|d| format!(", retry after {} ms", d.as_millis())).unwrap_or_default())]
    RateLimited {
        /// How long the server asked to wait.
        retry_after: Option<Duration>,
    },
    /// 5xx.
    #[error("server error (HTTP {status}): {body}")]
    Server {
        /// HTTP status.
        status: u16,
        /// Start of the body.
        body: String,
        /// How long the server asked to wait.
        retry_after: Option<Duration>,
    },
    /// No response within the per-request timeout.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The connection failed.
    #[error("connection failed: {0}")]
    Connect(String),
    /// The response could not be understood.
    #[error("malformed response: {0}")]
    Malformed(String),
    /// Any other HTTP error (4xx other than 429: bad request, bad key, unknown model).
    #[error("HTTP {status}: {body}")]
    Http {
        /// HTTP status.
        status: u16,
        /// Start of the body.
        body: String,
    },
    /// The budget is spent: no new requests are sent.
    #[error("budget exhausted: {0}")]
    Budget(String),
    /// Replay mode and the response is not in the cache.
    #[error("not in the response cache (replay mode): {0}")]
    CacheMiss(String),
    /// The model spec or configuration is unusable.
    #[error("{0}")]
    Config(String),
    /// The reply was cut at the token limit, also after one retry with twice the limit: its text is incomplete and
    /// its tool calls may be, so it is not used.
    #[error("{}", truncated_text(*limit))]
    Truncated {
        /// The last limit tried (0: the provider's own, none was sent).
        limit: u32,
    },
    /// Not sent: the pool's circuit breaker stopped requests to this model after it refused every one (see
    /// [`crate::Pool::stopped`]).
    #[error("not sent: {0}")]
    Stopped(String),
}

impl LlmError {
    /// Whether the pool should retry.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Timeout(_)
                | LlmError::Connect(_)
                | LlmError::Malformed(_)
        )
    }

    /// The wait the server asked for.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after } | LlmError::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}

/// A transport error as a user can act on it: the endpoint's `host:port` (never its path or query, which may carry a
/// key), what went wrong (refused, reset, DNS, TLS, timeout) and the innermost cause the network stack gave.
#[cfg(feature = "http")]
pub fn describe_transport(e: &reqwest::Error) -> String {
    let at = e
        .url()
        .and_then(|u| {
            let host = u.host_str()?;
            Some(match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_string(),
            })
        })
        .unwrap_or_else(|| "the endpoint".into());
    // The innermost cause is the one that says what happened ("Connection refused (os error 111)"); reqwest's own
    // text would repeat the URL.
    let mut root: Option<&dyn std::error::Error> = None;
    let mut next = std::error::Error::source(e);
    while let Some(cause) = next {
        root = Some(cause);
        next = cause.source();
    }
    let cause = root.map(|c| c.to_string()).unwrap_or_default();
    let lower = cause.to_lowercase();
    let what = if e.is_timeout() {
        "timed out"
    } else if lower.contains("dns") || lower.contains("lookup") || lower.contains("name or service")
    {
        "cannot resolve the host"
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
    {
        "TLS failed"
    } else if lower.contains("refused") {
        "connection refused"
    } else if lower.contains("reset") || lower.contains("broken pipe") {
        "connection reset"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "reading the reply failed"
    } else {
        "request failed"
    };
    if cause.is_empty() {
        format!("{at}: {what}")
    } else {
        format!("{at}: {what} ({cause})")
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_are_redacted_with_the_token_of_an_authorization_value_alone() {
        let text =
            "bad key sk-live-123456789, token abcdefgh12345 (from Bearer abcdefgh12345), id=42";
        let got = redact(text, ["sk-live-123456789", "Bearer abcdefgh12345", "42"]);
        assert_eq!(
            got,
            "bad key [REDACTED], token [REDACTED] (from [REDACTED]), id=42"
        );
        assert_eq!(
            redact("nothing here", ["sk-live-123456789"]),
            "nothing here"
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_refused_connection_names_host_port_and_cause_but_not_the_path() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        // A port nobody listens on: bound, then released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        let url = format!("http://127.0.0.1:{port}/v1/chat?key=SECRET");
        crate::install_crypto();
        let Err(e) = rt.block_on(reqwest::Client::new().get(&url).send()) else {
            panic!("a closed port answered");
        };
        let d = super::describe_transport(&e);
        assert!(
            d.starts_with(&format!("127.0.0.1:{port}: connection refused (")),
            "{d}"
        );
        assert!(!d.contains("SECRET") && !d.contains("/v1"), "{d}");
    }
}

/// A job stopped early because a model's circuit breaker tripped: the cause, for a sink to return as an
/// `io::Error` that the caller recognises ([`ModelStopped::of`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stopped early: {0}")]
pub struct ModelStopped(pub String);

impl ModelStopped {
    /// The stop inside an I/O error a job returned, if that is what it is.
    pub fn of(e: &std::io::Error) -> Option<&ModelStopped> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ModelStopped>())
    }

    /// Err when any of `pools` has stopped sending: a job's sink calls it after each result, so the job ends at
    /// the first result after the trip.
    pub fn check<'a>(mut pools: impl Iterator<Item = &'a crate::Pool>) -> std::io::Result<()> {
        match pools.find_map(crate::Pool::stopped) {
            Some(why) => Err(std::io::Error::other(ModelStopped(why))),
            None => Ok(()),
        }
    }
}

/// The message of [`LlmError::Truncated`].
fn truncated_text(limit: u32) -> String {
    if limit == 0 {
        "reply cut at the provider's own token limit; set one for the role (`pool.max_tokens.ROLE` in --config)".into()
    } else {
        format!(
            "reply cut at the {limit}-token limit (also after a retry with twice the limit); raise the role's limit (`pool.max_tokens.ROLE` in --config)"
        )
    }
}
