//! The pool every job talks to: one per role (target, attacker, judge). It bounds concurrency, keeps to
//! requests- and tokens-per-minute limits, retries rate limits, server errors, timeouts and malformed replies
//! with exponential backoff and jitter (honouring `Retry-After`), enforces a per-request timeout, counts tokens
//! and cost in a ledger, stops new work cleanly when the budget is spent, and answers from the response cache.

use crate::cache::{Cache, CacheMode};
use crate::error::LlmError;
use crate::types::{ChatModel, ChatRequest, ChatResponse, ModelFuture};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Pool limits and prices.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests per minute (none: unlimited).
    pub rpm: Option<u32>,
    /// Tokens per minute, prompt + completion (none: unlimited).
    pub tpm: Option<u64>,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Per-request timeout.
    pub timeout: Duration,
    /// First backoff delay; doubles each retry.
    pub backoff_base: Duration,
    /// Longest backoff delay (and longest `Retry-After` honoured).
    pub backoff_max: Duration,
    /// USD per million prompt tokens.
    pub price_in: f64,
    /// USD per million completion tokens.
    pub price_out: f64,
    /// Stop sending new requests once this much has been spent (USD).
    pub budget: Option<f64>,
    /// The reply limit of this pool's role, replacing the limit each request asks for (none: the request's own).
    pub max_tokens: Option<u32>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            concurrency: 16,
            rpm: None,
            tpm: None,
            max_retries: 6,
            timeout: Duration::from_secs(120),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(60),
            price_in: 0.0,
            price_out: 0.0,
            budget: None,
            max_tokens: None,
        }
    }
}

/// Counters of everything a pool did. Shared, lock-free.
#[derive(Debug, Default)]
pub struct Ledger {
    requests: AtomicU64,
    ok: AtomicU64,
    retries: AtomicU64,
    rate_limited: AtomicU64,
    server_errors: AtomicU64,
    timeouts: AtomicU64,
    malformed: AtomicU64,
    other_errors: AtomicU64,
    cache_hits: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    /// Cost in millionths of a dollar.
    micro_usd: AtomicU64,
    retry_wait_ms: AtomicU64,
    fail_fast: AtomicU64,
    truncated: AtomicU64,
    stopped: AtomicU64,
}

/// A copy of a ledger's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LedgerSnapshot {
    /// Requests sent over the network (every attempt).
    pub requests: u64,
    /// Successful responses.
    pub ok: u64,
    /// Retries.
    pub retries: u64,
    /// 429 responses.
    pub rate_limited: u64,
    /// 5xx responses.
    pub server_errors: u64,
    /// Requests that timed out.
    pub timeouts: u64,
    /// Responses that could not be parsed.
    pub malformed: u64,
    /// Other failures (connection, 4xx).
    pub other_errors: u64,
    /// Responses served from the cache.
    pub cache_hits: u64,
    /// Prompt tokens of successful responses.
    pub prompt_tokens: u64,
    /// Completion tokens of successful responses.
    pub completion_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
    /// Total time spent waiting before retries, in milliseconds.
    pub retry_wait_ms: u64,
    /// Connection failures returned without retrying because the provider was already found unreachable.
    pub fail_fast: u64,
    /// Replies cut at the token limit (each retried once with twice the limit).
    pub truncated: u64,
    /// Requests not sent because the circuit breaker had stopped the pool.
    pub stopped: u64,
}

impl Ledger {
    /// The counters now.
    pub fn snapshot(&self) -> LedgerSnapshot {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LedgerSnapshot {
            requests: g(&self.requests),
            ok: g(&self.ok),
            retries: g(&self.retries),
            rate_limited: g(&self.rate_limited),
            server_errors: g(&self.server_errors),
            timeouts: g(&self.timeouts),
            malformed: g(&self.malformed),
            other_errors: g(&self.other_errors),
            cache_hits: g(&self.cache_hits),
            prompt_tokens: g(&self.prompt_tokens),
            completion_tokens: g(&self.completion_tokens),
            cost_usd: g(&self.micro_usd) as f64 / 1e6,
            retry_wait_ms: g(&self.retry_wait_ms),
            fail_fast: g(&self.fail_fast),
            truncated: g(&self.truncated),
            stopped: g(&self.stopped),
        }
    }

    /// Adds counters spent earlier (by the processes before a resumed run's), so that the totals, and the
    /// budget, cover the whole run.
    pub fn carry(&self, earlier: &LedgerSnapshot) {
        let add = |a: &AtomicU64, v: u64| {
            a.fetch_add(v, Ordering::Relaxed);
        };
        add(&self.requests, earlier.requests);
        add(&self.ok, earlier.ok);
        add(&self.retries, earlier.retries);
        add(&self.rate_limited, earlier.rate_limited);
        add(&self.server_errors, earlier.server_errors);
        add(&self.timeouts, earlier.timeouts);
        add(&self.malformed, earlier.malformed);
        add(&self.other_errors, earlier.other_errors);
        add(&self.cache_hits, earlier.cache_hits);
        add(&self.prompt_tokens, earlier.prompt_tokens);
        add(&self.completion_tokens, earlier.completion_tokens);
        if earlier.cost_usd.is_finite() && earlier.cost_usd > 0.0 {
            add(&self.micro_usd, (earlier.cost_usd * 1e6).round() as u64);
        }
        add(&self.retry_wait_ms, earlier.retry_wait_ms);
        add(&self.fail_fast, earlier.fail_fast);
        add(&self.truncated, earlier.truncated);
        add(&self.stopped, earlier.stopped);
    }

    fn count_error(&self, e: &LlmError) {
        let c = match e {
            LlmError::RateLimited { .. } => &self.rate_limited,
            LlmError::Server { .. } => &self.server_errors,
            LlmError::Timeout(_) => &self.timeouts,
            LlmError::Malformed(_) => &self.malformed,
            _ => &self.other_errors,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// Sliding one-minute windows for the rate limits.
#[derive(Debug, Default)]
struct Windows {
    requests: VecDeque<Instant>,
    tokens: VecDeque<(Instant, u64)>,
}

/// A model behind limits, retries, a ledger, a budget and a cache. Implements [`ChatModel`] itself.
pub struct Pool {
    inner: Arc<dyn ChatModel>,
    cfg: PoolConfig,
    sem: Semaphore,
    ledger: Arc<Ledger>,
    cache: Option<Cache>,
    windows: Mutex<Windows>,
    jitter: AtomicU64,
    /// Per cache key, serializes identical requests while recording.
    inflight: Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Set when a request has spent all its retries failing to connect, cleared by any success. While set,
    /// connection failures are not retried, so a run against an unreachable provider fails in seconds
    /// instead of spending the whole backoff schedule on every request.
    unreachable: std::sync::atomic::AtomicBool,
    /// The circuit breaker: whether any request has succeeded, how many have been refused with a status that
    /// says the configuration is wrong (401, 404, 407), and, once [`BREAKER_AFTER`] have been and none
    /// succeeded, why requests are no longer sent.
    succeeded: std::sync::atomic::AtomicBool,
    refused: std::sync::atomic::AtomicU32,
    stopped: Mutex<Option<String>>,
}

/// Refusals (401, 404, 407) with no success before them after which a pool stops sending: a wrong key,
/// model name or address refuses every request, and a run should stop and say so rather than error every episode.
pub const BREAKER_AFTER: u32 = 3;

/// What to check for a status that refuses every request.
fn fix_for(status: u16) -> &'static str {
    match status {
        401 => {
            "check the API key (the provider's variable, e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY) is set and valid"
        }
        403 => "check the API key's permissions and the account's access to this model",
        404 => {
            "check the model name and the base URL (e.g. OPENAI_BASE_URL); a proxy in between may answer 404 for hosts it does not pass"
        }
        _ => "check the proxy's credentials",
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("model", &self.inner.name())
            .field("cfg", &self.cfg)
            .finish()
    }
}

/// A rough token estimate of a request (4 characters a token), for the tokens-per-minute limit.
fn estimate_tokens(req: &ChatRequest) -> u64 {
    let chars: usize = req
        .messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    (chars / 4) as u64 + 16
}

impl Pool {
    /// A pool over `inner`.
    pub fn new(inner: Arc<dyn ChatModel>, cfg: PoolConfig, cache: Option<Cache>) -> Pool {
        let permits = cfg.concurrency.max(1);
        Pool {
            inner,
            sem: Semaphore::new(permits),
            cfg,
            ledger: Arc::new(Ledger::default()),
            cache,
            windows: Mutex::new(Windows::default()),
            inflight: Mutex::new(Default::default()),
            jitter: AtomicU64::new(0x9e37_79b9),
            unreachable: std::sync::atomic::AtomicBool::new(false),
            succeeded: std::sync::atomic::AtomicBool::new(false),
            refused: std::sync::atomic::AtomicU32::new(0),
            stopped: Mutex::new(None),
        }
    }

    /// Why this pool stopped sending requests, once its circuit breaker has tripped: [`BREAKER_AFTER`] requests
    /// refused with 401, 404 or 407 and none succeeded (never once a request has succeeded). A caller running many requests (a run, a red team)
    /// stops early on it instead of erroring every one.
    pub fn stopped(&self) -> Option<String> {
        if self.succeeded.load(Ordering::Acquire) {
            return None;
        }
        self.stopped.lock().ok().and_then(|s| s.clone())
    }

    /// Counts a refusal toward the breaker (only while no request has succeeded).
    fn count_refusal(&self, e: &LlmError) {
        let LlmError::Http { status, body } = e else {
            return;
        };
        // 403 is left out: some providers answer content they moderate with it, which a red team provokes.
        if !matches!(status, 401 | 404 | 407) || self.succeeded.load(Ordering::Acquire) {
            return;
        }
        let n = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= BREAKER_AFTER
            && let Ok(mut stopped) = self.stopped.lock()
            && stopped.is_none()
            && !self.succeeded.load(Ordering::Acquire)
        {
            *stopped = Some(format!(
                "{} answered HTTP {status} to {n} requests and none succeeded ({}); fix: {}",
                self.inner.name(),
                body.chars().take(160).collect::<String>(),
                fix_for(*status)
            ));
        }
    }

    /// The ledger.
    pub fn ledger(&self) -> Arc<Ledger> {
        self.ledger.clone()
    }

    /// The backoff before retry `attempt` (from 1): base·2^(attempt-1), capped, with ±25 % jitter.
    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .cfg
            .backoff_base
            .saturating_mul(1u32 << (attempt - 1).min(16));
        let capped = exp.min(self.cfg.backoff_max);
        // xorshift jitter: spreads retries of concurrent requests apart.
        let mut x = self.jitter.fetch_add(0x6a09_e667, Ordering::Relaxed) | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let factor = 0.75 + (x % 1000) as f64 / 2000.0;
        capped.mul_f64(factor)
    }

    /// Waits until the rate limits allow a request of `tokens`.
    async fn admit(&self, tokens: u64) {
        loop {
            let wait = {
                let Ok(mut w) = self.windows.lock() else {
                    return;
                };
                let now = Instant::now();
                let minute = Duration::from_secs(60);
                while w
                    .requests
                    .front()
                    .is_some_and(|t| now.duration_since(*t) >= minute)
                {
                    w.requests.pop_front();
                }
                while w
                    .tokens
                    .front()
                    .is_some_and(|(t, _)| now.duration_since(*t) >= minute)
                {
                    w.tokens.pop_front();
                }
                let used: u64 = w.tokens.iter().map(|(_, n)| n).sum();
                let rpm_wait = match (self.cfg.rpm, w.requests.front()) {
                    (Some(rpm), Some(first)) if w.requests.len() as u64 >= u64::from(rpm) => {
                        Some(minute - now.duration_since(*first))
                    }
                    _ => None,
                };
                let tpm_wait = match (self.cfg.tpm, w.tokens.front()) {
                    (Some(tpm), Some((first, _))) if used + tokens > tpm => {
                        Some(minute - now.duration_since(*first))
                    }
                    _ => None,
                };
                match rpm_wait.max(tpm_wait) {
                    Some(d) => d,
                    None => {
                        if self.cfg.rpm.is_some() {
                            w.requests.push_back(now);
                        }
                        if self.cfg.tpm.is_some() {
                            w.tokens.push_back((now, tokens));
                        }
                        return;
                    }
                }
            };
            tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
        }
    }

    /// The budget in USD, if one was set.
    pub fn budget(&self) -> Option<f64> {
        self.cfg.budget
    }

    fn over_budget(&self) -> Option<String> {
        let budget = self.cfg.budget?;
        let spent = self.ledger.micro_usd.load(Ordering::Relaxed) as f64 / 1e6;
        (spent >= budget)
            .then(|| format!("spent ${spent:.4} of ${budget:.4} on {}", self.inner.name()))
    }

    async fn send(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let limited;
        let req = match self.cfg.max_tokens {
            Some(m) if req.max_tokens != Some(m) => {
                limited = ChatRequest {
                    max_tokens: Some(m),
                    ..req.clone()
                };
                &limited
            }
            _ => req,
        };
        let resp = self.send_cached(req).await?;
        if !truncated(&resp) {
            return Ok(resp);
        }
        // A reply cut at the limit is incomplete (a JSON verdict, a tool call's arguments): once, ask again with
        // twice the room; if that is cut too, the reply is not used. A reply cut at the provider's own limit
        // (none was sent) cannot be given more room from here: it is not used either.
        self.ledger.truncated.fetch_add(1, Ordering::Relaxed);
        let Some(sent) = req.max_tokens else {
            return Err(LlmError::Truncated { limit: 0 });
        };
        let limit = sent.saturating_mul(2);
        let wider = ChatRequest {
            max_tokens: Some(limit),
            ..req.clone()
        };
        let resp = self.send_cached(&wider).await?;
        if truncated(&resp) {
            self.ledger.truncated.fetch_add(1, Ordering::Relaxed);
            return Err(LlmError::Truncated { limit });
        }
        Ok(resp)
    }

    async fn send_cached(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let key = self
            .cache
            .as_ref()
            .map(|_| Cache::key(self.inner.name(), req));
        // Recording: identical requests in flight at once wait for the first, then read its cached answer, so
        // a recorded run is self-consistent and its replay gives the same bytes.
        let flight = key.as_ref().and_then(|k| {
            self.inflight
                .lock()
                .ok()
                .map(|mut m| (k.clone(), m.entry(k.clone()).or_default().clone()))
        });
        let guard = match &flight {
            Some((_, l)) => Some(l.clone().lock_owned().await),
            None => None,
        };
        let result = self.send_once(req, key).await;
        drop(guard);
        if let Some((k, l)) = flight
            && let Ok(mut m) = self.inflight.lock()
        {
            // Nobody else waits on this key: forget it, so the map does not grow with the run.
            if Arc::strong_count(&l) <= 2 {
                m.remove(&k);
            }
        }
        result
    }

    async fn send_once(
        &self,
        req: &ChatRequest,
        key: Option<String>,
    ) -> Result<ChatResponse, LlmError> {
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            if let Some(hit) = cache.get(key) {
                self.ledger.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(hit);
            }
            if cache.mode() == CacheMode::Replay {
                return Err(LlmError::CacheMiss(format!(
                    "{} request {}",
                    self.inner.name(),
                    &key[..16]
                )));
            }
        }
        let mut attempt = 0u32;
        loop {
            if let Some(why) = self.over_budget() {
                return Err(LlmError::Budget(why));
            }
            if let Some(why) = self.stopped() {
                self.ledger.stopped.fetch_add(1, Ordering::Relaxed);
                return Err(LlmError::Stopped(why));
            }
            let result = {
                let _permit = self
                    .sem
                    .acquire()
                    .await
                    .map_err(|_| LlmError::Config("pool closed".into()))?;
                self.admit(estimate_tokens(req)).await;
                // A request that waited for its turn while the breaker tripped is not sent either.
                if let Some(why) = self.stopped() {
                    self.ledger.stopped.fetch_add(1, Ordering::Relaxed);
                    return Err(LlmError::Stopped(why));
                }
                self.ledger.requests.fetch_add(1, Ordering::Relaxed);
                match tokio::time::timeout(self.cfg.timeout, self.inner.chat(req)).await {
                    Ok(r) => r,
                    Err(_) => Err(LlmError::Timeout(self.cfg.timeout)),
                }
            };
            match result {
                Ok(resp) => {
                    self.unreachable.store(false, Ordering::Relaxed);
                    self.succeeded.store(true, Ordering::Release);
                    let l = &self.ledger;
                    l.ok.fetch_add(1, Ordering::Relaxed);
                    l.prompt_tokens
                        .fetch_add(resp.usage.prompt_tokens, Ordering::Relaxed);
                    l.completion_tokens
                        .fetch_add(resp.usage.completion_tokens, Ordering::Relaxed);
                    let cost = resp.usage.prompt_tokens as f64 * self.cfg.price_in
                        + resp.usage.completion_tokens as f64 * self.cfg.price_out;
                    // Prices are per million tokens; the ledger counts millionths of a dollar.
                    l.micro_usd
                        .fetch_add(cost.round() as u64, Ordering::Relaxed);
                    if let (Some(cache), Some(key)) = (&self.cache, &key) {
                        cache.put(key, &resp)?;
                    }
                    return Ok(resp);
                }
                Err(e) => {
                    self.ledger.count_error(&e);
                    self.count_refusal(&e);
                    let connect = matches!(e, LlmError::Connect(_));
                    if connect && self.unreachable.load(Ordering::Relaxed) {
                        self.ledger.fail_fast.fetch_add(1, Ordering::Relaxed);
                        return Err(LlmError::Connect(format!(
                            "{}; not retried: {} could not be reached by an earlier request after {} retries",
                            match e {
                                LlmError::Connect(m) => m,
                                _ => String::new(),
                            },
                            self.inner.name(),
                            self.cfg.max_retries
                        )));
                    }
                    if !e.retryable() || attempt >= self.cfg.max_retries {
                        if connect {
                            self.unreachable.store(true, Ordering::Relaxed);
                        }
                        return Err(e);
                    }
                    attempt += 1;
                    self.ledger.retries.fetch_add(1, Ordering::Relaxed);
                    let wait = e
                        .retry_after()
                        .map_or_else(|| self.backoff(attempt), |d| d.min(self.cfg.backoff_max));
                    self.ledger
                        .retry_wait_ms
                        .fetch_add(wait.as_millis() as u64, Ordering::Relaxed);
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

/// Whether the provider says it stopped at the token limit (`length` in the OpenAI API, `max_tokens` in
/// Anthropic's).
fn truncated(resp: &ChatResponse) -> bool {
    matches!(resp.finish_reason.as_str(), "length" | "max_tokens")
}

impl ChatModel for Pool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.send(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ChatRequest, ChatResponse, Message, ModelFuture, Usage};

    /// A model that answers from a script: `true` a reply, `false` an HTTP 404.
    struct Scripted {
        answers: Vec<bool>,
        next: std::sync::atomic::AtomicUsize,
    }

    impl ChatModel for Scripted {
        fn name(&self) -> &str {
            "scripted/model"
        }
        fn chat<'a>(&'a self, _: &'a ChatRequest) -> ModelFuture<'a> {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let ok = self.answers.get(i).copied().unwrap_or(false);
            Box::pin(async move {
                if ok {
                    Ok(ChatResponse {
                        content: "ok".into(),
                        tool_calls: vec![],
                        usage: Usage::default(),
                        finish_reason: "stop".into(),
                    })
                } else {
                    Err(LlmError::Http {
                        status: 404,
                        body: "no such model".into(),
                    })
                }
            })
        }
    }

    fn pool(answers: Vec<bool>) -> Pool {
        let inner = Arc::new(Scripted {
            answers,
            next: Default::default(),
        });
        Pool::new(inner, PoolConfig::default(), None)
    }

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user("hi")],
            tools: vec![].into(),
            response_schema: None,
            temperature: None,
            max_tokens: None,
        }
    }

    /// A model whose first `cut` replies stop at the token limit; it records the limit of every request.
    struct Cut {
        cut: usize,
        limits: Mutex<Vec<Option<u32>>>,
    }

    impl ChatModel for Cut {
        fn name(&self) -> &str {
            "cut/model"
        }
        fn chat<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
            let n = self
                .limits
                .lock()
                .map(|mut l| {
                    l.push(req.max_tokens);
                    l.len()
                })
                .unwrap_or(0);
            let finish = if n <= self.cut { "length" } else { "stop" };
            Box::pin(async move {
                Ok(ChatResponse {
                    content: "{\"score\": 1, \"reas".into(),
                    tool_calls: vec![],
                    usage: Usage::default(),
                    finish_reason: finish.into(),
                })
            })
        }
    }

    #[tokio::test]
    async fn a_cut_reply_is_asked_again_with_twice_the_room_then_refused() {
        let cfg = PoolConfig {
            max_tokens: Some(300),
            ..PoolConfig::default()
        };
        let once = Arc::new(Cut {
            cut: 1,
            limits: Mutex::new(vec![]),
        });
        let p = Pool::new(once.clone(), cfg.clone(), None);
        assert!(p.chat(&request()).await.is_ok());
        let seen = once.limits.lock().map(|l| l.clone()).unwrap_or_default();
        assert_eq!(
            seen,
            vec![Some(300), Some(600)],
            "the role's limit, then twice it"
        );
        assert_eq!(p.ledger().snapshot().truncated, 1);
        let always = Arc::new(Cut {
            cut: usize::MAX,
            limits: Mutex::new(vec![]),
        });
        let p = Pool::new(always, cfg, None);
        let r = p.chat(&request()).await;
        assert!(
            matches!(r, Err(LlmError::Truncated { limit: 600 })),
            "{r:?}"
        );
        assert!(
            r.err()
                .is_some_and(|e| e.to_string().contains("pool.max_tokens")),
            "the error says which setting raises it"
        );
    }

    #[tokio::test]
    async fn the_breaker_trips_only_when_no_request_ever_succeeded() {
        let p = pool(vec![false, false, false, true]);
        for _ in 0..BREAKER_AFTER {
            assert!(matches!(
                p.chat(&request()).await,
                Err(LlmError::Http { .. })
            ));
        }
        assert!(
            p.stopped()
                .is_some_and(|w| w.contains("scripted/model answered HTTP 404 to 3"))
        );
        assert!(matches!(
            p.chat(&request()).await,
            Err(LlmError::Stopped(_))
        ));
        // A model that answered once: later refusals are about those requests, not the configuration.
        let p = pool(vec![true, false, false, false, false]);
        assert!(p.chat(&request()).await.is_ok());
        for _ in 0..4 {
            assert!(matches!(
                p.chat(&request()).await,
                Err(LlmError::Http { .. })
            ));
        }
        assert!(p.stopped().is_none());
    }
}
