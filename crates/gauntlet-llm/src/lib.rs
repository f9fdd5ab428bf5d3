//! Models: one [`ChatModel`] interface (messages, tool definitions, tool calls, structured JSON output) with
//! providers for the OpenAI-compatible chat-completions API and the Anthropic messages API, and the [`Pool`]
//! that every job talks to — concurrency and rate limits, retries with backoff that honour `Retry-After`,
//! per-request timeouts, a token and cost ledger with an optional budget, and a content-addressed response
//! cache for record/replay.
//!
//! API keys are read from environment variables (or a `.env` file, [`env`]) when a provider is built and are never
//! written anywhere:
//! not to the cache (requests are keyed without headers), not to logs, not to reports.

pub mod anthropic;
pub mod cache;
pub mod env;
pub mod error;
pub mod openai;
pub mod pool;
pub mod preflight;
pub mod spec;
pub mod types;

pub use cache::{Cache, CacheMode};
pub use error::{LlmError, ModelStopped};
pub use pool::{BREAKER_AFTER, Ledger, LedgerSnapshot, Pool, PoolConfig};
pub use spec::{ModelSpec, ProviderConfig, build_model};
pub use types::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelFuture, Role, ToolCallOut, ToolDef, Usage,
};

/// Installs the `ring` crypto provider for rustls (once per process). Building an HTTPS client without a
/// provider panics, so every client in this crate calls this first.
pub fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
