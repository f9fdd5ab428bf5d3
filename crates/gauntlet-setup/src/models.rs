//! [`Models`]: one runtime and one pool per (role, model) for a job, and the targets and defenses built on them.

use crate::{Config, SetupError};

/// Pool limits given on the command line; each falls back to the config file's `pool` section.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Model requests in flight per model.
    pub concurrency: Option<usize>,
    /// Per-request timeout in seconds.
    pub timeout: Option<f64>,
    /// Stop sending once this many USD are spent (per model).
    pub budget: Option<f64>,
}

/// A run's model pools, by name (`spec [role]`), shared with the store's writer for their ledgers.
pub type Pools =
    std::sync::Arc<std::sync::Mutex<Vec<(String, std::sync::Arc<gauntlet_llm::Pool>)>>>;

/// The model side of a run: a tokio runtime (created only when a model or HTTP target needs it) and one pool
/// per model, each with its own ledger.
pub struct Models {
    runtime: Option<tokio::runtime::Runtime>,
    pools: Pools,
    /// What each pool spent in the earlier processes of a resumed run, carried into the pool when it is made.
    earlier: std::collections::BTreeMap<String, gauntlet_llm::LedgerSnapshot>,
    pool_cfg: gauntlet_llm::PoolConfig,
    /// Reply limits by role (`pool.max_tokens`).
    role_limits: std::collections::BTreeMap<String, u32>,
    cache: Option<gauntlet_llm::Cache>,
    providers: std::collections::BTreeMap<String, gauntlet_llm::ProviderConfig>,
    /// Every endpoint the job will call, for the preflight check.
    endpoints: std::sync::Mutex<Vec<gauntlet_llm::preflight::Endpoint>>,
}

impl Models {
    /// The models of a job: a runtime if `needs` (a model or an HTTP target), pool limits from `limits` (the
    /// flags), else the config file.
    pub fn build(
        cfg: &Config,
        needs: bool,
        limits: Limits,
        cache: Option<gauntlet_llm::Cache>,
    ) -> Result<Models, SetupError> {
        let runtime = if needs {
            Some(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .map_err(SetupError::Runtime)?,
            )
        } else {
            None
        };
        let p = &cfg.pool;
        let mut pool_cfg = gauntlet_llm::PoolConfig::default();
        if let Some(c) = limits.concurrency.or(p.concurrency) {
            if c == 0 {
                return Err(SetupError::Limit(
                    "--model-concurrency: must be at least 1".into(),
                ));
            }
            pool_cfg.concurrency = c;
        }
        pool_cfg.rpm = p.rpm;
        pool_cfg.tpm = p.tpm;
        if let Some(t) = limits.timeout.or(p.timeout_secs) {
            // `from_secs_f64` panics on a negative, infinite or vast number: a week is the longest a request waits.
            if !(t > 0.0 && t <= 604_800.0) {
                return Err(SetupError::Limit(format!(
                    "timeout {t}: must be a number of seconds above 0 and at most 604800, a week (--timeout, or pool.timeout_secs in --config)"
                )));
            }
            pool_cfg.timeout = std::time::Duration::from_secs_f64(t);
        }
        if let Some(r) = p.max_retries {
            pool_cfg.max_retries = r;
        }
        pool_cfg.budget = limits.budget.or(p.budget_usd);
        if let Some(b) = pool_cfg.budget.filter(|b| !(*b > 0.0 && b.is_finite())) {
            return Err(SetupError::Limit(format!(
                "budget {b}: must be a positive number of USD (--budget, or pool.budget_usd in --config)"
            )));
        }
        if let Some((role, _)) = p.max_tokens.iter().find(|(_, n)| **n == 0) {
            return Err(SetupError::Config(format!(
                "--config: pool.max_tokens.{role}: must be at least 1"
            )));
        }
        if let Some(role) = p
            .max_tokens
            .keys()
            .find(|r| !crate::config::ROLES.contains(&r.as_str()))
        {
            return Err(SetupError::Config(format!(
                "--config: pool.max_tokens.{role}: not a role; roles are {}",
                crate::config::ROLES.join(", ")
            )));
        }
        Ok(Models {
            runtime,
            pools: Default::default(),
            endpoints: Default::default(),
            earlier: Default::default(),
            pool_cfg,
            role_limits: p.max_tokens.clone(),
            cache,
            providers: cfg.providers.clone(),
        })
    }

    /// The models of a privilege job: only model-based defenses need one; pool limits come from the config.
    pub fn for_defenses(cfg: &Config, defenses: &[String]) -> Result<Models, SetupError> {
        let needs = defenses
            .iter()
            .any(|d| gauntlet_defense::is_model_defense(d));
        Models::build(cfg, needs, Limits::default(), None)
    }

    /// Builds a defense, giving a model-based one its own pool (role `defense`) and an external one the request
    /// timeout (`--timeout`) for each answer.
    pub fn defense(&self, spec: &str) -> Result<Box<dyn gauntlet_defense::Defense>, SetupError> {
        let resolve = |model: &str| {
            let pool = self
                .pool("defense", model, "--defense")
                .map_err(|e| format!("{e:#}"))?;
            Ok(gauntlet_defense::ModelLink {
                model: pool,
                runtime: self.handle().map_err(|e| e.to_string())?,
            })
        };
        gauntlet_defense::from_spec(spec, &resolve, self.pool_cfg.timeout)
            .map_err(|e| SetupError::spec("--defense", e))
    }

    /// Whether the job has a runtime (some model or HTTP target needed one).
    pub fn any(&self) -> bool {
        self.runtime.is_some()
    }

    /// How many episodes or cases a job runs at once unless told: the cores, or at least 16 when models are in
    /// play (model targets spend their time waiting on the network).
    pub fn default_workers(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        if self.any() { 16.max(cores) } else { cores }
    }

    /// Notes an endpoint the job will call (`flag spec` at `url`), for [`Models::preflight`]. A model under
    /// `--cache replay` answers from the cache and is never called.
    pub fn expect(&self, flag: &str, spec: &str, url: &str, model: bool) {
        let replayed = self
            .cache
            .as_ref()
            .is_some_and(|c| c.mode() == gauntlet_llm::CacheMode::Replay);
        if model && replayed {
            return;
        }
        if let Ok(mut e) = self.endpoints.lock() {
            e.push(gauntlet_llm::preflight::Endpoint {
                what: format!("{flag} {spec}"),
                url: url.to_string(),
            });
        }
    }

    /// Fails within seconds, naming the endpoint, the cause and the fix, when an endpoint the job will call cannot
    /// be reached at all (one TCP connection per address, all at once, within the request timeout or 10 s).
    pub fn preflight(&self, skip: bool) -> Result<(), SetupError> {
        let endpoints = self.endpoints.lock().map(|e| e.clone()).unwrap_or_default();
        if skip || endpoints.is_empty() {
            return Ok(());
        }
        let timeout = self
            .pool_cfg
            .timeout
            .min(std::time::Duration::from_secs(10));
        let failed = self
            .handle()?
            .block_on(gauntlet_llm::preflight::check(&endpoints, timeout));
        if failed.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = failed
            .iter()
            .map(|u| format!("  {} at {}: {}", u.what.join(", "), u.at, u.cause))
            .collect();
        Err(SetupError::Unreachable(format!(
            "preflight: {} endpoint(s) cannot be reached, so nothing was run:\n{}\nCheck the URL: for a model, its provider's base URL (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, or providers.NAME.base_url in --config); for an app, that it is listening. --no-preflight skips this check.",
            failed.len(),
            lines.join("\n")
        )))
    }

    /// The runtime's handle, for the targets and model links that block on it.
    pub fn handle(&self) -> Result<tokio::runtime::Handle, SetupError> {
        self.runtime
            .as_ref()
            .map(|r| r.handle().clone())
            .ok_or_else(|| {
                SetupError::Runtime(std::io::Error::other("no async runtime was started"))
            })
    }

    /// The pool of a model in a role (`target`, `attacker`): one per (role, model), each with its own limits
    /// and ledger, so an attacker never starves the target it attacks. `flag` names the argument in errors.
    pub fn pool(
        &self,
        role: &str,
        spec: &str,
        flag: &str,
    ) -> Result<std::sync::Arc<gauntlet_llm::Pool>, SetupError> {
        let key = format!("{spec} [{role}]");
        if let Some((_, p)) = self.pools().iter().find(|(n, _)| *n == key) {
            return Ok(p.clone());
        }
        let parsed = gauntlet_llm::ModelSpec::parse(spec).map_err(|e| SetupError::spec(flag, e))?;
        let provider =
            gauntlet_llm::spec::resolve(&parsed.provider, self.providers.get(&parsed.provider))
                .map_err(|e| SetupError::spec(&format!("{flag} {spec}"), e))?;
        let model = gauntlet_llm::build_model(&parsed, &provider)
            .map_err(|e| SetupError::spec(&format!("{flag} {spec}"), e))?;
        self.expect(
            flag,
            spec,
            provider.base_url.as_deref().unwrap_or_default(),
            true,
        );
        let mut cfg = self.pool_cfg.clone();
        cfg.price_in = provider.price_in.unwrap_or(0.0);
        cfg.price_out = provider.price_out.unwrap_or(0.0);
        cfg.max_tokens = self.role_limits.get(role).copied();
        let pool = std::sync::Arc::new(gauntlet_llm::Pool::new(model, cfg, self.cache.clone()));
        if let Some(e) = self.earlier.get(&key) {
            pool.ledger().carry(e);
        }
        if let Ok(mut pools) = self.pools.lock() {
            pools.push((key, pool.clone()));
        }
        Ok(pool)
    }

    /// The target a spec names: a built-in reference agent, `cmd:COMMAND`, an `http://` app or a model
    /// (`provider/model`); `flag` names the argument in errors (`--agent`, `--target`).
    pub fn target(
        &self,
        spec: &str,
        cfg: &Config,
        max_steps: u32,
        flag: &str,
    ) -> Result<Box<dyn gauntlet_agents::Target>, SetupError> {
        if let Some(t) = gauntlet_agents::builtin_target(spec) {
            return Ok(t);
        }
        let tc = cfg.targets.get(spec).cloned().unwrap_or_default();
        if spec.starts_with("cmd:") {
            let t = gauntlet_mcp::CommandTarget::new(spec, self.pool_cfg.timeout, self.handle()?)
                .map_err(|e| SetupError::spec(flag, e))?;
            return Ok(Box::new(t));
        }
        if spec.starts_with("http://") || spec.starts_with("https://") {
            self.expect(flag, spec, spec, false);
            let headers = crate::config::resolve_headers(spec, &tc.headers)?;
            let timeout = self.pool_cfg.timeout;
            let t = gauntlet_agents::HttpTarget::new(spec, headers, timeout, self.handle()?)
                .map_err(|e| SetupError::spec(flag, e))?;
            return Ok(Box::new(t));
        }
        if !spec.contains('/') {
            // The red team's own reference targets are chat targets; the run's are agents.
            let known = if flag == "--target" {
                gauntlet_agents::CHAT_TARGETS.join(", ")
            } else {
                gauntlet_agents::BUILTIN_TARGETS.join(", ")
            };
            return Err(SetupError::spec(
                flag,
                format!(
                    "unknown target `{spec}`; built-in targets are {known}, or give a model as provider/model (openai/gpt-4.1-mini), an app as http://… or an agent process as cmd:COMMAND"
                ),
            ));
        }
        let pool = self.pool("target", spec, flag)?;
        let steps = tc.max_steps.unwrap_or(max_steps);
        let t =
            gauntlet_agents::LlmTarget::new(spec, pool, tc.system_prompt, steps, self.handle()?);
        Ok(Box::new(match tc.max_calls_per_reply {
            Some(n) => t.with_max_calls_per_reply(n),
            None => t,
        }))
    }

    /// The pools made so far.
    pub fn pools(&self) -> Vec<(String, std::sync::Arc<gauntlet_llm::Pool>)> {
        self.pools.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Err once a pool's circuit breaker has tripped: a job's sink stops the job on it.
    pub fn check_breakers(&self) -> std::io::Result<()> {
        let pools = self.pools();
        gauntlet_llm::ModelStopped::check(pools.iter().map(|(_, p)| p.as_ref()))
    }

    /// Carries a resumed run's stored ledgers into the pools made from now on: its totals and its budget then
    /// cover the whole run, not only this process's part.
    pub fn carry(&mut self, st: &gauntlet_store::Store, run_id: &str) -> Result<(), SetupError> {
        for (name, counters) in st.ledger(run_id)? {
            let s: gauntlet_llm::LedgerSnapshot =
                serde_json::from_value(counters).map_err(|e| {
                    SetupError::Ledger(format!("run {run_id}: the stored ledger of {name}: {e}"))
                })?;
            self.earlier.insert(name, s);
        }
        Ok(())
    }

    /// Writes every pool's ledger (the run's totals so far) to the store.
    pub fn save_ledger(&self, st: &gauntlet_store::Store, run_id: &str) -> Result<(), SetupError> {
        for (name, pool) in self.pools() {
            let counters = serde_json::to_value(pool.ledger().snapshot())
                .map_err(|e| SetupError::Ledger(format!("the ledger of {name}: {e}")))?;
            st.put_ledger(run_id, &name, &counters)?;
        }
        Ok(())
    }

    /// The pools' counters, for [`gauntlet_store::Writer::with_ledger`].
    pub fn ledger_source(&self) -> gauntlet_store::LedgerSource<'static> {
        let pools = self.pools.clone();
        Box::new(move || {
            let pools = pools.lock().map(|p| p.clone()).unwrap_or_default();
            pools
                .into_iter()
                .filter_map(|(name, pool)| {
                    serde_json::to_value(pool.ledger().snapshot())
                        .ok()
                        .map(|v| (name, v))
                })
                .collect()
        })
    }

    /// Spent so far, all models (USD).
    pub fn cost(&self) -> f64 {
        self.pools()
            .iter()
            .map(|(_, p)| p.ledger().snapshot().cost_usd)
            .sum()
    }

    /// One line per model: its ledger (requests, retries, failures, cache hits, tokens, cost).
    pub fn ledger_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, pool) in self.pools().iter() {
            let s = pool.ledger().snapshot();
            lines.push(format!(
                "model {name}: {} requests ({} ok, {} retries: {} rate-limited, {} server errors, {} timeouts, {} malformed, {} other failures; {} cache hits){}{}, {} prompt + {} completion tokens, ${:.4}",
                s.requests,
                s.ok,
                s.retries,
                s.rate_limited,
                s.server_errors,
                s.timeouts,
                s.malformed,
                s.other_errors,
                s.cache_hits,
                match (s.truncated, s.stopped) {
                    (0, 0) => String::new(),
                    (t, 0) => format!("; {t} replies cut at the token limit"),
                    (t, n) => format!(
                        "; {t} replies cut at the token limit; {n} not sent (circuit breaker)"
                    ),
                },
                if s.fail_fast > 0 {
                    format!(
                        "; unreachable: {} requests failed without retrying",
                        s.fail_fast
                    )
                } else {
                    String::new()
                },
                s.prompt_tokens,
                s.completion_tokens,
                s.cost_usd
            ));
            if let Some(line) = budget_line(pool.budget(), s.cost_usd) {
                lines.push(format!("model {name}: {line}"));
            }
        }
        lines
    }
}

/// What a model's spend did to its budget, when it reached it: no request was sent after that, and what requests
/// already under way spent beyond it.
fn budget_line(budget: Option<f64>, spent: f64) -> Option<String> {
    let budget = budget.filter(|b| spent >= *b)?;
    let over = spent - budget;
    Some(if over >= 0.00005 {
        format!(
            "budget ${budget:.4} reached; no request was sent after it, and requests already under way overran it by ${over:.4}"
        )
    } else {
        format!("budget ${budget:.4} reached; no request was sent after it")
    })
}

#[cfg(test)]
mod tests {
    use super::budget_line;

    #[test]
    fn a_reached_budget_is_said_with_its_overrun() {
        assert_eq!(budget_line(None, 3.0), None);
        assert_eq!(budget_line(Some(0.05), 0.049), None);
        let line = budget_line(Some(0.05), 0.0547).unwrap_or_default();
        assert!(
            line.contains("budget $0.0500 reached") && line.contains("overran it by $0.0047"),
            "{line}"
        );
        let exact = budget_line(Some(0.05), 0.05).unwrap_or_default();
        assert!(exact.ends_with("no request was sent after it"), "{exact}");
    }
}
