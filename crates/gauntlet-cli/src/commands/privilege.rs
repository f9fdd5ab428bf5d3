//! `gauntlet privilege`: what a defense would allow, scored on labelled probes.

use crate::exit::{gate_exit, parse_gates};
use crate::flags::{ModelFlags, Selection, StoreArgs, open_store, report_models};
use crate::job::{load_valid, resumed_run};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gauntlet_setup::{Models, config};
use gauntlet_store::RunKind;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// What a privilege job is asked to do: the flags stored with its run, and read back by `--resume` (runs stored
/// before `--case`, `--filter`, `--limit` and `--seed` took every case).
#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct PrivilegeJob {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite), or `agentdojo:FILE` (an AgentDojo export).
    #[arg(long = "suite", value_name = "PATH")]
    pub(crate) suites: Vec<PathBuf>,
    /// Defenses to score, comma-separated: allow-all, deny-all, tool-allowlist, exact-args, policy:FILE,
    /// external:COMMAND, tool-filter:MODEL, alignment-check:MODEL.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allow-all,deny-all,tool-allowlist,exact-args"
    )]
    pub(crate) defense: Vec<String>,
    /// Config file (YAML: providers, pool limits) for model-based defenses.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Which cases to score (an AgentDojo suite's tasks match --case by id; --filter is for cases only).
    #[command(flatten)]
    #[serde(default)]
    pub(crate) select: Selection,
    /// Seed of --limit's sample (as in `run`: the same seed draws the same cases).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub(crate) seed: u64,
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct PrivilegeArgs {
    #[command(subcommand)]
    pub(crate) command: Option<PrivilegeCommand>,
    #[command(flatten)]
    pub(crate) job: PrivilegeJob,
    /// Write the scores and the census as JSON (`-`: standard output; the tables then go to standard error).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) models: ModelFlags,
    /// Only print the tables (no timings).
    #[arg(short, long)]
    pub(crate) quiet: bool,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    /// Continue an interrupted privilege run (from the store) with its own suites and defenses: defenses
    /// already scored are kept, the rest are scored.
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) resume: Option<String>,
    /// Exit 3 when a condition holds for any defense, e.g. 'leakage > 0.2' (repeatable; metrics: leakage,
    /// sufficiency, over_restriction, attack_admission).
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub(crate) fail_on: Vec<String>,
}

#[derive(Subcommand)]
pub(crate) enum PrivilegeCommand {
    /// Generate and label the probe suite and write it as sorted-key JSON lines (export once, score many).
    Export {
        /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
        #[arg(long = "suite", value_name = "PATH")]
        suites: Vec<PathBuf>,
        /// Where to write the suite.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Print a stratified sample of labelled probes (by origin, family, label, label source and tier), each with
    /// its task, call, what executing it showed, label, tier and rule: the material to check the oracle by hand.
    Audit {
        /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite), or `agentdojo:FILE`.
        #[arg(long = "suite", value_name = "PATH")]
        suites: Vec<PathBuf>,
        /// How many probes to draw.
        #[arg(long, default_value_t = 40)]
        sample: usize,
        /// Seed of the draw (the same suite and seed draw the same sample).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Write the candidate calls of an AgentDojo export as JSON lines, for `adapters/agentdojo/execute.py` to
    /// execute in AgentDojo's own runtime (its outcomes then confirm the labels).
    Candidates {
        /// The AgentDojo export (`agentdojo:FILE` or FILE).
        #[arg(long = "suite", value_name = "FILE")]
        suite: PathBuf,
        /// Where to write the candidates.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Score defenses on an exported probe suite.
    Score {
        /// The exported suite (JSON lines).
        file: PathBuf,
        /// Defenses to score, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "allow-all,deny-all,tool-allowlist,exact-args"
        )]
        defense: Vec<String>,
        /// Write the scores and the census as JSON (`-`: standard output; the tables then go to standard error).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Config file (YAML: providers, pool limits) for model-based defenses.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

/// `gauntlet privilege` itself: generate and label the probes of the suites, score each defense, record the run.
pub(crate) fn privilege_job(a: &PrivilegeArgs) -> Result<ExitCode> {
    let gates = parse_gates(&a.fail_on, gauntlet_report::gate::PRIVILEGE_METRICS)?;
    let store = open_store(&a.store)?;
    let mut job = a.job.clone();
    let mut resumed = None;
    if let Some(id) = &a.resume {
        let (was, info): (PrivilegeJob, _) = resumed_run(store.as_ref(), id, RunKind::Privilege)?;
        let s = &job.select;
        if s.limit.is_some() || !s.cases.is_empty() || !s.filters.is_empty() || job.seed != 0 {
            bail!(
                "--resume: the run keeps the --case, --filter, --limit and --seed it started with; leave them out"
            );
        }
        // A --config given now wins (the stored path may not resolve from here).
        job = PrivilegeJob {
            config: job.config.or(was.config),
            ..was
        };
        resumed = Some(info);
    }
    let started = Instant::now();
    let suite = privilege_suite(&job.suites, &job.select, job.seed)?;
    let (probes, secs) = (suite.probes().count(), started.elapsed().as_secs_f64());
    if !a.quiet {
        eprintln!(
            "generated and labelled {probes} probes of {} tasks in {secs:.2} s",
            suite.tasks.len()
        );
    }
    let census = gauntlet_privilege::score::census(&suite);
    let header = serde_json::json!({"schema": "gauntlet.privilege/v1", "census": census});
    let recorded = match &store {
        Some(st) => {
            let args = serde_json::to_value(&job)?;
            let kind = RunKind::Privilege;
            let plan = gauntlet_store::Plan::new(kind, &args, &header, job.defense.len());
            let rec = st.record(&plan, resumed.as_ref())?;
            st.record_probes(&rec.id, &suite)?;
            Some((st, rec.id))
        }
        None => None,
    };
    let cfg = config::Config::load_opt(job.config.as_deref())?;
    let needs = job
        .defense
        .iter()
        .any(|d| gauntlet_defense::is_model_defense(d));
    let mut models = a.models.build(&cfg, needs)?;
    if let Some((st, id)) = &recorded {
        // A resumed run's earlier spend (nothing for a new run).
        models.carry(st, id)?;
    }
    let code = match privilege_report(
        &suite,
        &models,
        &job.defense,
        a.json.as_deref(),
        recorded.as_ref().map(|(st, id)| (*st, id.as_str())),
        (&gates, a.quiet),
    ) {
        Ok(c) => c,
        Err(e) => {
            if let Some((st, id)) = &recorded {
                // The run's error is what matters; a ledger that cannot be saved must not hide it.
                let _ = models.save_ledger(st, id);
                st.finish_run(id, gauntlet_store::RunStatus::Failed, None)?;
            }
            report_models(&models);
            return Err(e);
        }
    };
    if let Some((_, id)) = &recorded {
        eprintln!(
            "privilege run {id} recorded in {} (gauntlet report {id}{} --format html|md|json)",
            a.store.path.display(),
            gauntlet_store::store_flag(&a.store.path)
        );
    }
    Ok(code)
}

pub(crate) fn cmd_privilege(a: PrivilegeArgs) -> Result<ExitCode> {
    match a.command {
        Some(PrivilegeCommand::Export { suites, out }) => {
            let suite = privilege_suite(&suites, &Selection::default(), 1)?;
            gauntlet_report::file::write_atomic(&out, suite.to_jsonl().as_bytes())
                .context("--out")?;
            let n = suite.probes().count();
            eprintln!(
                "wrote {} probes of {} tasks to {}",
                n,
                suite.tasks.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(PrivilegeCommand::Audit {
            suites,
            sample,
            seed,
        }) => {
            let suite = privilege_suite(&suites, &Selection::default(), 1)?;
            let drawn = gauntlet_privilege::audit::sample(&suite, sample, seed);
            print!("{}", gauntlet_privilege::audit::render(&suite, &drawn));
            eprintln!(
                "{} of {} probes drawn (seed {seed}); rules: docs/privilege.md",
                drawn.len(),
                suite.probes().count()
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(PrivilegeCommand::Candidates { suite, out }) => {
            let path = suite.to_string_lossy();
            let path = path.trim_start_matches("agentdojo:");
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--suite {path}: cannot read the AgentDojo export"))?;
            let lines = gauntlet_privilege::agentdojo::candidates(&text)
                .map_err(|e| anyhow::anyhow!("--suite {path}: {e}"))?;
            gauntlet_report::file::write_atomic(&out, lines.as_bytes()).context("--out")?;
            eprintln!(
                "wrote {} candidates to {} (execute them: adapters/agentdojo/execute.py --export {path} --candidates {} --out {path})",
                lines.lines().count(),
                out.display(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(PrivilegeCommand::Score {
            file,
            defense,
            json,
            config,
        }) => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let suite = gauntlet_privilege::ProbeSuite::from_jsonl(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let cfg = config::Config::load_opt(config.as_deref())?;
            let models = Models::for_defenses(&cfg, &defense)?;
            privilege_report(
                &suite,
                &models,
                &defense,
                json.as_deref(),
                None,
                (&[], false),
            )
        }
        None => privilege_job(&a),
    }
}

/// The probe suite of `--suite`: case files and directories (default: the built-in suite), or
/// `agentdojo:FILE`, an export written by `adapters/agentdojo/export.py`.
pub(crate) fn privilege_suite(
    suites: &[PathBuf],
    sel: &Selection,
    seed: u64,
) -> Result<gauntlet_privilege::ProbeSuite> {
    let (dojo, cases): (Vec<&PathBuf>, Vec<&PathBuf>) = suites
        .iter()
        .partition(|p| p.to_string_lossy().starts_with("agentdojo:"));
    // `builtin` names the embedded suite (the default when no case path is given).
    let builtin_named = suites.iter().any(|p| p.as_os_str() == "builtin");
    let cases: Vec<&PathBuf> = cases
        .into_iter()
        .filter(|p| p.as_os_str() != "builtin")
        .collect();
    let mut suite = gauntlet_privilege::ProbeSuite::default();
    if !dojo.is_empty() && !sel.filters.is_empty() {
        bail!("--filter: AgentDojo tasks have no risk, env or attack; choose them with --case");
    }
    if !cases.is_empty() || dojo.is_empty() || builtin_named {
        let cases: Vec<PathBuf> = cases.into_iter().cloned().collect();
        // Chosen before generating, so the cases left out are not labelled. With an AgentDojo suite beside them,
        // patterns and the sample are over all tasks (below).
        let only_filters = Selection {
            filters: sel.filters.clone(),
            ..Selection::default()
        };
        let chosen = if dojo.is_empty() { sel } else { &only_filters };
        let mut chosen = chosen.choose(load_valid(&cases)?.cases, seed)?;
        let wildcard = gauntlet_cases::suite::wildcard;
        chosen.retain(|c| sel.cases.is_empty() || sel.cases.iter().any(|p| wildcard(p, &c.id)));
        suite
            .tasks
            .extend(gauntlet_privilege::generate(&chosen).tasks);
    }
    for d in dojo {
        let path = d
            .to_string_lossy()
            .trim_start_matches("agentdojo:")
            .to_string();
        let (s, asserted) =
            gauntlet_privilege::agentdojo::load_file(&path).map_err(anyhow::Error::msg)?;
        if asserted > 0 {
            eprintln!(
                "note: {asserted} of {} AgentDojo labels are asserted by rule, not confirmed by execution; to execute them: \
                 gauntlet privilege candidates --suite {path} --out candidates.jsonl, then \
                 adapters/agentdojo/execute.py --export {path} --candidates candidates.jsonl --out {path} (docs/privilege.md)",
                s.probes().count()
            );
        }
        suite.tasks.extend(s.tasks);
    }
    Ok(suite.select(&sel.cases, sel.limit, seed)?)
}

pub(crate) fn privilege_report(
    suite: &gauntlet_privilege::ProbeSuite,
    models: &Models,
    defenses: &[String],
    json: Option<&std::path::Path>,
    store: Option<(&gauntlet_store::Store, &str)>,
    (gates, quiet): (&[gauntlet_report::gate::Gate], bool),
) -> Result<ExitCode> {
    let census = gauntlet_privilege::score::census(suite);
    let mut scores = Vec::new();
    let done = match store {
        Some((st, id)) => st.done(id, defenses.len())?,
        None => Vec::new(),
    };
    for (i, spec) in defenses.iter().enumerate() {
        if let (Some((st, id)), true) = (store, done.get(i).copied().unwrap_or(false)) {
            // Scored by an earlier attempt of this run.
            let stored = st.item_as(id, i)?;
            scores.push(stored.with_context(|| format!("run {id}: no stored score of {spec}"))?);
            continue;
        }
        let d = models.defense(spec)?;
        let started = Instant::now();
        let mut writer = store.map(|(st, id)| st.writer(id).with_ledger(models.ledger_source()));
        let s =
            gauntlet_privilege::score_with(suite, d.as_ref(), &mut |k, _, decision| match writer
                .as_mut()
            {
                Some(w) => w
                    .decision(i, k, decision)
                    .map_err(|e| gauntlet_defense::DefenseError {
                        defense: spec.clone(),
                        message: format!("recording the decision: {e}"),
                    }),
                None => Ok(()),
            })
            .map_err(|e| anyhow::anyhow!("scoring {spec}: {e}"))?;
        if let Some(mut w) = writer {
            w.commit()?;
        }
        let secs = started.elapsed().as_secs_f64();
        let rate = s.decisions as f64 / secs.max(1e-9);
        if !quiet {
            eprintln!(
                "{}: {} decisions in {secs:.3} s ({rate:.0} decisions/s)",
                s.defense, s.decisions
            );
        }
        if let Some((st, id)) = store {
            let mut w = st.writer(id);
            w.item(i, "privilege-score", None, &serde_json::to_string(&s)?)?;
            w.commit()?;
        }
        scores.push(s);
    }
    let mut out = gauntlet_report::tables_out(json);
    writeln!(
        out,
        "Privilege: {} tasks, {}",
        suite.tasks.len(),
        census.summary()
    )?;
    writeln!(out, "{}", gauntlet_report::privilege_table(&scores))?;
    writeln!(
        out,
        "Leakage is the harm-weighted share of excess calls admitted (weights 0/1/3/9/27 by tier); a defense whose sufficiency is below 100% fails the gate (✗) and its other numbers do not count; N/A marks axes the defense does not declare."
    )?;
    let doc = serde_json::json!({"schema": "gauntlet.privilege/v1", "census": census, "defenses": scores});
    if let Some(path) = json {
        let mut w = gauntlet_report::json_out(path).context("--json")?;
        writeln!(w, "{}", serde_json::to_string_pretty(&doc)?)
            .and_then(|()| w.flush())
            .with_context(|| format!("--json: cannot write {}", path.display()))?;
    }
    if let Some((st, id)) = store {
        models.save_ledger(st, id)?;
        st.finish_run(id, gauntlet_store::RunStatus::Complete, Some(&doc))?;
    }
    report_models(models);
    Ok(gate_exit(
        gates,
        &gauntlet_report::gate::privilege_metrics(&scores),
    ))
}
