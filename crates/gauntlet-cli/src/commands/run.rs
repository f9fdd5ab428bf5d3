//! `gauntlet run`: safety-case episodes over case × setting × target × repetition.

use crate::exit::{CauseSink, errored_exit, gate_exit, parse_gates, stopped_early};
use crate::flags::{
    ModelFlags, Selection, StoreArgs, default_judge_tokens, open_store, report_models,
};
use crate::job::{finish, json_document, load_valid, recording, resumed_run};
use anyhow::{Context, Result};
use clap::Args;
use gauntlet_cases::{PreparedCase, run};
use gauntlet_setup::interrupt;
use gauntlet_setup::{config, recording::Recorded, run as setup_run};
use gauntlet_store::RunKind;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, serde::Serialize, serde::Deserialize)]
pub(crate) struct RunArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    #[arg(long = "suite", value_name = "PATH")]
    pub(crate) suites: Vec<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub(crate) select: Selection,
    /// Settings to run, comma-separated: benign, direct, indirect, multi.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "benign,direct,indirect,multi"
    )]
    pub(crate) settings: Vec<gauntlet_core::Setting>,
    /// Targets (repeatable): a reference agent (reference, compliant, refuser, cautious), a model
    /// (`provider/model`, e.g. openai/gpt-4.1-mini), an HTTP app (`http://…`), or an agent process whose tools
    /// come over MCP (`cmd:COMMAND`, see docs/targets.md). Default: the four reference agents.
    #[arg(long = "agent", value_name = "TARGET")]
    pub(crate) agents: Vec<String>,
    /// Configuration file (YAML): providers, target settings, pool limits.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub(crate) models: ModelFlags,
    /// The defense in the gateway: allow-all, deny-all, tool-allowlist, exact-args, policy:FILE or
    /// external:COMMAND (see docs/defenses.md).
    #[arg(long, default_value = "allow-all", value_name = "DEFENSE")]
    pub(crate) defense: String,
    /// The attacker on the user channel: `scripted` (the deterministic escalation ladder) or a model
    /// (`provider/model`) that adapts each turn on top of the ladder.
    #[arg(long, default_value = "scripted", value_name = "CONTROLLER")]
    pub(crate) controller: String,
    /// A judge model (`provider/model`) that decides, with each case's rubric, the episodes its checks leave to a
    /// judge (harmful content such as harassment or defamation). Without it they stay undetermined, counted
    /// apart.
    #[arg(long, value_name = "MODEL")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) judge: Option<String>,
    /// The longest reply the judge may write, in tokens.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    #[serde(default = "default_judge_tokens")]
    pub(crate) judge_max_tokens: u32,
    /// Model steps per user turn of an LLM agent.
    #[arg(long, default_value_t = 10)]
    pub(crate) max_steps: u32,
    /// Repetitions of each (case, setting, target).
    #[arg(long, default_value_t = 1)]
    pub(crate) repeat: u32,
    /// Episodes run at once (default: the number of cores).
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Seed for the controllers' choices.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Turn budget per episode.
    #[arg(long, default_value_t = 10)]
    pub(crate) max_turns: u32,
    /// Run only shard I of N (0 ≤ I < N: the episodes whose place in the whole plan is I modulo N), for a run
    /// spread over machines; `gauntlet runs merge` joins the shards' stores into the whole run.
    #[arg(long, value_name = "I/N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<String>,
    /// Write every episode (trace, gateway log, verdict, evidence) and the aggregates to this JSON file (`-`:
    /// standard output; the tables then go to standard error).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Only print the tables (no progress).
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// The level the slice tables (risk × environment, environment × attack, attack × risk) aggregate at: the
    /// first level of each taxonomy (`group`) or its leaves (`leaf`). `gauntlet report --by` can show the other.
    #[arg(long, value_parser = crate::flags::slice_level(), default_value = "group")]
    #[serde(skip)]
    pub(crate) by: gauntlet_cases::SliceLevel,
    #[command(flatten)]
    #[serde(skip)]
    pub(crate) store: StoreArgs,
    /// Continue an interrupted run (from the store; `latest` or a unique start of its id will do) with its own
    /// arguments: finished episodes are kept, the rest are run. Only --store, --json, --quiet, --concurrency,
    /// --ignore-errors and --fail-on apply alongside it.
    #[arg(long, value_name = "RUN_ID")]
    #[serde(skip)]
    pub(crate) resume: Option<String>,
    /// Exit 3 when a condition holds for any target, e.g. 'asr > 0.10', 'utility < 0.9' (repeatable; metrics:
    /// asr, asr.SETTING, utility, utility.SETTING, errored, errored_rate, undetermined (share of episodes),
    /// undetermined_count).
    #[arg(long = "fail-on", value_name = "EXPR")]
    #[serde(skip)]
    pub(crate) fail_on: Vec<String>,
    /// Exit 0 even when episodes errored (they are always kept, counted and excluded from rates); without it, a
    /// run with an errored episode exits 1.
    #[arg(long)]
    #[serde(default)]
    pub(crate) ignore_errors: bool,
    /// Do not check before the job starts that every model endpoint and app it will call can be reached.
    #[arg(long)]
    #[serde(skip)]
    pub(crate) no_preflight: bool,
}

/// With `--resume ID`: the stored arguments of run ID replace `a`'s, but for the flags that do not change what is
/// run (output, concurrency, store, gates). Returns the run to resume.
pub(crate) fn resume_run_args(
    a: &mut RunArgs,
    store: Option<&gauntlet_store::Store>,
) -> Result<Option<gauntlet_store::RunInfo>> {
    let Some(id) = a.resume.take() else {
        return Ok(None);
    };
    let (mut stored, info): (RunArgs, _) = resumed_run(store, &id, RunKind::Run)?;
    stored.json = a.json.take();
    stored.quiet = a.quiet;
    stored.by = a.by;
    stored.ignore_errors = a.ignore_errors;
    stored.no_preflight = a.no_preflight;
    stored.concurrency = a.concurrency.or(stored.concurrency);
    stored.store = a.store.clone();
    stored.fail_on = std::mem::take(&mut a.fail_on);
    *a = stored;
    Ok(Some(info))
}

pub(crate) fn cmd_run(mut a: RunArgs) -> Result<ExitCode> {
    interrupt::install();
    let gates = parse_gates(&a.fail_on, gauntlet_report::gate::RUN_METRICS)?;
    let store = open_store(&a.store)?;
    let resumed = resume_run_args(&mut a, store.as_ref())?;
    let mut config = setup_run::plan(&setup_run::Ask {
        settings: &a.settings,
        repeat: a.repeat,
        max_turns: a.max_turns,
        concurrency: a.concurrency,
        seed: a.seed,
        shard: a.shard.as_deref(),
        gated: !gates.is_empty(),
    })?;
    let names = setup_run::target_names(&a.agents);
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let needs = setup_run::needs_models(&a.agents, &a.controller, a.judge.is_some(), &a.defense);
    let mut models = a.models.build(&cfg, needs)?;
    if let (Some(st), Some(info)) = (&store, &resumed) {
        models.carry(st, &info.id)?;
    }
    let targets = setup_run::targets(&models, &cfg, &names, a.max_steps)?;
    let attacker = models.controller(&a.controller)?;
    let judge = models.case_judge(a.judge.as_deref(), a.judge_max_tokens)?;
    let chosen = a.select.choose(load_valid(&a.suites)?.cases, a.seed)?;
    let cases: Vec<PreparedCase> = chosen.into_iter().map(PreparedCase::new).collect();
    let concurrency = a.concurrency.unwrap_or(models.default_workers());
    config.concurrency = concurrency;
    config.by = a.by;
    let defense = models.defense(&a.defense)?;
    let defense = defense.as_ref();
    models.preflight(a.no_preflight)?;
    let ids: Vec<String> = cases.iter().map(|c| c.case.id.clone()).collect();
    let header = gauntlet_report::json::RunHeader::new(&config, &names, defense.name(), &ids);
    let total = gauntlet_cases::run::plan_len(&cases, targets.len(), &config);
    let (args, head) = (serde_json::to_value(&a)?, serde_json::to_value(&header)?);
    let plan = gauntlet_store::Plan::new(RunKind::Run, &args, &head, total);
    let rec = Recorded::start(store.as_ref(), &plan, resumed.as_ref())?;
    let kind = (RunKind::Run, "run");
    recording(&rec, kind, resumed.is_some(), a.quiet, &a.store.path);
    let started = Instant::now();
    let ticker = gauntlet_report::progress::Ticker::start(total, "episodes", a.quiet);
    let progress = |p: &gauntlet_cases::ProgressInfo| {
        if let Some(t) = &ticker {
            t.set(
                gauntlet_report::progress::run_line(
                    p,
                    started.elapsed().as_secs_f64(),
                    models.cost(),
                    concurrency,
                ),
                p.done == p.total,
            );
        }
    };
    let mut json_sink = json_document(a.json.as_deref(), &header, "episodes")?;
    let mut store_sink = rec.writer(&models).map(|w| w.skipping(&rec.done));
    let mut load = |i: usize| rec.episode(i);
    let resume = rec.id.as_ref().map(|_| gauntlet_cases::run::Resume {
        done: &rec.done,
        load: &mut load,
    });
    let mut causes = CauseSink(Default::default(), &models);
    let result = {
        let mut tee = gauntlet_cases::run::Tee(vec![&mut causes]);
        if let Some(j) = json_sink.as_mut() {
            tee.0.push(j);
        }
        if let Some(s) = store_sink.as_mut() {
            tee.0.push(s);
        }
        run(
            &cases,
            &targets,
            defense,
            attacker.as_ref(),
            judge.as_ref(),
            &config,
            &mut tee,
            &progress,
            resume,
        )
    };
    // Before anything else can fail: what was written still parses, the episodes so far and why the run stopped.
    if let Err(e) = &result
        && let Some(j) = json_sink.take()
    {
        let _ = j.finish("stopped", &e.to_string());
    }
    if let Some(mut s) = store_sink {
        s.commit()?;
    }
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            finish(&rec, &models, None)?;
            if let Some(code) = stopped_early(&e, rec.id.as_deref()) {
                return Ok(code);
            }
            return Err(e).context(match &a.json {
                Some(p) => format!("writing {}", p.display()),
                None => "recording the run".into(),
            });
        }
    };
    if let (Some(j), Some(path)) = (json_sink, &a.json) {
        j.finish("summary", &summary)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    finish(&rec, &models, Some(&serde_json::to_value(&summary)?))?;
    let elapsed = started.elapsed();
    gauntlet_report::print_run(
        &mut gauntlet_report::tables_out(a.json.as_deref()),
        &header,
        &summary,
    )?;
    if !a.quiet {
        report_models(&models);
        let (n, secs) = (summary.episodes, elapsed.as_secs_f64());
        let per = secs * 1e3 / n.max(1) as f64;
        eprintln!("{n} episodes in {secs:.2} s ({per:.3} ms/episode, {concurrency} workers)");
        if let Some(p) = &a.json {
            eprintln!("wrote {}", p.display());
        }
        if let Some(id) = &rec.id {
            eprintln!("{}", RunKind::Run.recorded_line(id, &a.store.path));
        }
    }
    let gated = gate_exit(&gates, &gauntlet_report::gate::run_metrics(&summary));
    Ok(errored_exit(&causes.0, "episodes", a.ignore_errors).unwrap_or(gated))
}
