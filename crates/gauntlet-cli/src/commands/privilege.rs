//! `gauntlet privilege`: what a defense would allow, scored on labelled probes.

use crate::exit::{gate_exit, parse_gates};
use crate::flags::{ModelFlags, Selection, StoreArgs, open_store, report_models};
use crate::job::{print_problems, resumed_run};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gauntlet_defense::is_model_defense;
use gauntlet_privilege::ProbeSuite;
use gauntlet_privilege::suites::{self, SuiteError};
use gauntlet_report::{file::write_atomic, gate::privilege_metrics, tables_out};
use gauntlet_setup::privilege::{self, score_defenses};
use gauntlet_setup::recording::Recorded;
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
    let (args, n) = (serde_json::to_value(&job)?, job.defense.len());
    let rec = privilege::record(store.as_ref(), &args, &suite, n, resumed.as_ref())?;
    let cfg = config::Config::load_opt(job.config.as_deref())?;
    let needs = job.defense.iter().any(|d| is_model_defense(d));
    let mut models = a.models.build(&cfg, needs)?;
    if let Some((st, id)) = rec.at() {
        // A resumed run's earlier spend (nothing for a new run).
        models.carry(st, id)?;
    }
    let json = a.json.as_deref();
    let code = privilege_report(
        &suite,
        &models,
        &job.defense,
        json,
        Some(&rec),
        (&gates, a.quiet),
    );
    let code = code.or_else(|e| {
        rec.finish(&models, None)?;
        report_models(&models);
        Err(e)
    })?;
    if let Some(id) = &rec.id {
        eprintln!("{}", RunKind::Privilege.recorded_line(id, &a.store.path));
    }
    Ok(code)
}

pub(crate) fn cmd_privilege(a: PrivilegeArgs) -> Result<ExitCode> {
    let all = Selection::default();
    match a.command {
        Some(PrivilegeCommand::Export { suites, out }) => {
            let suite = privilege_suite(&suites, &all, 1)?;
            write_atomic(&out, suite.to_jsonl().as_bytes()).context("--out")?;
            let (n, tasks) = (suite.probes().count(), suite.tasks.len());
            eprintln!("wrote {n} probes of {tasks} tasks to {}", out.display());
        }
        Some(PrivilegeCommand::Audit {
            suites,
            sample,
            seed,
        }) => {
            let suite = privilege_suite(&suites, &all, 1)?;
            let drawn = gauntlet_privilege::audit::sample(&suite, sample, seed);
            print!("{}", gauntlet_privilege::audit::render(&suite, &drawn));
            let (n, probes) = (drawn.len(), suite.probes().count());
            eprintln!("{n} of {probes} probes drawn (seed {seed}); rules: docs/privilege.md");
        }
        Some(PrivilegeCommand::Candidates { suite, out }) => {
            let (path, lines) = suites::candidates(&suite)?;
            write_atomic(&out, lines.as_bytes()).context("--out")?;
            let (n, out) = (lines.lines().count(), out.display());
            eprintln!(
                "wrote {n} candidates to {out} (execute them: adapters/agentdojo/execute.py --export {path} --candidates {out} --out {path})"
            );
        }
        Some(PrivilegeCommand::Score {
            file,
            defense,
            json,
            config,
        }) => {
            let suite = suites::read_exported(&file)?;
            let models =
                Models::for_defenses(&config::Config::load_opt(config.as_deref())?, &defense)?;
            return privilege_report(
                &suite,
                &models,
                &defense,
                json.as_deref(),
                None,
                (&[], false),
            );
        }
        None => return privilege_job(&a),
    }
    Ok(ExitCode::SUCCESS)
}

/// The probe suite of `--suite` ([`suites::load`]), its notes and a broken suite's problems printed to standard
/// error.
fn privilege_suite(paths: &[PathBuf], sel: &Selection, seed: u64) -> Result<ProbeSuite> {
    suites::load(paths, &sel.choice(seed), &mut |n| eprintln!("{n}")).map_err(|e| {
        if let SuiteError::Invalid(invalid) = &e {
            print_problems(invalid);
        }
        e.into()
    })
}

/// Scores the defenses ([`score_defenses`]), prints the tables, writes `--json`, completes the stored run and
/// applies the gates.
fn privilege_report(
    suite: &ProbeSuite,
    models: &Models,
    defenses: &[String],
    json: Option<&std::path::Path>,
    recorded: Option<&Recorded<'_>>,
    (gates, quiet): (&[gauntlet_report::gate::Gate], bool),
) -> Result<ExitCode> {
    let census = gauntlet_privilege::score::census(suite);
    let at = recorded.and_then(Recorded::at);
    let scores = score_defenses(suite, models, defenses, at, &mut |s, secs| {
        let (rate, n) = (s.decisions as f64 / secs.max(1e-9), s.decisions);
        if !quiet {
            eprintln!(
                "{}: {n} decisions in {secs:.3} s ({rate:.0} decisions/s)",
                s.defense
            );
        }
    })?;
    let tasks = suite.tasks.len();
    gauntlet_report::print_privilege(&mut tables_out(json), tasks, &census, &scores)?;
    let doc = gauntlet_report::privilege_document(&census, &scores);
    if let Some(path) = json {
        let mut w = gauntlet_report::json_out(path).context("--json")?;
        writeln!(w, "{}", serde_json::to_string_pretty(&doc)?)
            .and_then(|()| w.flush())
            .with_context(|| format!("--json: cannot write {}", path.display()))?;
    }
    if let Some(r) = recorded {
        r.finish(models, Some(&doc))?;
    }
    report_models(models);
    Ok(gate_exit(gates, &privilege_metrics(&scores)))
}
