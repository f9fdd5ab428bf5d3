//! `gauntlet redteam`: vulnerabilities × attack methods against a model or app, judged and summarised.

use crate::commands::run::finish_recorded;
use crate::exit::{errored_exit, gate_exit, parse_gates, stopped_early};
use crate::flags::{ModelFlags, StoreArgs, open_store, report_models};
use crate::interrupt;
use crate::job::{json_document, resumed_run};
use crate::progress;
use anyhow::{Result, bail};
use clap::Args;
use gauntlet_setup::{Models, config};
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

/// A red team's plan: the config file's `redteam:` section under the flags (filled into `a`), checked, with the
/// vulnerabilities, attack methods and target names it runs. `gated`: `--fail-on` was given. The plan's
/// concurrency is left for the caller, which knows whether models are in play.
pub(crate) fn plan_redteam(
    a: &mut RedteamArgs,
    file: &config::RedteamFile,
    catalogue: &gauntlet_redteam::Catalogue,
    gated: bool,
) -> Result<(
    gauntlet_redteam::RedTeamConfig,
    Vec<gauntlet_redteam::Vulnerability>,
    Vec<String>,
)> {
    if a.targets.is_empty() {
        a.targets = file.targets.clone();
    }
    if a.vulns.is_none() && !file.vulnerabilities.is_empty() {
        a.vulns = Some(file.vulnerabilities.join(","));
    }
    if a.attacks.is_empty() {
        a.attacks = file.attacks.clone();
    }
    a.framework = a.framework.take().or(file.framework.clone());
    a.judge = a.judge.take().or(file.judge.clone());
    a.attacker = a.attacker.take().or(file.attacker.clone());
    a.simulator = a.simulator.take().or(file.simulator.clone());
    let shard = a
        .shard
        .as_deref()
        .map(gauntlet_core::order::Shard::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--shard: {e}"))?;
    if shard.is_some() && a.simulator.is_some() {
        bail!(
            "--shard: a simulator draws its seeds on each machine, so the shards would not test the same cases; shard a red team with the catalogue's seeds"
        );
    }
    if shard.is_some() && gated {
        bail!(
            "--fail-on: a shard's figures cover only its part of the red team; gate the merged run instead (gauntlet report RUN_ID --fail-on …)"
        );
    }
    a.concurrency = a.concurrency.or(file.concurrency);
    let seeds_per_subtype = a.seeds_per_subtype.or(file.seeds_per_subtype).unwrap_or(3);
    let seed = a.seed.or(file.seed).unwrap_or(0);
    let mut multi_turn = file.multi_turn.unwrap_or_default();
    if let Some(n) = a.max_turns {
        multi_turn.max_turns = n;
    }
    for (field, v) in [
        (
            "--max-turns / redteam.multi_turn.max_turns",
            multi_turn.max_turns,
        ),
        ("redteam.multi_turn.tree_width", multi_turn.tree_width),
        ("redteam.multi_turn.tree_depth", multi_turn.tree_depth),
    ] {
        if v == 0 {
            bail!("{field}: must be at least 1");
        }
    }
    let source = a
        .config
        .as_ref()
        .map_or(String::new(), |p| p.display().to_string());
    let (vulns, attacks) = gauntlet_redteam::selection::select(
        catalogue,
        &gauntlet_redteam::selection::Request {
            framework: a.framework.as_deref(),
            vulns: a.vulns.as_deref(),
            attacks: &a.attacks,
            custom: &file.custom_vulnerabilities,
            custom_source: &source,
        },
    )?;
    if seeds_per_subtype == 0 {
        bail!("--seeds-per-subtype: must be at least 1");
    }
    let names: Vec<String> = if a.targets.is_empty() {
        gauntlet_agents::CHAT_TARGETS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        a.targets.clone()
    };
    let plan = gauntlet_redteam::RedTeamConfig {
        shard,
        attacks,
        seeds_per_subtype,
        seed,
        multi_turn,
        concurrency: 0,
    };
    Ok((plan, vulns, names))
}

/// The red team's targets: reference chat targets by name, anything else a model or app target with the run's
/// canary in its system prompt (so prompt leakage is detectable).
pub(crate) fn redteam_targets(
    models: &Models,
    cfg: &config::Config,
    names: &[String],
) -> Result<Vec<Box<dyn gauntlet_agents::Target>>> {
    let mut targets: Vec<Box<dyn gauntlet_agents::Target>> = Vec::new();
    for n in names {
        if let Some(t) = gauntlet_agents::ChatTarget::from_name(n) {
            targets.push(Box::new(t));
            continue;
        }
        let mut tcfg = cfg.clone_with_canary(n);
        tcfg.pool = cfg.pool.clone();
        targets.push(models.target(n, &tcfg, 10, "--target")?);
    }
    Ok(targets)
}

/// The red team's seeds: a resumed run's simulated seeds (so it plans the very same cases), or new ones from the
/// simulator model, or the catalogue's as they are (`None`).
pub(crate) fn simulate_seeds(
    resumed: Option<&gauntlet_store::RunInfo>,
    simulator: Option<gauntlet_redteam::model_attacks::Attacker<'_>>,
    vulns: &mut Vec<gauntlet_redteam::Vulnerability>,
    rcfg: &gauntlet_redteam::RedTeamConfig,
) -> Result<Option<gauntlet_redteam::simulator::Summary>> {
    if let Some(seeds) = resumed.and_then(|i| i.header.get("simulated_seeds")) {
        gauntlet_redteam::catalog::apply_simulated_seeds(vulns, seeds)
            .map_err(|e| anyhow::anyhow!("--resume: {e}"))?;
        return Ok(resumed
            .and_then(|i| i.header.get("simulator_summary").cloned())
            .and_then(|v| serde_json::from_value(v).ok()));
    }
    let Some(model) = simulator else {
        return Ok(None);
    };
    let started = Instant::now();
    let (v, summary) = gauntlet_redteam::simulator::simulate(
        vulns,
        rcfg.seeds_per_subtype,
        model,
        rcfg.concurrency,
    );
    eprintln!(
        "simulator: {} inputs generated, {} catalogue seeds filled in, {} calls in {:.2} s",
        summary.simulated,
        summary.fallback,
        summary.calls,
        started.elapsed().as_secs_f64()
    );
    *vulns = v;
    Ok(Some(summary))
}

/// Where the red team's cases go: a new run in the store (its header carrying simulated seeds), or the resumed
/// run, reopened, with the cases it already has. `(None, [])` without a store.
pub(crate) fn record_redteam(
    store: Option<&gauntlet_store::Store>,
    resumed: Option<&gauntlet_store::RunInfo>,
    a: &RedteamArgs,
    head: &serde_json::Value,
    total: usize,
    vulns: &[gauntlet_redteam::Vulnerability],
    simulated: &Option<gauntlet_redteam::simulator::Summary>,
) -> Result<(Option<String>, Vec<bool>)> {
    let Some(st) = store else {
        return Ok((None, Vec::new()));
    };
    // The simulated seeds are the store's alone: a resumed run's are never compared, whether or not it has them.
    let seeds = simulated
        .as_ref()
        .map(|_| gauntlet_redteam::catalog::simulated_seeds_json(vulns));
    let summary = simulated.as_ref().map(serde_json::to_value).transpose()?;
    let [k_seeds, k_summary] = gauntlet_redteam::catalog::STORED_ONLY;
    let extra = [(k_seeds, seeds), (k_summary, summary)];
    let (args, kind) = (serde_json::to_value(a)?, RunKind::Redteam);
    let plan = gauntlet_store::Plan {
        extra: &extra,
        ..gauntlet_store::Plan::new(kind, &args, head, total)
    };
    let rec = st.record(&plan, resumed)?;
    if resumed.is_some() {
        eprintln!(
            "resuming red-team run {}: {} of {total} cases already done",
            rec.id,
            rec.done_count()
        );
    }
    Ok((Some(rec.id), rec.done))
}

/// A model that writes attacks (the attacker or the simulator), when its pool and the runtime exist.
pub(crate) fn attacker_of<'a>(
    pool: &'a Option<std::sync::Arc<gauntlet_llm::Pool>>,
    handle: &'a Option<tokio::runtime::Handle>,
) -> Option<gauntlet_redteam::model_attacks::Attacker<'a>> {
    pool.as_ref()
        .zip(handle.as_ref())
        .map(|(p, h)| gauntlet_redteam::model_attacks::Attacker {
            model: p.as_ref(),
            runtime: h,
        })
}

/// With `--resume ID`: the stored arguments of red-team run ID replace `a`'s, but for the flags that do not change
/// what is run. Returns the run to resume.
pub(crate) fn resume_redteam_args(
    a: &mut RedteamArgs,
    store: Option<&gauntlet_store::Store>,
) -> Result<Option<gauntlet_store::RunInfo>> {
    let Some(id) = a.resume.take() else {
        return Ok(None);
    };
    let (mut stored, info): (RedteamArgs, _) = resumed_run(store, &id, RunKind::Redteam)?;
    stored.json = a.json.take();
    stored.concurrency = a.concurrency.or(stored.concurrency);
    stored.ignore_errors = a.ignore_errors;
    stored.no_preflight = a.no_preflight;
    stored.store = a.store.clone();
    stored.fail_on = std::mem::take(&mut a.fail_on);
    *a = stored;
    Ok(Some(info))
}

/// Whether the red team needs the model runtime: a target, the judge, the attacker or the simulator is a model.
pub(crate) fn redteam_needs_models(a: &RedteamArgs, names: &[String]) -> bool {
    names
        .iter()
        .filter(|n| gauntlet_agents::ChatTarget::from_name(n).is_none())
        .chain(a.judge.iter())
        .chain(a.attacker.iter())
        .chain(a.simulator.iter())
        .any(|n| gauntlet_agents::builtin_target(n).is_none())
}

/// A case an earlier attempt of a resumed red-team run stored.
pub(crate) fn stored_case(
    store: Option<&gauntlet_store::Store>,
    run_id: Option<&str>,
    i: usize,
) -> std::io::Result<gauntlet_redteam::RtCase> {
    let (Some(st), Some(id)) = (store, run_id) else {
        return Err(std::io::Error::other("no store"));
    };
    let raw = st
        .item(id, i)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other(format!("case {i} is not in the store")))?;
    serde_json::from_str(&raw).map_err(std::io::Error::other)
}

/// Stores one red-team case as it completes.
pub(crate) fn store_case(
    w: &mut gauntlet_store::Writer<'_>,
    c: &gauntlet_redteam::RtCase,
) -> std::io::Result<()> {
    let outcome = serde_json::to_value(c.judgement.outcome)?;
    w.item(
        c.index,
        "redteam-case",
        outcome.as_str(),
        &serde_json::to_string(c)?,
    )
    .map_err(std::io::Error::other)
}

/// What the red team's cases add up to as they come: errored causes, and the progress line.
pub(crate) struct CasesSeen {
    pub(crate) causes: gauntlet_report::causes::Causes,
    pub(crate) tally: gauntlet_redteam::job::Tally,
    pub(crate) ticker: Option<progress::Ticker>,
    pub(crate) total: usize,
}

impl CasesSeen {
    fn case(&mut self, c: &gauntlet_redteam::RtCase) {
        if c.judgement.outcome == gauntlet_judge::redteam::RtOutcome::Error {
            self.causes.add(c.error.as_deref());
        }
        self.tally.add(c.judgement.outcome);
        if let Some(t) = &self.ticker {
            let t_ = &self.tally;
            let done = (t_.passing + t_.failing + t_.errored + t_.unjudged) as usize;
            t.set(
                gauntlet_report::progress::redteam_line(t_, self.total),
                done == self.total,
            );
        }
    }
}

pub(crate) fn cmd_redteam(mut a: RedteamArgs) -> Result<ExitCode> {
    interrupt::install();
    let gates = parse_gates(&a.fail_on, gauntlet_report::gate::REDTEAM_METRICS)?;
    let store = open_store(&a.store)?;
    let resumed = resume_redteam_args(&mut a, store.as_ref())?;
    let catalogue = gauntlet_redteam::catalog::builtin()
        .map_err(|e| anyhow::anyhow!("the vulnerability catalogue is broken:\n{}", e.join("\n")))?;
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let file = cfg.redteam.clone().unwrap_or_default();
    let (mut rcfg, mut vulns, names) = plan_redteam(&mut a, &file, &catalogue, !gates.is_empty())?;
    // The judge's refusal screen compiles while the simulator and the first cases wait on their models.
    gauntlet_core::refusal::warm_up_in_background();
    let needs = redteam_needs_models(&a, &names);
    let mut models = a.models.build(&cfg, needs)?;
    if let (Some(st), Some(info)) = (&store, &resumed) {
        models.carry(st, &info.id)?;
    }
    let targets = redteam_targets(&models, &cfg, &names)?;
    let pool_for = |spec: &Option<String>, role: &str, flag: &str| {
        spec.as_deref()
            .map(|m| models.pool(role, m, flag))
            .transpose()
    };
    let judge_pool = pool_for(&a.judge, "judge", "--judge")?;
    let attacker_pool = pool_for(&a.attacker, "attacker", "--attacker")?;
    let simulator_pool = pool_for(&a.simulator, "simulator", "--simulator")?;
    models.preflight(a.no_preflight)?;
    let any_pool = judge_pool.is_some() || attacker_pool.is_some() || simulator_pool.is_some();
    let handle = any_pool.then(|| models.handle()).transpose()?;
    let judge_model = judge_pool.as_ref().zip(handle.as_ref()).map(|(p, h)| {
        gauntlet_judge::redteam::JudgeModel {
            model: p.as_ref(),
            runtime: h,
        }
    });
    let attacker = attacker_of(&attacker_pool, &handle);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = if models.any() { 16.max(cores) } else { cores };
    rcfg.concurrency = a.concurrency.unwrap_or(workers);
    let simulated = simulate_seeds(
        resumed.as_ref(),
        attacker_of(&simulator_pool, &handle),
        &mut vulns,
        &rcfg,
    )?;
    let named = [a.judge.clone(), a.attacker.clone(), a.simulator.clone()];
    let head = gauntlet_redteam::job::Head::json(&rcfg, &names, &vulns, named)?;
    let total = gauntlet_redteam::job::plan_len(&vulns, targets.len(), &rcfg);
    let (run_id, done) = record_redteam(
        store.as_ref(),
        resumed.as_ref(),
        &a,
        &head,
        total,
        &vulns,
        &simulated,
    )?;
    if let Some(id) = &run_id {
        interrupt::recording(a.store.path.clone(), id.clone(), "redteam");
    }
    let mut store_writer = match (&store, &run_id) {
        (Some(st), Some(id)) => Some(st.writer(id).with_ledger(models.ledger_source())),
        _ => None,
    };
    let mut writer = json_document(a.json.as_deref(), &head, "cases")?;
    let mut seen = CasesSeen {
        causes: Default::default(),
        tally: Default::default(),
        ticker: progress::Ticker::start(total, "cases", a.quiet),
        total,
    };
    let mut sink = |c: Option<&gauntlet_redteam::RtCase>| -> std::io::Result<()> {
        // Nothing came for a while: what is stored is committed now, as the next case may take minutes.
        let Some(c) = c else {
            return store_writer
                .as_mut()
                .map_or(Ok(()), |w| w.commit().map_err(std::io::Error::other));
        };
        seen.case(c);
        if let Some(w) = writer.as_mut() {
            w.item(c)?;
        }
        match store_writer.as_mut() {
            Some(sw) if !done.get(c.index).copied().unwrap_or(false) => store_case(sw, c)?,
            _ => {}
        }
        models.check_breakers()
    };
    let mut load = |i: usize| stored_case(store.as_ref(), run_id.as_deref(), i);
    let resume = run_id.as_ref().map(|_| gauntlet_redteam::job::Resume {
        done: &done,
        load: &mut load,
    });
    let started = Instant::now();
    let result = gauntlet_redteam::run(
        &catalogue,
        &vulns,
        &targets,
        &rcfg,
        judge_model,
        attacker,
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
            finish_recorded(store.as_ref(), run_id.as_deref(), &models, None)?;
            return stopped_early(&e, run_id.as_deref()).ok_or_else(|| e.into());
        }
    };
    report.simulator = simulated;
    finish_recorded(
        store.as_ref(),
        run_id.as_deref(),
        &models,
        Some(&serde_json::to_value(&report)?),
    )?;
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
    if let Some(id) = &run_id {
        eprintln!(
            "red-team run {id} recorded in {} (gauntlet report {id}{} --format html|md|junit|json|jsonl)",
            a.store.path.display(),
            gauntlet_store::store_flag(&a.store.path)
        );
    }
    let gated = gate_exit(&gates, &gauntlet_report::gate::redteam_metrics(&report));
    Ok(errored_exit(&seen.causes, "cases", a.ignore_errors).unwrap_or(gated))
}
