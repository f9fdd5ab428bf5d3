//! `gauntlet redteam`: vulnerabilities × attack methods against a model or app, judged and summarised.

use crate::exit::{errored_exit, gate_exit, parse_gates, stopped_early};
use crate::flags::{ModelFlags, StoreArgs, open_store, report_models};
use crate::job::{finish, json_document, recording, resumed_run};
use anyhow::Result;
use clap::Args;
use gauntlet_redteam::job::{Sunk, plan_len};
use gauntlet_setup::interrupt;
use gauntlet_setup::{config, redteam};
use gauntlet_store::RunKind;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, serde::Serialize, serde::Deserialize)]
pub(crate) struct RedteamArgs {
    /// Targets (repeatable): chat-refuser, chat-compliant, chat-leaky (offline reference chat targets), a model
    /// (`provider/model`, run as an LLM agent with the world's tools) or an app (`http://…`).
    #[arg(long = "target", visible_alias = "agent", value_name = "TARGET")]
    pub(crate) targets: Vec<String>,
    /// Vulnerabilities: comma-separated ids (`bias`) or sub-types (`bias/race`), or a YAML file of custom
    /// vulnerabilities. Default: the whole catalogue.
    #[arg(long, value_name = "IDS|FILE")]
    pub(crate) vulns: Option<String>,
    /// Attack methods, comma-separated (`none` sends the seed as written). Default: none and every pure transform.
    #[arg(long, value_delimiter = ',')]
    pub(crate) attacks: Vec<String>,
    /// Run a framework's whole set: its vulnerabilities and (available) attacks (owasp-llm-2025, owasp-agentic-2025,
    /// mitre-atlas, nist-ai-rmf).
    #[arg(long, value_name = "ID")]
    pub(crate) framework: Option<String>,
    /// Seeds per sub-type (sampled with --seed; default 3).
    #[arg(long)]
    pub(crate) seeds_per_subtype: Option<usize>,
    /// A judge model (`provider/model`) for the sub-types' rubrics; without one, refusals and detectors decide and the
    /// rest is reported as unjudged.
    #[arg(long, value_name = "MODEL")]
    pub(crate) judge: Option<String>,
    /// An attacker model (`provider/model`) for the model-driven methods (roleplay, prompt-injection, …); without
    /// one, each method's template is used and the case is marked `attack_fallback`.
    #[arg(long, value_name = "MODEL")]
    pub(crate) attacker: Option<String>,
    /// A simulator model (`provider/model`) that generates --seeds-per-subtype baseline attacks per sub-type; without
    /// one, the catalogue's seeds are used. Catalogue seeds standing in for a failed batch are marked `seed_fallback`.
    #[arg(long, value_name = "MODEL")]
    pub(crate) simulator: Option<String>,
    /// Seed for sampling (default 0).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Messages per conversation of the multi-turn methods (default 5; the run file's `multi_turn` section also sets
    /// crescendo's backtracks and the tree's width and depth).
    #[arg(long, value_name = "N")]
    pub(crate) max_turns: Option<usize>,
    /// Cases at once.
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Run only shard I of N (0 ≤ I < N: the cases whose place in the whole plan is I modulo N), for a red team
    /// spread over machines; `gauntlet runs merge` joins the shards' stores. Not with --simulator (each machine
    /// would draw its own seeds).
    #[arg(long, value_name = "I/N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<String>,
    /// Configuration file: providers, prices and pool limits (as for `run`), and the run itself (its `redteam:`
    /// section; flags override it).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub(crate) models: ModelFlags,
    /// Only print the tables (no progress).
    #[arg(short, long)]
    #[serde(skip)]
    pub(crate) quiet: bool,
    /// Exit 0 even when cases errored (they are always kept, counted and excluded from rates).
    #[arg(long)]
    pub(crate) ignore_errors: bool,
    /// Do not check before the job starts that every model endpoint and app it will call can be reached.
    #[arg(long)]
    #[serde(skip)]
    pub(crate) no_preflight: bool,
    /// Write every case and the risk assessment to this JSON file (`-`: standard output; the tables then go to
    /// standard error).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    #[serde(skip)]
    pub(crate) store: StoreArgs,
    /// Continue an interrupted red-team run (from the store; `latest` or a unique start of its id will do) with
    /// its own arguments and seeds: finished cases are kept, the rest are run. Only --store, --json, --concurrency,
    /// --ignore-errors and --fail-on apply alongside it.
    #[arg(long, value_name = "RUN_ID")]
    #[serde(skip)]
    pub(crate) resume: Option<String>,
    /// Exit 3 when a condition holds for any target or overall, e.g. 'pass_rate < 0.8', 'unjudged > 0.2'
    /// (repeatable; metrics: pass_rate, failing, errored, errored_rate, unjudged (share of cases),
    /// unjudged_count).
    #[arg(long = "fail-on", value_name = "EXPR")]
    #[serde(skip)]
    pub(crate) fail_on: Vec<String>,
}

impl RedteamArgs {
    /// The config file's `redteam:` section under the flags: what the flags leave out is filled in (and stored with
    /// the run, to resume it with).
    fn fill_from(&mut self, file: &config::RedteamFile) {
        if self.targets.is_empty() {
            self.targets = file.targets.clone();
        }
        if self.vulns.is_none() && !file.vulnerabilities.is_empty() {
            self.vulns = Some(file.vulnerabilities.join(","));
        }
        if self.attacks.is_empty() {
            self.attacks = file.attacks.clone();
        }
        self.framework = self.framework.take().or(file.framework.clone());
        self.judge = self.judge.take().or(file.judge.clone());
        self.attacker = self.attacker.take().or(file.attacker.clone());
        self.simulator = self.simulator.take().or(file.simulator.clone());
        self.concurrency = self.concurrency.or(file.concurrency);
    }

    fn ask(&self) -> redteam::Ask<'_> {
        redteam::Ask {
            targets: &self.targets,
            vulns: self.vulns.as_deref(),
            attacks: &self.attacks,
            framework: self.framework.as_deref(),
            simulator: self.simulator.as_deref(),
            seeds_per_subtype: self.seeds_per_subtype,
            seed: self.seed,
            max_turns: self.max_turns,
            shard: self.shard.as_deref(),
            config: self.config.as_deref(),
        }
    }

    fn roles(&self) -> [Option<&str>; 3] {
        [&self.judge, &self.attacker, &self.simulator].map(|r| r.as_deref())
    }

    /// With `--resume ID`: the stored arguments of red-team run ID replace these, but for the flags that do not
    /// change what is run. Returns the run to resume.
    fn resume(
        &mut self,
        store: Option<&gauntlet_store::Store>,
    ) -> Result<Option<gauntlet_store::RunInfo>> {
        let Some(id) = self.resume.take() else {
            return Ok(None);
        };
        let (mut stored, info): (RedteamArgs, _) = resumed_run(store, &id, RunKind::Redteam)?;
        stored.json = self.json.take();
        stored.concurrency = self.concurrency.or(stored.concurrency);
        stored.ignore_errors = self.ignore_errors;
        stored.no_preflight = self.no_preflight;
        stored.store = self.store.clone();
        stored.fail_on = std::mem::take(&mut self.fail_on);
        *self = stored;
        Ok(Some(info))
    }
}

pub(crate) fn cmd_redteam(mut a: RedteamArgs) -> Result<ExitCode> {
    interrupt::install();
    let gates = parse_gates(&a.fail_on, gauntlet_report::gate::REDTEAM_METRICS)?;
    let store = open_store(&a.store)?;
    let resumed = a.resume(store.as_ref())?;
    let catalogue = gauntlet_redteam::catalog::builtin()
        .map_err(|e| anyhow::anyhow!("the vulnerability catalogue is broken:\n{}", e.join("\n")))?;
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let file = cfg.redteam.clone().unwrap_or_default();
    a.fill_from(&file);
    let planned = redteam::plan(&a.ask(), &file, &catalogue, !gates.is_empty())?;
    let (mut rcfg, mut vulns, names) = (planned.config, planned.vulns, planned.targets);
    // The judge's refusal screen compiles while the simulator and the first cases wait on their models.
    gauntlet_core::refusal::warm_up_in_background();
    let mut models = a
        .models
        .build(&cfg, redteam::needs_models(&names, a.roles()))?;
    if let (Some(st), Some(info)) = (&store, &resumed) {
        models.carry(st, &info.id)?;
    }
    let targets = redteam::targets(&models, &cfg, &names)?;
    let roles = redteam::Roles::new(&models, a.roles())?;
    models.preflight(a.no_preflight)?;
    rcfg.concurrency = a.concurrency.unwrap_or(models.default_workers());
    let seeding = redteam::seeds(resumed.as_ref(), &roles, &mut vulns, &rcfg)?;
    let named = [a.judge.clone(), a.attacker.clone(), a.simulator.clone()];
    let head = gauntlet_redteam::job::Head::json(&rcfg, &names, &vulns, named)?;
    let total = plan_len(&vulns, targets.len(), &rcfg, seeding.simulated());
    let args = serde_json::to_value(&a)?;
    let rec = redteam::record(store.as_ref(), resumed.as_ref(), &args, &head, total)?;
    let kind = (RunKind::Redteam, "redteam");
    recording(&rec, kind, resumed.is_some(), false, &a.store.path);
    let mut store_writer = rec.writer(&models);
    let mut writer = json_document(a.json.as_deref(), &head, "cases")?;
    let mut seen = gauntlet_report::progress::CasesSeen::start(total, a.quiet);
    let started = Instant::now();
    let mut simulated_in = None;
    let mut sink = |c: Sunk<'_>| -> std::io::Result<()> {
        let c = match c {
            Sunk::Case(c) => c,
            // Nothing came for a while: what is stored is committed now, as the next case may take minutes.
            Sunk::Idle => {
                return store_writer
                    .as_mut()
                    .map_or(Ok(()), |w| w.commit().map_err(std::io::Error::other));
            }
            Sunk::Simulated(feed) => {
                simulated_in = Some(started.elapsed());
                return store_writer
                    .as_mut()
                    .map_or(Ok(()), |w| redteam::store_seeds(w, feed, &vulns));
            }
        };
        seen.case(c);
        if let Some(w) = writer.as_mut() {
            w.item(c)?;
        }
        match store_writer.as_mut() {
            Some(sw) if !rec.is_done(c.index) => redteam::store_case(sw, c)?,
            _ => {}
        }
        models.check_breakers()
    };
    let mut load = |i: usize| rec.item(i);
    let resume = rec.id.as_ref().map(|_| gauntlet_redteam::job::Resume {
        done: &rec.done,
        load: &mut load,
    });
    let result = gauntlet_redteam::run(
        &catalogue,
        &vulns,
        &targets,
        &rcfg,
        roles.judge(),
        roles.attacker(),
        seeding.as_seeds(),
        &mut sink,
        resume,
    );
    // Before anything else can fail: what was written still parses, the cases so far and why the red team stopped.
    if let Err(e) = &result
        && let Some(w) = writer.take()
    {
        let _ = w.finish("stopped", &e.to_string());
    }
    if let Some(mut w) = store_writer {
        w.commit()?;
    }
    let mut report = match result {
        Ok(r) => r,
        Err(e) => {
            finish(&rec, &models, None)?;
            return stopped_early(&e, rec.id.as_deref()).ok_or_else(|| e.into());
        }
    };
    report.simulator = match seeding {
        redteam::Seeding::Given(stored) => stored,
        _ => report
            .simulator
            .inspect(|s| eprintln!("{}", s.line(simulated_in))),
    };
    finish(&rec, &models, Some(&serde_json::to_value(&report)?))?;
    if let Some(w) = writer {
        w.finish("report", &report)?;
    }
    gauntlet_report::print_redteam(
        &mut gauntlet_report::tables_out(a.json.as_deref()),
        &head,
        a.framework.as_deref(),
        &report,
    )?;
    let (o, secs) = (&report.overall, started.elapsed().as_secs_f64());
    let cases = o.passing + o.failing + o.errored + o.unjudged;
    eprintln!("{cases} cases in {secs:.2} s");
    report_models(&models);
    if let Some(id) = &rec.id {
        eprintln!("{}", RunKind::Redteam.recorded_line(id, &a.store.path));
    }
    let gated = gate_exit(&gates, &gauntlet_report::gate::redteam_metrics(&report));
    Ok(errored_exit(&seen.causes, "cases", a.ignore_errors).unwrap_or(gated))
}
