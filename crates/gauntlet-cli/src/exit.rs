//! Gauntlet's exit codes and what decides them: errored work, failed gates, a model that stopped the job.

use anyhow::Result;
use gauntlet_setup::Models;
use std::process::ExitCode;

/// Errored results (never counted as safe): their causes on stderr, and exit 1 unless `--ignore-errors`.
pub(crate) fn errored_exit(
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
pub(crate) struct CauseSink<'a>(
    pub(crate) gauntlet_report::causes::Causes,
    pub(crate) &'a Models,
);

impl gauntlet_cases::EpisodeSink for CauseSink<'_> {
    fn episode(&mut self, r: &gauntlet_cases::EpisodeRecord) -> std::io::Result<()> {
        if r.status == gauntlet_cases::EpisodeStatus::Errored {
            self.0.add(r.error.as_deref());
        }
        self.1.check_breakers()
    }
}

/// A job stopped by a model's circuit breaker: says why and that the stored run is marked failed (exit 2).
pub(crate) fn stopped_early(e: &std::io::Error, run_id: Option<&str>) -> Option<ExitCode> {
    let stop = gauntlet_llm::ModelStopped::of(e)?;
    eprintln!("error: {stop}");
    if let Some(id) = run_id {
        eprintln!(
            "what finished is stored in run {id}, marked failed; fix the model settings and start again"
        );
    }
    Some(ExitStatus::Failed.into())
}

/// Parses the `--fail-on` conditions against a job's metrics.
pub(crate) fn parse_gates(
    exprs: &[String],
    known: &[&str],
) -> Result<Vec<gauntlet_report::gate::Gate>> {
    exprs
        .iter()
        .map(|e| gauntlet_report::gate::Gate::parse(e, known).map_err(anyhow::Error::from))
        .collect()
}

/// Exit code 3 when a gate failed (each printed to stderr), 0 otherwise.
pub(crate) fn gate_exit(
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
pub(crate) enum ExitStatus {
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

/// A check command's exit: 0 when everything it checked passed, else 1 (`cases lint`, `selftest`, `routes`).
pub(crate) fn checked(passed: bool) -> ExitCode {
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
