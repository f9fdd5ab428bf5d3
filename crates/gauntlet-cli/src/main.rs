//! The `gauntlet` binary: a thin shell over the library crates.

mod gateway;
mod interrupt;
mod progress;
mod stored;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use gauntlet_cases::{Loaded, PreparedCase, RunConfig, Source, run};
use gauntlet_core::Setting;
use gauntlet_setup::{Models, config};
use gauntlet_store::RunKind;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// mimalloc instead of the system allocator: an episode builds and drops many small JSON values on every worker
/// thread, and glibc's malloc spent about half the harness's time in its arena locks (`bench/run.sh`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gauntlet: evidence-grounded safety testing of LLM agents and their defenses.
#[derive(Parser)]
#[command(
    name = "gauntlet",
    version,
    about = "Gauntlet: tests LLM agents and the defenses that guard them, and decides from evidence (the final world state, the tool log, then the reply)",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Read variables (API keys, base URLs) from this file too; the environment wins. Default: `.env`, if any.
    #[arg(long, global = true, value_name = "FILE")]
    env_file: Option<PathBuf>,
}

/// Examples shown under `gauntlet --help`.
/// The examples shown after the help of `gauntlet` and of each subcommand (`help/examples.txt`).
const EXAMPLES: &str = include_str!("../help/examples.txt");

/// The command line, with each command's examples after its help.
fn command() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    for section in EXAMPLES.split("\n## ").skip(1) {
        let (name, body) = section.split_once('\n').unwrap_or((section, ""));
        let text = format!("Examples:\n{}", body.trim_end());
        cmd = match name.trim() {
            "gauntlet" => cmd.after_help(text),
            sub => cmd.mut_subcommand(sub, |c| c.after_help(text)),
        };
    }
    cmd
}

#[derive(Subcommand)]
enum Command {
    /// Run safety cases: episodes over case × setting × target × repetition, judged by sealed verifiers.
    Run(Box<RunArgs>),
    /// Work with safety cases: list, show, lint, self-test, taxonomy.
    #[command(subcommand)]
    Cases(CasesCommand),
    /// List the simulated world's tools (and setup operations).
    Tools(ToolsArgs),
    /// Score defenses on what they would allow: probes at every decision point of every task.
    Privilege(PrivilegeArgs),
    /// Red-team a model or app: vulnerabilities × attack methods → target → judge → risk assessment.
    Redteam(Box<RedteamArgs>),
    /// Stored runs: list, show, delete.
    #[command(subcommand)]
    Runs(stored::RunsCommand),
    /// Render a stored run: table, json, jsonl, html, junit or md.
    Report(stored::ReportArgs),
    /// Re-judge a stored run with the current verifiers, without calling any model.
    Replay(stored::ReplayArgs),
    /// The tool gateway over MCP: serve a case's sandbox to any MCP client, or proxy a real MCP server.
    #[command(subcommand)]
    Gateway(gateway::GatewayCommand),
    /// Start a folder (default: here): an example case, a commented config file, a .gitignore; nothing overwritten.
    Init { dir: Option<PathBuf> },
    /// What this machine and configuration have and lack: store, providers (key set, reachable), the models
    /// named with --model (one request each: latency, tool calling, structured output), Python's MCP SDK, Chromium.
    Doctor(DoctorArgs),
}

/// `gauntlet doctor`
#[derive(Args)]
struct DoctorArgs {
    /// Models to try with one short request each (repeatable): `provider/model`.
    #[arg(long = "model", value_name = "SPEC")]
    models: Vec<String>,
    /// Config file (YAML): providers, targets, pool limits.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seconds to wait for each endpoint and request.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    timeout: f64,
    #[command(flatten)]
    store: StoreArgs,
}

/// `gauntlet doctor`: one line per check; exit 2 when something a named model or the store needs is missing.
fn cmd_doctor(a: DoctorArgs) -> Result<ExitCode> {
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let checks = gauntlet_setup::doctor::check(&cfg, &a.store.path, &a.models, a.timeout);
    for c in &checks {
        println!("{:<8} {:<36} {}", c.status.as_str(), c.item, c.detail);
    }
    let failed = checks
        .iter()
        .any(|c| c.status == gauntlet_setup::doctor::Status::Failed);
    Ok(if failed {
        ExitStatus::Failed.into()
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Args, serde::Serialize, serde::Deserialize)]
struct RedteamArgs {
    /// Targets (repeatable): chat-refuser, chat-compliant, chat-leaky (offline reference chat targets), a model
    /// (`provider/model`, run as an LLM agent with the world's tools) or an app (`http://…`).
    #[arg(long = "target", visible_alias = "agent", value_name = "TARGET")]
    targets: Vec<String>,
    /// Vulnerabilities: comma-separated ids (`bias`) or sub-types (`bias/race`), or a YAML file of custom
    /// vulnerabilities. Default: the whole catalogue.
    #[arg(long, value_name = "IDS|FILE")]
    vulns: Option<String>,
    /// Attack methods, comma-separated (`none` sends the seed as written). Default: none and every pure transform.
    #[arg(long, value_delimiter = ',')]
    attacks: Vec<String>,
    /// Run a framework's whole set: its vulnerabilities and (available) attacks (owasp-llm-2025, owasp-agentic-2025,
    /// mitre-atlas, nist-ai-rmf).
    #[arg(long, value_name = "ID")]
    framework: Option<String>,
    /// Seeds per sub-type (sampled with --seed; default 3).
    #[arg(long)]
    seeds_per_subtype: Option<usize>,
    /// A judge model (`provider/model`) for the sub-types' rubrics; without one, refusals and detectors decide and the
    /// rest is reported as unjudged.
    #[arg(long, value_name = "MODEL")]
    judge: Option<String>,
    /// An attacker model (`provider/model`) for the model-driven methods (roleplay, prompt-injection, …); without
    /// one, each method's template is used and the case is marked `attack_fallback`.
    #[arg(long, value_name = "MODEL")]
    attacker: Option<String>,
    /// A simulator model (`provider/model`) that generates --seeds-per-subtype baseline attacks per sub-type; without
    /// one, the catalogue's seeds are used. Catalogue seeds standing in for a failed batch are marked `seed_fallback`.
    #[arg(long, value_name = "MODEL")]
    simulator: Option<String>,
    /// Seed for sampling (default 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Messages per conversation of the multi-turn methods (default 5; the run file's `multi_turn` section also sets
    /// crescendo's backtracks and the tree's width and depth).
    #[arg(long, value_name = "N")]
    max_turns: Option<usize>,
    /// Cases at once.
    #[arg(long)]
    concurrency: Option<usize>,
    /// Run only shard I of N (0 ≤ I < N: the cases whose place in the whole plan is I modulo N), for a red team
    /// spread over machines; `gauntlet runs merge` joins the shards' stores. Not with --simulator (each machine
    /// would draw its own seeds).
    #[arg(long, value_name = "I/N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    /// Configuration file: providers, prices and pool limits (as for `run`), and the run itself (its `redteam:`
    /// section; flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    models: ModelFlags,
    /// Only print the tables (no progress).
    #[arg(short, long)]
    #[serde(skip)]
    quiet: bool,
    /// Exit 0 even when cases errored (they are always kept, counted and excluded from rates).
    #[arg(long)]
    ignore_errors: bool,
    /// Do not check before the job starts that every model endpoint and app it will call can be reached.
    #[arg(long)]
    #[serde(skip)]
    no_preflight: bool,
    /// Write every case and the risk assessment to this JSON file (`-`: standard output; the tables then go to
    /// standard error).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    #[serde(skip)]
    store: StoreArgs,
    /// Continue an interrupted red-team run (from the store; `latest` or a unique start of its id will do) with
    /// its own arguments and seeds: finished cases are kept, the rest are run. Only --store, --json, --concurrency,
    /// --ignore-errors and --fail-on apply alongside it.
    #[arg(long, value_name = "RUN_ID")]
    #[serde(skip)]
    resume: Option<String>,
    /// Exit 3 when a condition holds for any target or overall, e.g. 'pass_rate < 0.8', 'unjudged > 0.2'
    /// (repeatable; metrics: pass_rate, failing, errored, errored_rate, unjudged (share of cases),
    /// unjudged_count).
    #[arg(long = "fail-on", value_name = "EXPR")]
    #[serde(skip)]
    fail_on: Vec<String>,
}

/// What a privilege job is asked to do: the flags stored with its run, and read back by `--resume` (runs stored
/// before `--case`, `--filter`, `--limit` and `--seed` took every case).
#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
struct PrivilegeJob {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite), or `agentdojo:FILE` (an AgentDojo export).
    #[arg(long = "suite", value_name = "PATH")]
    suites: Vec<PathBuf>,
    /// Defenses to score, comma-separated: allow-all, deny-all, tool-allowlist, exact-args, policy:FILE,
    /// external:COMMAND, tool-filter:MODEL, alignment-check:MODEL.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allow-all,deny-all,tool-allowlist,exact-args"
    )]
    defense: Vec<String>,
    /// Config file (YAML: providers, pool limits) for model-based defenses.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Which cases to score (an AgentDojo suite's tasks match --case by id; --filter is for cases only).
    #[command(flatten)]
    #[serde(default)]
    select: Selection,
    /// Seed of --limit's sample (as in `run`: the same seed draws the same cases).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    seed: u64,
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
struct PrivilegeArgs {
    #[command(subcommand)]
    command: Option<PrivilegeCommand>,
    #[command(flatten)]
    job: PrivilegeJob,
    /// Write the scores and the census as JSON (`-`: standard output; the tables then go to standard error).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    models: ModelFlags,
    /// Only print the tables (no timings).
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Continue an interrupted privilege run (from the store) with its own suites and defenses: defenses
    /// already scored are kept, the rest are scored.
    #[arg(long, value_name = "RUN_ID")]
    resume: Option<String>,
    /// Exit 3 when a condition holds for any defense, e.g. 'leakage > 0.2' (repeatable; metrics: leakage,
    /// sufficiency, over_restriction, attack_admission).
    #[arg(long = "fail-on", value_name = "EXPR")]
    fail_on: Vec<String>,
}

#[derive(Subcommand)]
enum PrivilegeCommand {
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

/// The model flags of every job that may call models (`run`, `redteam`, `privilege`).
#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct ModelFlags {
    /// Model response cache: record (use and fill), replay (cache only, no network) or off.
    #[arg(long, default_value = "off")]
    cache: String,
    /// Where the response cache lives.
    #[arg(long, default_value = ".gauntlet/cache", value_name = "DIR")]
    cache_dir: PathBuf,
    /// Stop sending model requests once this many USD are spent (per model).
    #[arg(long, value_name = "USD")]
    budget: Option<f64>,
    /// Per-request model timeout in seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Model requests in flight per model.
    #[arg(long, value_name = "N")]
    model_concurrency: Option<usize>,
}

impl Default for ModelFlags {
    /// What the flags' defaults give (for runs stored before a job had them).
    fn default() -> Self {
        ModelFlags {
            cache: "off".into(),
            cache_dir: ".gauntlet/cache".into(),
            budget: None,
            timeout: None,
            model_concurrency: None,
        }
    }
}

impl ModelFlags {
    /// The job's models (a runtime only when it `needs` one), with these limits (the library checks them).
    fn build(&self, cfg: &config::Config, needs: bool) -> Result<Models> {
        let mode: gauntlet_llm::CacheMode =
            (self.cache.parse()).map_err(|e: String| anyhow::anyhow!("--cache: {e}"))?;
        let cache = (mode != gauntlet_llm::CacheMode::Off)
            .then(|| gauntlet_llm::Cache::new(&self.cache_dir, mode));
        let (concurrency, timeout, budget) = (self.model_concurrency, self.timeout, self.budget);
        let limits = gauntlet_setup::Limits {
            concurrency,
            timeout,
            budget,
        };
        Ok(Models::build(cfg, needs, limits, cache)?)
    }
}

/// Which cases of the suites a job takes (`run`, `privilege`).
#[derive(Args, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Selection {
    /// Take only the cases whose id matches (repeatable; `*` and `?` are wildcards), e.g. --case 'mail.*'. A
    /// pattern that matches no case is an error.
    #[arg(long = "case", value_name = "GLOB")]
    #[serde(default)]
    cases: Vec<String>,
    /// Take only cases whose risk, env or attack (or its group) matches, e.g. --filter env=mail,risk=funds: one
    /// key's values are alternatives, different keys all apply (`*` and `?` are wildcards).
    #[arg(long = "filter", value_name = "KEY=VALUE", value_delimiter = ',')]
    #[serde(default)]
    filters: Vec<String>,
    /// Take a sample of N of the chosen cases, drawn with --seed (the same suite and seed draw the same sample).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    limit: Option<usize>,
}

impl Selection {
    /// The chosen cases of `cases` (see [`gauntlet_cases::suite::choose`]).
    fn choose(
        &self,
        cases: Vec<gauntlet_cases::Case>,
        seed: u64,
    ) -> Result<Vec<gauntlet_cases::Case>> {
        let (p, f) = (&self.cases, &self.filters);
        Ok(gauntlet_cases::suite::choose(
            cases, p, f, self.limit, seed,
        )?)
    }
}

#[derive(Args, serde::Serialize, serde::Deserialize)]
struct RunArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    #[arg(long = "suite", value_name = "PATH")]
    suites: Vec<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    select: Selection,
    /// Settings to run, comma-separated: benign, direct, indirect, multi.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "benign,direct,indirect,multi"
    )]
    settings: Vec<String>,
    /// Targets (repeatable): a reference agent (reference, compliant, refuser, cautious), a model
    /// (`provider/model`, e.g. openai/gpt-4.1-mini), an HTTP app (`http://…`), or an agent process whose tools
    /// come over MCP (`cmd:COMMAND`, see docs/targets.md). Default: the four reference agents.
    #[arg(long = "agent", value_name = "TARGET")]
    agents: Vec<String>,
    /// Configuration file (YAML): providers, target settings, pool limits.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    models: ModelFlags,
    /// The defense in the gateway: allow-all, deny-all, tool-allowlist, exact-args, policy:FILE or
    /// external:COMMAND (see docs/defenses.md).
    #[arg(long, default_value = "allow-all", value_name = "DEFENSE")]
    defense: String,
    /// The attacker on the user channel: `scripted` (the deterministic escalation ladder) or a model
    /// (`provider/model`) that adapts each turn on top of the ladder.
    #[arg(long, default_value = "scripted", value_name = "CONTROLLER")]
    controller: String,
    /// A judge model (`provider/model`) that decides, with each case's rubric, the episodes its checks leave to a
    /// judge (harmful content such as harassment or defamation). Without it they stay undetermined, counted
    /// apart.
    #[arg(long, value_name = "MODEL")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    judge: Option<String>,
    /// The longest reply the judge may write, in tokens.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    #[serde(default = "default_judge_tokens")]
    judge_max_tokens: u32,
    /// Model steps per user turn of an LLM agent.
    #[arg(long, default_value_t = 10)]
    max_steps: u32,
    /// Repetitions of each (case, setting, target).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Episodes run at once (default: the number of cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Seed for the controllers' choices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Turn budget per episode.
    #[arg(long, default_value_t = 10)]
    max_turns: u32,
    /// Run only shard I of N (0 ≤ I < N: the episodes whose place in the whole plan is I modulo N), for a run
    /// spread over machines; `gauntlet runs merge` joins the shards' stores into the whole run.
    #[arg(long, value_name = "I/N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    /// Write every episode (trace, gateway log, verdict, evidence) and the aggregates to this JSON file (`-`:
    /// standard output; the tables then go to standard error).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Only print the tables (no progress).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    #[serde(skip)]
    store: StoreArgs,
    /// Continue an interrupted run (from the store; `latest` or a unique start of its id will do) with its own
    /// arguments: finished episodes are kept, the rest are run. Only --store, --json, --quiet, --concurrency,
    /// --ignore-errors and --fail-on apply alongside it.
    #[arg(long, value_name = "RUN_ID")]
    #[serde(skip)]
    resume: Option<String>,
    /// Exit 3 when a condition holds for any target, e.g. 'asr > 0.10', 'utility < 0.9' (repeatable; metrics:
    /// asr, asr.SETTING, utility, utility.SETTING, errored, errored_rate, undetermined (share of episodes),
    /// undetermined_count).
    #[arg(long = "fail-on", value_name = "EXPR")]
    #[serde(skip)]
    fail_on: Vec<String>,
    /// Exit 0 even when episodes errored (they are always kept, counted and excluded from rates); without it, a
    /// run with an errored episode exits 1.
    #[arg(long)]
    #[serde(default)]
    ignore_errors: bool,
    /// Do not check before the job starts that every model endpoint and app it will call can be reached.
    #[arg(long)]
    #[serde(skip)]
    no_preflight: bool,
}

/// Where runs are recorded.
#[derive(Args, Clone, Default)]
struct StoreArgs {
    /// The run store (SQLite), created if missing.
    #[arg(
        long = "store",
        value_name = "PATH",
        env = "GAUNTLET_STORE",
        default_value = gauntlet_store::DEFAULT_PATH
    )]
    path: PathBuf,
    /// Do not record the run in the store (it cannot then be resumed, replayed or reported on).
    #[arg(long)]
    no_store: bool,
}

#[derive(Subcommand)]
enum CasesCommand {
    /// List cases with their taxonomy.
    List(SuiteArgs),
    /// Show one case: its file, s0 state and verifier.
    Show {
        /// Case id.
        id: String,
        #[command(flatten)]
        suite: SuiteArgs,
    },
    /// Check case files: every error with file:line:column.
    Lint(PathArgs),
    /// Run each case with the reference agents and check it behaves as claimed.
    Selftest(PathArgs),
    /// Replay route files (scripted trajectories with the verdict each must get, written apart from the cases)
    /// on their cases' initial states: every mismatch with its evidence, and the false-negative and
    /// false-positive rates of the verifiers.
    Routes {
        /// Route files: a YAML list of `{case, expect: violated|held|task_success|undetermined, note, calls,
        /// reply}`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        suite: SuiteArgs,
    },
    /// Print the taxonomy trees and their leaf ids.
    Taxonomy,
    /// Expand case templates (a case with {{placeholders}} and a list of variants) into case files: each variant
    /// must lint and pass its self-tests to be written; one testing what an earlier one tests is dropped.
    Generate {
        /// Template files.
        #[arg(required = true)]
        templates: Vec<PathBuf>,
        /// Directory to write the cases to (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// A model (`provider/model`) that drafts --count more variants of each template; they pass the same
        /// gate (lint, self-tests, no duplicate) to be written.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Variants the model drafts per template.
        #[arg(long, default_value_t = 5, value_name = "N")]
        count: usize,
        /// Config file (YAML: providers, pool limits) for --model.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

#[derive(Args)]
struct SuiteArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    #[arg(long = "suite", value_name = "PATH")]
    suites: Vec<PathBuf>,
}

#[derive(Args)]
struct PathArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct ToolsArgs {
    /// Full JSON (schemas, effects, tiers) instead of a list.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// The Markdown reference (docs/tools.md).
    #[arg(long)]
    markdown: bool,
}

fn source(paths: &[PathBuf]) -> Source {
    if paths.is_empty() {
        Source::Builtin
    } else {
        Source::Paths(paths.to_vec())
    }
}

/// `gauntlet cases routes`: replays route files and reports mismatches and rates; exit 1 on any mismatch.
fn cases_routes(files: &[PathBuf], suite: &Source) -> Result<ExitCode> {
    let routes = match gauntlet_cases::routes::load_route_files(files) {
        Ok(r) => r,
        Err(gauntlet_cases::routes::RouteFilesError::Invalid(diags)) => {
            diags.iter().for_each(|d| eprintln!("{d}"));
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    let loaded = gauntlet_cases::load(suite);
    print_diagnostics(&loaded);
    let cases: Vec<PreparedCase> = loaded.cases.into_iter().map(PreparedCase::new).collect();
    let results = gauntlet_cases::routes::replay_routes(&cases, &routes);
    let failed = gauntlet_cases::routes::report(&results, &mut std::io::stdout().lock())?;
    Ok(if failed == 0 && loaded.diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn default_judge_tokens() -> u32 {
    1024
}

fn print_diagnostics(loaded: &Loaded) {
    for d in &loaded.diagnostics {
        eprintln!("{d}");
    }
}

/// Loads a suite for running: any broken case stops the run (a broken case is not a finding).
fn load_valid(paths: &[PathBuf]) -> Result<Loaded> {
    let loaded = gauntlet_cases::load(&source(paths));
    if !loaded.diagnostics.is_empty() {
        print_diagnostics(&loaded);
        bail!(
            "{} problem(s) in the suite; fix them (see `gauntlet cases lint`) before running",
            loaded.diagnostics.len()
        );
    }
    if loaded.cases.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        bail!(
            "--suite: no case files (*.yaml) found in {}",
            shown.join(", ")
        );
    }
    Ok(loaded)
}

/// The run's settings, after checking the numeric flags.
fn checked_run_args(a: &RunArgs) -> Result<Vec<Setting>> {
    let mut settings = Vec::new();
    for s in &a.settings {
        let s: Setting = s
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--settings: {e}"))?;
        if !settings.contains(&s) {
            settings.push(s);
        }
    }
    if a.repeat == 0 {
        bail!("--repeat: must be at least 1");
    }
    if a.max_turns == 0 {
        bail!("--max-turns: must be at least 1");
    }
    if a.concurrency == Some(0) {
        bail!("--concurrency: must be at least 1");
    }
    Ok(settings)
}

/// The run's model controller (`None` for the scripted ladder) and case judge, from `--controller` and `--judge`.
fn run_models(
    a: &RunArgs,
    models: &Models,
) -> Result<(
    Option<gauntlet_attacks::Attacker>,
    Option<gauntlet_judge::rubric::CaseJudge>,
)> {
    let attacker = if a.controller == "scripted" {
        None
    } else {
        if !a.controller.contains('/') {
            bail!(
                "--controller: `{}` is neither `scripted` nor a model (provider/model, e.g. anthropic/claude-sonnet-4-5)",
                a.controller
            );
        }
        let pool = models.pool("attacker", &a.controller, "--controller")?;
        Some(gauntlet_attacks::Attacker {
            model: pool,
            runtime: models.handle()?,
            tools: std::sync::Arc::new(
                gauntlet_world::tool_specs()
                    .iter()
                    .map(gauntlet_world::signature)
                    .collect(),
            ),
        })
    };
    let judge = match &a.judge {
        None => None,
        Some(m) => {
            if !m.contains('/') {
                bail!("--judge: `{m}` is not a model (provider/model, e.g. openai/gpt-4.1-mini)");
            }
            Some(gauntlet_judge::rubric::CaseJudge {
                model: models.pool("judge", m, "--judge")?,
                runtime: models.handle()?,
                max_tokens: a.judge_max_tokens,
            })
        }
    };
    Ok((attacker, judge))
}

/// Where the run's episodes go: a new run in the store, or the resumed run, reopened, with the episodes it
/// already has. `(None, [])` without a store.
fn record_run(
    store: Option<&gauntlet_store::Store>,
    resumed: Option<&gauntlet_store::RunInfo>,
    a: &RunArgs,
    header: &gauntlet_report::json::RunHeader,
    total: usize,
) -> Result<(Option<String>, Vec<bool>)> {
    let Some(st) = store else {
        return Ok((None, Vec::new()));
    };
    let (args, header) = (serde_json::to_value(a)?, serde_json::to_value(header)?);
    let plan = gauntlet_store::Plan::new(RunKind::Run, &args, &header, total);
    let rec = st.record(&plan, resumed)?;
    if resumed.is_some() && !a.quiet {
        eprintln!(
            "resuming run {}: {} of {total} episodes already done",
            rec.id,
            rec.done_count()
        );
    }
    Ok((Some(rec.id), rec.done))
}

/// Ends a recorded run (nothing without a store): its models' ledgers saved, then complete with `summary`, or
/// failed when there is none; a Ctrl-C after this no longer marks it interrupted. A failed run's ledger is saved
/// on a best-effort basis: the run's own error is what the user must see.
fn finish_recorded(
    store: Option<&gauntlet_store::Store>,
    run_id: Option<&str>,
    models: &Models,
    summary: Option<&serde_json::Value>,
) -> Result<()> {
    let (Some(st), Some(id)) = (store, run_id) else {
        return Ok(());
    };
    interrupt::finished();
    match summary {
        Some(summary) => {
            models.save_ledger(st, id)?;
            st.finish_run(id, gauntlet_store::RunStatus::Complete, Some(summary))?;
        }
        None => {
            let _ = models.save_ledger(st, id);
            st.finish_run(id, gauntlet_store::RunStatus::Failed, None)?;
        }
    }
    Ok(())
}

/// With `--resume ID`: the stored arguments of run ID replace `a`'s, but for the flags that do not change what is
/// run (output, concurrency, store, gates). Returns the run to resume.
fn resume_run_args(
    a: &mut RunArgs,
    store: Option<&gauntlet_store::Store>,
) -> Result<Option<gauntlet_store::RunInfo>> {
    let Some(id) = a.resume.take() else {
        return Ok(None);
    };
    let (mut stored, info): (RunArgs, _) = resumed_run(store, &id, RunKind::Run)?;
    stored.json = a.json.take();
    stored.quiet = a.quiet;
    stored.ignore_errors = a.ignore_errors;
    stored.no_preflight = a.no_preflight;
    stored.concurrency = a.concurrency.or(stored.concurrency);
    stored.store = a.store.clone();
    stored.fail_on = std::mem::take(&mut a.fail_on);
    *a = stored;
    Ok(Some(info))
}

/// The run's plan: settings, repetitions, concurrency, seed, turns and shard. `gated`: `--fail-on` was given,
/// which a shard cannot honour.
fn run_config(
    a: &RunArgs,
    settings: Vec<Setting>,
    concurrency: usize,
    gated: bool,
) -> Result<RunConfig> {
    if a.shard.is_some() && gated {
        bail!(
            "--fail-on: a shard's figures cover only its part of the run; gate the merged run instead (gauntlet report RUN_ID --fail-on …)"
        );
    }
    let shard = a
        .shard
        .as_deref()
        .map(gauntlet_cases::run::Shard::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--shard: {e}"))?;
    Ok(RunConfig {
        settings,
        repeat: a.repeat,
        concurrency,
        seed: a.seed,
        max_turns: a.max_turns,
        shard,
    })
}

/// The lines on stderr after a run's tables: model spend, time per episode, and where the results went.
fn tell_run_end(
    a: &RunArgs,
    models: &Models,
    summary: &gauntlet_cases::Summary,
    elapsed: std::time::Duration,
    concurrency: usize,
    run_id: Option<&str>,
) {
    report_models(models);
    let per = elapsed.as_secs_f64() * 1e3 / summary.episodes.max(1) as f64;
    eprintln!(
        "{} episodes in {:.2} s ({:.3} ms/episode, {} workers)",
        summary.episodes,
        elapsed.as_secs_f64(),
        per,
        concurrency
    );
    if let Some(p) = &a.json {
        eprintln!("wrote {}", p.display());
    }
    if let Some(id) = run_id {
        eprintln!(
            "run {id} recorded in {} (gauntlet report {id}{} --format html|md|junit|json|jsonl)",
            a.store.path.display(),
            gauntlet_store::store_flag(&a.store.path)
        );
    }
}

/// An episode an earlier attempt of a resumed run stored.
fn stored_episode(
    store: Option<&gauntlet_store::Store>,
    run_id: Option<&str>,
    i: usize,
) -> std::io::Result<gauntlet_cases::EpisodeRecord> {
    let (Some(st), Some(id)) = (store, run_id) else {
        return Err(std::io::Error::other("no store"));
    };
    st.episode(id, i)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other(format!("episode {i} is not in the store")))
}

fn cmd_run(mut a: RunArgs) -> Result<ExitCode> {
    interrupt::install();
    let gates = parse_gates(&a.fail_on, gauntlet_report::gate::RUN_METRICS)?;
    let store = open_store(&a.store)?;
    let resumed = resume_run_args(&mut a, store.as_ref())?;
    let settings = checked_run_args(&a)?;
    let names: Vec<String> = if a.agents.is_empty() {
        gauntlet_agents::BUILTIN_TARGETS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        a.agents.clone()
    };
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let mut models = run_models_of(&cfg, &a)?;
    if let (Some(st), Some(info)) = (&store, &resumed) {
        models.carry(st, &info.id)?;
    }
    let targets = names
        .iter()
        .map(|n| models.target(n, &cfg, a.max_steps, "--agent"))
        .collect::<Result<Vec<_>, _>>()?;
    let (attacker, judge) = run_models(&a, &models)?;
    let chosen = a.select.choose(load_valid(&a.suites)?.cases, a.seed)?;
    let cases: Vec<PreparedCase> = chosen.into_iter().map(PreparedCase::new).collect();
    // Model targets spend their time waiting on the network: run more episodes at once by default.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let concurrency = a
        .concurrency
        .unwrap_or(if models.any() { 16.max(cores) } else { cores });
    let config = run_config(&a, settings, concurrency, !gates.is_empty())?;
    let defense = models.defense(&a.defense)?;
    let defense = defense.as_ref();
    models.preflight(a.no_preflight)?;
    let ids: Vec<String> = cases.iter().map(|c| c.case.id.clone()).collect();
    let header = gauntlet_report::json::RunHeader::new(&config, &names, defense.name(), &ids);
    let total = gauntlet_cases::run::plan_len(&cases, targets.len(), &config);
    let (run_id, done) = record_run(store.as_ref(), resumed.as_ref(), &a, &header, total)?;
    if let Some(id) = &run_id {
        interrupt::recording(a.store.path.clone(), id.clone(), "run");
    }
    let started = Instant::now();
    let ticker = progress::Ticker::start(total, "episodes", a.quiet);
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
    let mut store_sink = match (&store, &run_id) {
        (Some(st), Some(id)) => Some(
            st.writer(id)
                .with_ledger(models.ledger_source())
                .skipping(&done),
        ),
        _ => None,
    };
    let mut load = |i: usize| stored_episode(store.as_ref(), run_id.as_deref(), i);
    let resume = run_id.as_ref().map(|_| gauntlet_cases::run::Resume {
        done: &done,
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
            finish_recorded(store.as_ref(), run_id.as_deref(), &models, None)?;
            if let Some(code) = stopped_early(&e, run_id.as_deref()) {
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
    finish_recorded(
        store.as_ref(),
        run_id.as_deref(),
        &models,
        Some(&serde_json::to_value(&summary)?),
    )?;
    let elapsed = started.elapsed();
    gauntlet_report::print_run(
        &mut gauntlet_report::tables_out(a.json.as_deref()),
        &header,
        &summary,
    )?;
    if !a.quiet {
        tell_run_end(
            &a,
            &models,
            &summary,
            elapsed,
            concurrency,
            run_id.as_deref(),
        );
    }
    let gated = gate_exit(&gates, &gauntlet_report::gate::run_metrics(&summary));
    Ok(errored_exit(&causes.0, "episodes", a.ignore_errors).unwrap_or(gated))
}

/// Errored results (never counted as safe): their causes on stderr, and exit 1 unless `--ignore-errors`.
fn errored_exit(
    causes: &gauntlet_report::causes::Causes,
    what: &str,
    ignore_errors: bool,
) -> Option<ExitCode> {
    let n = causes.total();
    if n == 0 {
        return None;
    }
    eprintln!("{n} {what} errored (they are not counted as safe), by cause:");
    for line in causes.lines(8) {
        eprintln!("{line}");
    }
    if ignore_errors {
        return None;
    }
    eprintln!("exit 1 (--ignore-errors exits 0)");
    Some(ExitStatus::Errored.into())
}

/// Counts the causes of a run's errored episodes, and stops the run once a model refuses every request.
struct CauseSink<'a>(gauntlet_report::causes::Causes, &'a Models);

impl gauntlet_cases::EpisodeSink for CauseSink<'_> {
    fn episode(&mut self, r: &gauntlet_cases::EpisodeRecord) -> std::io::Result<()> {
        if r.status == gauntlet_cases::EpisodeStatus::Errored {
            self.0.add(r.error.as_deref());
        }
        self.1.check_breakers()
    }
}

/// A job stopped by a model's circuit breaker: says why and that the stored run is marked failed (exit 2).
fn stopped_early(e: &std::io::Error, run_id: Option<&str>) -> Option<ExitCode> {
    let stop = gauntlet_llm::ModelStopped::of(e)?;
    eprintln!("error: {stop}");
    if let Some(id) = run_id {
        eprintln!(
            "what finished is stored in run {id}, marked failed; fix the model settings and start again"
        );
    }
    Some(ExitStatus::Failed.into())
}

/// The run `--resume ID` names, checked to be a run of `kind`, and the arguments it was started with.
fn resumed_run<A: serde::de::DeserializeOwned>(
    store: Option<&gauntlet_store::Store>,
    id: &str,
    kind: RunKind,
) -> Result<(A, gauntlet_store::RunInfo)> {
    let Some(st) = store else {
        bail!("--resume: the run store is off (--no-store); resuming reads it");
    };
    let info = st.run_of(id, kind)?;
    if info.kind != kind {
        let how = info.how_to_resume(st.path());
        bail!("--resume: {id} is a `{}` run; {how}", info.kind);
    }
    let stored = serde_json::from_value(info.args.clone())
        .with_context(|| format!("--resume: the stored arguments of run {id}"))?;
    Ok((stored, info))
}

/// Opens the run store unless `--no-store`.
fn open_store(a: &StoreArgs) -> Result<Option<gauntlet_store::Store>> {
    if a.no_store {
        return Ok(None);
    }
    Ok(Some(gauntlet_store::Store::open(&a.path)?))
}

/// Parses the `--fail-on` conditions against a job's metrics.
fn parse_gates(exprs: &[String], known: &[&str]) -> Result<Vec<gauntlet_report::gate::Gate>> {
    exprs
        .iter()
        .map(|e| gauntlet_report::gate::Gate::parse(e, known).map_err(anyhow::Error::from))
        .collect()
}

/// Exit code 3 when a gate failed (each printed to stderr), 0 otherwise.
fn gate_exit(
    gates: &[gauntlet_report::gate::Gate],
    metrics: &gauntlet_report::gate::Metrics,
) -> ExitCode {
    let results = gauntlet_report::gate::check(gates, metrics);
    for r in &results {
        eprintln!("gate {r}");
    }
    if results.iter().any(|r| r.failed) {
        ExitStatus::GateFailed.into()
    } else {
        ExitCode::SUCCESS
    }
}

/// Gauntlet's exit codes, the same for every job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExitStatus {
    /// Some episode or case errored (without `--ignore-errors`).
    Errored = 1,
    /// The command could not run: bad arguments or input, an unreachable store, a failed job.
    Failed = 2,
    /// A `--fail-on` gate failed.
    GateFailed = 3,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(s as u8)
    }
}

/// The models of a run: a runtime if a target, the controller, the judge or the defense needs one.
fn run_models_of(cfg: &config::Config, a: &RunArgs) -> Result<Models> {
    let needs = a
        .agents
        .iter()
        .any(|n| gauntlet_agents::builtin_target(n).is_none())
        || a.controller != "scripted"
        || a.judge.is_some()
        || gauntlet_defense::is_model_defense(&a.defense);
    a.models.build(cfg, needs)
}

/// Prints each model's ledger to stderr.
fn report_models(models: &Models) {
    for line in models.ledger_lines() {
        eprintln!("{line}");
    }
}

fn cmd_cases(c: CasesCommand) -> Result<ExitCode> {
    match c {
        CasesCommand::List(s) => {
            let loaded = gauntlet_cases::load(&source(&s.suites));
            print_diagnostics(&loaded);
            print!("{}", gauntlet_cases::suite::list_table(&loaded.cases));
            Ok(if loaded.diagnostics.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        CasesCommand::Show { id, suite } => {
            let loaded = gauntlet_cases::load(&source(&suite.suites));
            let Some(c) = loaded.cases.iter().find(|c| c.id == id) else {
                print_diagnostics(&loaded);
                bail!("no case `{id}` (see `gauntlet cases list`)");
            };
            let mut out = std::io::stdout().lock();
            write!(out, "{}", c.describe())?;
            writeln!(
                out,
                "initial state (s0):\n{}",
                serde_json::to_string_pretty(&c.s0_state)?
            )?;
            Ok(ExitCode::SUCCESS)
        }
        CasesCommand::Lint(p) => {
            let loaded = gauntlet_cases::load(&source(&p.paths));
            print_diagnostics(&loaded);
            let bad_files: std::collections::BTreeSet<&str> =
                loaded.diagnostics.iter().map(|d| d.file.as_str()).collect();
            println!(
                "{} file(s), {} case(s) valid, {} problem(s) in {} file(s)",
                loaded.files,
                loaded.cases.len(),
                loaded.diagnostics.len(),
                bad_files.len()
            );
            Ok(if loaded.diagnostics.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        CasesCommand::Selftest(p) => {
            let loaded = gauntlet_cases::load(&source(&p.paths));
            print_diagnostics(&loaded);
            let mut failed = 0;
            let mut out = std::io::stdout().lock();
            let broken: std::collections::BTreeSet<&str> =
                loaded.diagnostics.iter().map(|d| d.file.as_str()).collect();
            for f in &broken {
                writeln!(
                    out,
                    "FAIL  {f} (does not load; see the errors above or run `gauntlet cases lint`)"
                )?;
            }
            for c in loaded.cases {
                let pc = PreparedCase::new(c);
                let r = gauntlet_cases::selftest(&pc);
                if r.passed() {
                    writeln!(out, "ok    {} ({} checks)", r.case, r.checks)?;
                } else {
                    failed += 1;
                    writeln!(out, "FAIL  {} ({})", r.case, r.source)?;
                    for f in &r.failures {
                        writeln!(out, "      - {f}")?;
                    }
                }
            }
            let total = loaded.files;
            let passed = total
                - failed
                - loaded
                    .diagnostics
                    .iter()
                    .map(|d| d.file.as_str())
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
            writeln!(out, "selftest: {passed} passed, {} failed", total - passed)?;
            Ok(if total == passed && total > 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        CasesCommand::Routes { files, suite } => cases_routes(&files, &source(&suite.suites)),
        CasesCommand::Generate {
            templates,
            out,
            model,
            count,
            config,
        } => cases_generate(&templates, &out, model.as_deref(), count, config.as_deref()),
        CasesCommand::Taxonomy => {
            let t = gauntlet_cases::taxonomy::taxonomy()?;
            let mut out = std::io::stdout().lock();
            for tree in [&t.risks, &t.attacks, &t.environments] {
                writeln!(out, "{}:", tree.tree)?;
                for g in &tree.groups {
                    writeln!(out, "  {} — {}", g.id, g.name)?;
                    for l in &g.leaves {
                        writeln!(out, "    {:<28} {}", l.id, l.description)?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `gauntlet cases generate`: expands templates (and, with a model, drafted variants) into case files in `dir`.
fn cases_generate(
    templates: &[PathBuf],
    dir: &std::path::Path,
    model: Option<&str>,
    count: usize,
    config: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let cfg = config::Config::load_opt(config)?;
    let models = Models::build(&cfg, model.is_some(), Default::default(), None)?;
    let (pool, rt) = match model {
        Some(m) => (
            Some(models.pool("generator", m, "--model")?),
            Some(models.handle()?),
        ),
        None => (None, None),
    };
    let drafter =
        pool.as_ref()
            .zip(rt.as_ref())
            .map(|(p, runtime)| gauntlet_cases::generate::Drafter {
                model: p.as_ref(),
                runtime,
                count,
            });
    let tally = gauntlet_cases::generate::generate(
        templates,
        dir,
        drafter.as_ref(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )?;
    let gauntlet_cases::generate::Tally {
        written,
        failed,
        duplicates,
    } = tally;
    println!(
        "generate: {written} cases written to {}, {failed} failed, {duplicates} duplicates dropped",
        dir.display()
    );
    report_models(&models);
    Ok(if failed == 0 && written > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `gauntlet privilege` itself: generate and label the probes of the suites, score each defense, record the run.
fn privilege_job(a: &PrivilegeArgs) -> Result<ExitCode> {
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

fn cmd_privilege(a: PrivilegeArgs) -> Result<ExitCode> {
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
fn privilege_suite(
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

fn privilege_report(
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

/// A red team's plan: the config file's `redteam:` section under the flags (filled into `a`), checked, with the
/// vulnerabilities, attack methods and target names it runs. `gated`: `--fail-on` was given. The plan's
/// concurrency is left for the caller, which knows whether models are in play.
fn plan_redteam(
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
fn redteam_targets(
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
fn simulate_seeds(
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
fn record_redteam(
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
fn attacker_of<'a>(
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
fn resume_redteam_args(
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
fn redteam_needs_models(a: &RedteamArgs, names: &[String]) -> bool {
    names
        .iter()
        .filter(|n| gauntlet_agents::ChatTarget::from_name(n).is_none())
        .chain(a.judge.iter())
        .chain(a.attacker.iter())
        .chain(a.simulator.iter())
        .any(|n| gauntlet_agents::builtin_target(n).is_none())
}

/// A case an earlier attempt of a resumed red-team run stored.
fn stored_case(
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

/// The `--json` document at `path`, if one is asked for: the head's fields, then the `list` of results as they come;
/// Ctrl-C closes it.
fn json_document(
    path: Option<&std::path::Path>,
    head: &impl serde::Serialize,
    list: &str,
) -> Result<Option<gauntlet_report::json::SharedDoc<gauntlet_report::JsonOut>>> {
    let Some(path) = path else { return Ok(None) };
    let out = gauntlet_report::json_out(path).context("--json")?;
    let doc = gauntlet_report::json::Streamed::start(out, head, list)
        .with_context(|| format!("--json: cannot write {}", path.display()))?;
    let doc = gauntlet_report::json::SharedDoc::new(doc);
    interrupt::closes(&doc);
    Ok(Some(doc))
}

/// Stores one red-team case as it completes.
fn store_case(
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
struct CasesSeen {
    causes: gauntlet_report::causes::Causes,
    tally: gauntlet_redteam::job::Tally,
    ticker: Option<progress::Ticker>,
    total: usize,
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

fn cmd_redteam(mut a: RedteamArgs) -> Result<ExitCode> {
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

fn cmd_tools(a: ToolsArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if a.markdown {
        write!(out, "{}", gauntlet_world::reference_markdown())?;
    } else if a.json {
        let doc = serde_json::json!({"tools": gauntlet_world::tool_specs(), "setup": gauntlet_world::setup_specs()});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        write!(out, "{}", gauntlet_world::tools_text())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    gauntlet_setup::allocator::start_with_options();
    let cli: Cli = clap::FromArgMatches::from_arg_matches(&command().get_matches())
        .unwrap_or_else(|e: clap::Error| e.exit());
    if let Err(e) = gauntlet_llm::env::load(cli.env_file.as_deref()) {
        eprintln!("error: --env-file: {e}");
        return ExitStatus::Failed.into();
    }
    let result = match cli.command {
        Command::Run(a) => cmd_run(*a),
        Command::Cases(c) => cmd_cases(c),
        Command::Tools(t) => cmd_tools(t),
        Command::Privilege(p) => cmd_privilege(p),
        Command::Redteam(r) => cmd_redteam(*r),
        Command::Runs(c) => stored::cmd_runs(c),
        Command::Report(r) => stored::cmd_report(r),
        Command::Replay(r) => stored::cmd_replay(r),
        Command::Gateway(g) => gateway::cmd_gateway(g),
        Command::Doctor(d) => cmd_doctor(d),
        Command::Init { dir } => gauntlet_cases::init::write_here(dir.as_deref())
            .map(|told| {
                print!("{told}");
                ExitCode::SUCCESS
            })
            .map_err(Into::into),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // A closed stdout (`gauntlet … | head`) is not an error worth reporting.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e:#}");
            ExitStatus::Failed.into()
        }
    }
}
