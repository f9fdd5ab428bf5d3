//! Model errors.

use std::time::Duration;

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
