//! `gauntlet replay`: a stored run re-judged with the current verifiers, calling no model.

use crate::commands::report::exit_1;
use crate::commands::runs::open;
use crate::exit::{gate_exit, parse_gates};
use crate::flags::StoreArgs;
use anyhow::Result;
use clap::Args;
use gauntlet_store::RunKind;
use std::process::ExitCode;

/// `gauntlet replay`
#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The run to replay (its id, `latest`, or a unique start of an id): a `run`, a `redteam` run or an earlier
    /// replay of either.
    pub(crate) id: String,
    /// Exit 3 when a condition holds for any target (as for `gauntlet run`).
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub(crate) fail_on: Vec<String>,
    /// Exit 0 even when the run has errored results (which are never counted as safe).
    #[arg(long)]
    pub(crate) ignore_errors: bool,
    /// Re-judge and print, but store nothing (a read-only store is enough).
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// `gauntlet replay`: re-judges every stored episode of a run with the current verifiers, from its final state,
/// gateway log and replies (no agent, no model), and stores the result as a new `replay` run (nothing with
/// `--dry-run`).
pub(crate) fn cmd_replay(a: ReplayArgs) -> Result<ExitCode> {
    let st = open(&a.store)?;
    let info = st.run(&a.id)?;
    let names = match info.kind {
        RunKind::Redteam | RunKind::RedteamReplay => gauntlet_report::gate::REDTEAM_METRICS,
        _ => gauntlet_report::gate::RUN_METRICS,
    };
    let gates = parse_gates(&a.fail_on, names)?;
    let replayed = gauntlet_replay::replay(&st, &info, a.dry_run)?;
    replayed.write(&mut std::io::stdout().lock())?;
    let code = gate_exit(&gates, &replayed.metrics());
    Ok(exit_1(&info, info.gate_failure(0, a.ignore_errors, None)).unwrap_or(code))
}
