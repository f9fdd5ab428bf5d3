//! `gauntlet cases …`: list, show, lint, self-test, generate, routes, taxonomy.

use crate::exit::checked;
use crate::flags::report_models;
use crate::job::{print_diagnostics, source};
use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use gauntlet_cases::{PreparedCase, Source};
use gauntlet_setup::{Models, config};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub(crate) enum CasesCommand {
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
pub(crate) struct SuiteArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    #[arg(long = "suite", value_name = "PATH")]
    suites: Vec<PathBuf>,
}

#[derive(Args)]
pub(crate) struct PathArgs {
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    paths: Vec<PathBuf>,
}

/// `gauntlet cases routes`: replays route files and reports mismatches and rates; exit 1 on any mismatch.
pub(crate) fn cases_routes(files: &[PathBuf], suite: &Source) -> Result<ExitCode> {
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
    Ok(checked(failed == 0 && loaded.diagnostics.is_empty()))
}

pub(crate) fn cmd_cases(c: CasesCommand) -> Result<ExitCode> {
    match c {
        CasesCommand::List(s) => {
            let loaded = gauntlet_cases::load(&source(&s.suites));
            print_diagnostics(&loaded);
            print!("{}", gauntlet_cases::suite::list_table(&loaded.cases));
            Ok(checked(loaded.diagnostics.is_empty()))
        }
        CasesCommand::Show { id, suite } => {
            let loaded = gauntlet_cases::load(&source(&suite.suites));
            let Some(c) = loaded.cases.iter().find(|c| c.id == id) else {
                print_diagnostics(&loaded);
                bail!("no case `{id}` (see `gauntlet cases list`)");
            };
            let s0 = serde_json::to_string_pretty(&c.s0_state)?;
            let shown = format!("{}initial state (s0):\n{s0}\n", c.describe());
            std::io::stdout().lock().write_all(shown.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        CasesCommand::Lint(p) => {
            let loaded = gauntlet_cases::load(&source(&p.paths));
            print_diagnostics(&loaded);
            println!("{}", loaded.lint_line());
            Ok(checked(loaded.diagnostics.is_empty()))
        }
        CasesCommand::Selftest(p) => {
            let loaded = gauntlet_cases::load(&source(&p.paths));
            print_diagnostics(&loaded);
            let passed = gauntlet_cases::selftest::suite(loaded, &mut std::io::stdout().lock())?;
            Ok(checked(passed))
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
            write!(std::io::stdout().lock(), "{t}")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `gauntlet cases generate`: expands templates (and, with a model, drafted variants) into case files in `dir`.
pub(crate) fn cases_generate(
    templates: &[PathBuf],
    dir: &std::path::Path,
    model: Option<&str>,
    count: usize,
    config: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let cfg = config::Config::load_opt(config)?;
    let models = Models::build(&cfg, model.is_some(), Default::default(), None)?;
    let drafting = match model {
        Some(m) => Some((models.pool("generator", m, "--model")?, models.handle()?)),
        None => None,
    };
    let drafter = drafting
        .as_ref()
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
    println!("{}", tally.sentence(dir));
    report_models(&models);
    Ok(checked(tally.failed == 0 && tally.written > 0))
}
