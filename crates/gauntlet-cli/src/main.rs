//! The `gauntlet` binary: a thin shell over the library crates. It parses arguments (one module per command under
//! `commands/`, the argument groups they share in `flags`) and calls the libraries that do the work.

mod commands;
mod exit;
mod flags;
mod job;

use crate::commands::cases::{CasesCommand, cmd_cases};
use crate::commands::doctor::{DoctorArgs, cmd_doctor};
use crate::commands::privilege::{PrivilegeArgs, cmd_privilege};
use crate::commands::redteam::{RedteamArgs, cmd_redteam};
use crate::commands::run::{RunArgs, cmd_run};
use crate::commands::tools::{ToolsArgs, cmd_tools};
use crate::exit::ExitStatus;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

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
    Runs(commands::runs::RunsCommand),
    /// Render a stored run: table, json, jsonl, html, junit or md.
    Report(commands::report::ReportArgs),
    /// Re-judge a stored run with the current verifiers, without calling any model.
    Replay(commands::replay::ReplayArgs),
    /// The tool gateway over MCP: serve a case's sandbox to any MCP client, or proxy a real MCP server.
    #[command(subcommand)]
    Gateway(commands::gateway::GatewayCommand),
    /// Start a folder (default: here): an example case, a commented config file, a .gitignore; nothing overwritten.
    Init { dir: Option<PathBuf> },
    /// What this machine and configuration have and lack: store, providers (key set, reachable), the models
    /// named with --model (one request each: latency, tool calling, structured output), Python's MCP SDK, Chromium.
    Doctor(DoctorArgs),
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
        Command::Runs(c) => commands::runs::cmd_runs(c),
        Command::Report(r) => commands::report::cmd_report(r),
        Command::Replay(r) => commands::replay::cmd_replay(r),
        Command::Gateway(g) => commands::gateway::cmd_gateway(g),
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
