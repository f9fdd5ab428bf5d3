//! The gateway's two sessions over MCP, as `gauntlet gateway serve|proxy` runs them: a case's sandbox served to
//! any MCP client, judged and recorded as a one-episode run when it ends ([`Sandbox`]), and the gateway in front
//! of a real MCP server ([`Proxy`]). Each builds its defense here ([`Models`]), so a spec means what it means in a
//! run; printing is left to the caller.

use crate::{Config, Models, SetupError};
use gauntlet_cases::{Case, EpisodeRecord, PreparedCase};
use gauntlet_core::Setting;
use gauntlet_mcp::{FrontError, Listen, McpFrontError, ProxyBackend, SandboxBackend, Upstream};
use std::path::PathBuf;
use std::sync::Arc;

/// The target name a served session is recorded under: whatever MCP client connected.
const TARGET: &str = "mcp-client";

/// Why a gateway session could not start, run or be recorded; the message names the flag to fix where there is
/// one.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// `--setting` names no setting.
    #[error("--setting: {0}")]
    Setting(String),
    /// `--case` names no case of the suites.
    #[error("--case: no case `{0}` (see `gauntlet cases list`)")]
    NoCase(String),
    /// The setting needs injection rules the case does not have.
    #[error("--setting: case `{case}` has no injection rules, so `{setting}` does not apply to it")]
    NotApplicable {
        /// The case.
        case: String,
        /// The setting.
        setting: Setting,
    },
    /// The defense could not prepare its policy for the case.
    #[error("--defense: {0}")]
    Defense(gauntlet_defense::DefenseError),
    /// The gateway's lock was poisoned during the session: there is no final state to judge.
    #[error("the gateway failed during the session")]
    Failed,
    /// `--upstream-timeout` is not a positive number of seconds.
    #[error("--upstream-timeout: must be a positive number of seconds")]
    Timeout,
    /// A model-based defense in front of a proxy was given no task.
    #[error(
        "--task: {0} judges calls against the user's task; a proxy knows none unless told (--task TEXT)"
    )]
    NoTask(String),
    /// Headers were given for an upstream that is not reached over HTTP.
    #[error("--upstream-header: headers go to an HTTP upstream; give --upstream-url")]
    HeadersWithoutUrl,
    /// An upstream header is malformed or names an unset variable.
    #[error("--upstream-header: {0}")]
    Header(gauntlet_mcp::HeaderError),
    /// The injection rules file is unreadable or invalid: each problem on its own line.
    #[error("--inject:\n{0}")]
    Inject(String),
    /// The upstream listed no tools or the defense could not prepare for them.
    #[error("preparing the proxy")]
    Prepare(#[source] McpFrontError),
    /// The upstream could not be reached or is not named.
    #[error(transparent)]
    Upstream(#[from] McpFrontError),
    /// The front could not start or failed while serving.
    #[error(transparent)]
    Front(#[from] FrontError),
    /// The config file or the defense's models.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The run store failed recording the session.
    #[error(transparent)]
    Store(#[from] gauntlet_store::StoreError),
    /// The run's header or summary could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The setting `--setting` names.
pub fn setting(s: &str) -> Result<Setting, GatewayError> {
    s.parse().map_err(GatewayError::Setting)
}

/// The defense of a gateway session, built from the config file: a model-based one gets its own pool.
fn defense(
    config: Option<&std::path::Path>,
    spec: &str,
) -> Result<(Models, Box<dyn gauntlet_defense::Defense>), GatewayError> {
    let models = Models::for_defenses(&Config::load_opt(config)?, &[spec.to_string()])?;
    let defense = models.defense(spec)?;
    Ok((models, defense))
}

/// What a sandbox session serves: which case, in which setting, behind which defense, and how. The suites, case,
/// setting and defense are stored with the recorded run as they were given.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// The cases loaded from the suites, among them the one to serve.
    pub cases: Vec<Case>,
    /// The suites the case was loaded from (empty: the built-in one).
    pub suites: Vec<PathBuf>,
    /// The case's id.
    pub case: String,
    /// The setting, as given (see [`setting`]): `indirect` and `multi` apply the case's injection rules to tool
    /// results.
    pub setting: String,
    /// The defense's spec (as for a run).
    pub defense: String,
    /// The config file, for a model-based defense.
    pub config: Option<PathBuf>,
    /// How the front listens and where it logs.
    pub listen: Listen,
}

/// A case's sandbox served over MCP: its world behind the gateway (the defense, the setting's injection rules),
/// one episode shared by every client, judged by the case's verifier when the session ends.
pub struct Sandbox {
    // Dropped in this order, as the command's locals were: the runtime first, the models last.
    rt: tokio::runtime::Runtime,
    backend: Arc<SandboxBackend>,
    defense: Box<dyn gauntlet_defense::Defense>,
    models: Models,
    pc: PreparedCase,
    setting: Setting,
    listen: Listen,
    /// The options the run is recorded with.
    args: serde_json::Value,
}

impl Sandbox {
    /// Finds the case among the options' cases, checks that the setting applies to it, builds the defense and
    /// the gateway and opens the event log.
    pub fn new(o: SandboxOptions) -> Result<Sandbox, GatewayError> {
        let setting = setting(&o.setting)?;
        let Some(case) = o.cases.into_iter().find(|c| c.id == o.case) else {
            return Err(GatewayError::NoCase(o.case.clone()));
        };
        let pc = PreparedCase::new(case);
        if !pc.applies(setting) {
            return Err(GatewayError::NotApplicable {
                case: o.case.clone(),
                setting,
            });
        }
        let (models, defense) = defense(o.config.as_deref(), &o.defense)?;
        let gw = pc
            .gateway(setting, defense.as_ref())
            .map_err(GatewayError::Defense)?;
        let backend = Arc::new(SandboxBackend::new(gw, o.listen.log_writer()?));
        Ok(Sandbox {
            rt: gauntlet_mcp::front::runtime()?,
            backend,
            defense,
            models,
            pc,
            setting,
            listen: o.listen,
            args: serde_json::json!({
                "gateway": "serve", "suites": o.suites, "case": o.case, "setting": o.setting, "defense": o.defense,
            }),
        })
    }

    /// Serves the sandbox until the session ends (`ready` is told an HTTP front's URL), then judges what the
    /// clients did. The gateway never sees their replies: the response level reads an empty reply.
    pub fn serve(&self, ready: impl FnOnce(&str)) -> Result<Session, GatewayError> {
        let b = self.backend.clone();
        gauntlet_mcp::front::serve(&self.rt, b, "gauntlet-sandbox", true, &self.listen, ready)?;
        let Some(record) = self
            .backend
            .with_gateway(|gw| self.pc.external_record(self.setting, TARGET, gw, &[]))
        else {
            return Err(GatewayError::Failed);
        };
        Ok(Session { record })
    }

    /// Records a judged session in `st` as a run of one episode, so every report renders it (the HTML
    /// drill-down shows each call), tells `told` where it is, then saves the models' ledgers with it: a failure
    /// saving them comes after the run has been found and named.
    pub fn record(
        &self,
        st: &gauntlet_store::Store,
        session: &Session,
        told: impl FnOnce(&Recorded),
    ) -> Result<Recorded, GatewayError> {
        let config = gauntlet_cases::RunConfig {
            settings: vec![self.setting],
            repeat: 1,
            concurrency: 1,
            seed: 0,
            max_turns: 1,
            shard: None,
            by: Default::default(),
        };
        let cases = std::slice::from_ref(&self.pc);
        let header = gauntlet_report::json::RunHeader::new(
            &config,
            &[TARGET.to_string()],
            self.defense.name(),
            std::slice::from_ref(&self.pc.case.id),
        );
        let kind = gauntlet_store::RunKind::Gateway;
        let id = st.create_run(kind, &self.args, &serde_json::to_value(&header)?, 1)?;
        let mut sum = gauntlet_cases::run::Summarizer::new(cases, vec![TARGET.into()], &config);
        sum.add(&session.record);
        {
            let mut w = st.writer(&id);
            w.episode(&session.record)?;
            w.commit()?;
        }
        let summary = serde_json::to_value(sum.finish())?;
        st.finish_run(&id, gauntlet_store::RunStatus::Complete, Some(&summary))?;
        let run = Recorded {
            id,
            store: st.path().to_path_buf(),
        };
        told(&run);
        self.models.save_ledger(st, &run.id)?;
        Ok(run)
    }

    /// The session's models (a model-based defense's pool), for their ledgers.
    pub fn models(&self) -> &Models {
        &self.models
    }
}

/// A served session, judged: the episode record of everything the clients did.
#[derive(Debug, Clone)]
pub struct Session {
    /// The record (the gateway's whole log as one turn, the verdict on the final state).
    pub record: EpisodeRecord,
}

impl Session {
    /// Whether the session is errored (a defense that could not decide): not a pass, whatever its verdict.
    pub fn errored(&self) -> bool {
        self.record.error.is_some()
    }
}

impl std::fmt::Display for Session {
    /// The calls made and the outcome: the verdict, the level that decided and the task's success, or the error.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.record;
        let calls: usize = r.trace.turns.iter().map(|t| t.events.len()).sum();
        if let Some(e) = &r.error {
            return write!(f, "{calls} calls; the session is errored (exit 1): {e}");
        }
        let level = r.verdict.level.map_or(String::new(), |l| {
            format!(" (decided at the {} level)", l.as_str())
        });
        let task = match r.task_success {
            Some(true) => "succeeded",
            Some(false) => "not done",
            None => "not checked",
        };
        let outcome = r.verdict.outcome;
        write!(
            f,
            "{calls} calls; case {}: {outcome:?}{level}; task {task}",
            r.case
        )
    }
}

/// Where a session was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The run's id.
    pub id: String,
    /// The store it is in.
    pub store: PathBuf,
}

impl std::fmt::Display for Recorded {
    /// The run and how to render it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (id, path) = (&self.id, self.store.display());
        let flag = gauntlet_store::store_flag(&self.store);
        write!(
            f,
            "session recorded as run {id} in {path} (gauntlet report {id}{flag} --format html)"
        )
    }
}

/// What a proxy session puts in front of which upstream, and how.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The upstream as a command line, started as a child process speaking stdio.
    pub upstream: Option<String>,
    /// The upstream's streamable HTTP endpoint.
    pub upstream_url: Option<String>,
    /// Headers for an HTTP upstream, each `'Name: value'` with `${VAR}` read from the environment.
    pub upstream_headers: Vec<String>,
    /// Longest wait, in seconds, for an HTTP upstream to answer one call.
    pub upstream_timeout: f64,
    /// The defense's spec (as for a run).
    pub defense: String,
    /// The user's task, for defenses that read it (empty: none).
    pub task: String,
    /// The config file, for a model-based defense.
    pub config: Option<PathBuf>,
    /// A file of injection rules applied to upstream results.
    pub inject: Option<PathBuf>,
    /// How the front listens and where it logs.
    pub listen: Listen,
}

/// The gateway in front of a real MCP server: each call decided by the defense, forwarded, altered by the
/// injection rules and logged.
pub struct Proxy {
    // Dropped in this order, as the command's locals were.
    backend: Arc<ProxyBackend>,
    rt: tokio::runtime::Runtime,
    _defense: Box<dyn gauntlet_defense::Defense>,
    models: Models,
    listen: Listen,
}

impl Proxy {
    /// Checks the options (before a defense may start a process or load a model), builds the defense, reads
    /// the injection rules, connects to the upstream and prepares the defense for its tools.
    pub fn start(o: &ProxyOptions) -> Result<Proxy, GatewayError> {
        let t = o.upstream_timeout;
        if !(t.is_finite() && t > 0.0) {
            return Err(GatewayError::Timeout);
        }
        // Too many seconds for a `Duration` is no positive number of seconds either.
        let timeout =
            std::time::Duration::try_from_secs_f64(t).map_err(|_| GatewayError::Timeout)?;
        if gauntlet_defense::is_model_defense(&o.defense) && o.task.trim().is_empty() {
            return Err(GatewayError::NoTask(o.defense.clone()));
        }
        if !o.upstream_headers.is_empty() && o.upstream_url.is_none() {
            return Err(GatewayError::HeadersWithoutUrl);
        }
        let headers = (o.upstream_headers.iter())
            .map(|h| gauntlet_mcp::proxy::parse_header(h, gauntlet_llm::env::var))
            .collect::<Result<Vec<_>, _>>()
            .map_err(GatewayError::Header)?;
        let (models, defense) = defense(o.config.as_deref(), &o.defense)?;
        let rules = match &o.inject {
            Some(p) => gauntlet_cases::case::load_injection_rules(p).map_err(|d| {
                let lines: Vec<String> = d.iter().map(ToString::to_string).collect();
                GatewayError::Inject(lines.join("\n"))
            })?,
            None => Vec::new(),
        };
        let rt = gauntlet_mcp::front::runtime()?;
        let (cmd, url) = (o.upstream.as_deref(), o.upstream_url.as_deref());
        let upstream = rt.block_on(Upstream::connect(cmd, url, &headers, timeout))?;
        let log = o.listen.log_writer()?;
        let backend = rt
            .block_on(ProxyBackend::new(
                upstream,
                defense.as_ref(),
                &o.task,
                rules,
                log,
            ))
            .map_err(GatewayError::Prepare)?;
        Ok(Proxy {
            backend: Arc::new(backend),
            rt,
            _defense: defense,
            models,
            listen: o.listen.clone(),
        })
    }

    /// Serves the proxy until the session ends (`ready` is told an HTTP front's URL); returns what it mediated.
    pub fn serve(
        &self,
        ready: impl FnOnce(&str),
    ) -> Result<gauntlet_mcp::ProxyCounts, GatewayError> {
        let b = self.backend.clone();
        gauntlet_mcp::front::serve(&self.rt, b, "gauntlet-proxy", false, &self.listen, ready)?;
        Ok(self.backend.counts())
    }

    /// The session's models (a model-based defense's pool), for their ledgers.
    pub fn models(&self) -> &Models {
        &self.models
    }

    /// Ends the upstream session (and its child process).
    pub fn close(self) {
        self.rt.block_on(self.backend.close());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen() -> Listen {
        Listen {
            http: None,
            token: None,
            max_body: 1 << 20,
            rate: 1000,
            log: None,
        }
    }

    fn proxy(f: impl FnOnce(&mut ProxyOptions)) -> String {
        let mut o = ProxyOptions {
            upstream: Some("true".into()),
            upstream_url: None,
            upstream_headers: Vec::new(),
            upstream_timeout: 120.0,
            defense: "allow-all".into(),
            task: String::new(),
            config: None,
            inject: None,
            listen: listen(),
        };
        f(&mut o);
        match Proxy::start(&o) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn proxy_options_are_checked_before_anything_starts() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300] {
            let e = proxy(|o| o.upstream_timeout = bad);
            assert_eq!(
                e, "--upstream-timeout: must be a positive number of seconds",
                "{bad}"
            );
        }
        let e = proxy(|o| o.defense = "alignment-check:mock/m".into());
        assert!(
            e.starts_with("--task: alignment-check:mock/m judges calls"),
            "{e}"
        );
        let e = proxy(|o| o.upstream_headers = vec!["X-A: b".into()]);
        assert!(e.contains("give --upstream-url"), "{e}");
        let e = proxy(|o| {
            o.upstream = None;
            o.upstream_url = Some("http://127.0.0.1:9/mcp".into());
            o.upstream_headers = vec!["A: ${GAUNTLET_TEST_UNSET_VARIABLE}".into()];
        });
        assert_eq!(
            e,
            "--upstream-header: header A: environment variable GAUNTLET_TEST_UNSET_VARIABLE is not set"
        );
        let e = proxy(|o| o.upstream = None);
        assert!(e.starts_with("give the upstream server"), "{e}");
    }

    #[test]
    fn a_sandbox_names_a_missing_case_and_a_setting_that_does_not_apply() {
        let cases = gauntlet_cases::load(&gauntlet_cases::Source::Builtin).cases;
        let o = |cases: &[Case], case: &str, setting: &str| SandboxOptions {
            cases: cases.to_vec(),
            suites: Vec::new(),
            case: case.into(),
            setting: setting.into(),
            defense: "allow-all".into(),
            config: None,
            listen: listen(),
        };
        let Err(e) = Sandbox::new(o(&cases, "no.such.case", "benign")) else {
            panic!("no such case")
        };
        assert_eq!(
            e.to_string(),
            "--case: no case `no.such.case` (see `gauntlet cases list`)"
        );
        let Some(mut plain) = cases.first().cloned() else {
            panic!("the built-in suite has cases")
        };
        plain.inject.clear();
        let (id, plain) = (plain.id.clone(), [plain]);
        let Err(e) = Sandbox::new(o(&plain, &id, "indirect")) else {
            panic!("indirect needs injection rules")
        };
        assert!(
            e.to_string().contains("so `indirect` does not apply"),
            "{e}"
        );
        let Err(e) = Sandbox::new(o(&plain, &id, "sideways")) else {
            panic!("no such setting")
        };
        assert!(
            e.to_string().starts_with("--setting: unknown setting"),
            "{e}"
        );
    }
}
