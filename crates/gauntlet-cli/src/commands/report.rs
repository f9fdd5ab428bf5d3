//! `gauntlet report`: a stored run rendered as a table, json, jsonl, html, junit or md.

use crate::commands::runs::open;
use crate::exit::ExitStatus;
use crate::exit::{gate_exit, parse_gates};
use crate::flags::StoreArgs;
use anyhow::{Context, Result};
use clap::Args;
use gauntlet_report::stored::{self, Format};
use gauntlet_store::{RunInfo, Store};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `gauntlet report`
#[derive(Args)]
pub(crate) struct ReportArgs {
    /// The run id (`gauntlet runs list`), `latest`, or a unique start of an id.
    pub(crate) id: String,
    /// Output format: table, json (the job's `--json`), jsonl (per episode or case), html, junit or md.
    #[arg(long, value_parser = crate::flags::format(), default_value = "table")]
    pub(crate) format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// HTML: episodes (or cases) shown in full; the rest are counted.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub(crate) max_detail: usize,
    /// Exit 3 when a condition holds (as for the job that made the run).
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub(crate) fail_on: Vec<String>,
    /// Exit 0 even when the run has errored results (which are never counted as safe).
    #[arg(long)]
    pub(crate) ignore_errors: bool,
    /// Exit 0 even when the run never finished (its report says so; what never ran is not a pass).
    #[arg(long)]
    pub(crate) allow_partial: bool,
    /// A safety-case run's slice tables at this level of the taxonomies (`group` or `leaf`); default: the level
    /// the run was made with.
    #[arg(long, value_parser = crate::flags::slice_level())]
    pub(crate) by: Option<gauntlet_cases::SliceLevel>,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// `gauntlet report`
pub(crate) fn cmd_report(a: ReportArgs) -> Result<ExitCode> {
    let st = open(&a.store)?;
    let info = st.run(&a.id)?;
    // A report file appears only once complete (a failed or killed write leaves the old one).
    let mut sink = gauntlet_report::file::Output::open(a.out.as_deref()).context("--out")?;
    let code = report(
        &st,
        &info,
        a.format,
        &mut sink,
        a.max_detail,
        &a.fail_on,
        a.by,
    )?;
    sink.finish().context("--out")?;
    if let Some(p) = a.out.as_ref().filter(|p| p.as_os_str() != "-") {
        eprintln!("wrote {}", p.display());
    }
    let why = st.report_failure(&info, a.ignore_errors, Some(a.allow_partial))?;
    Ok(exit_1(&info, why).unwrap_or(code))
}

/// Exit 1, saying `why`, when a stored run is not a pass ([`RunInfo::gate_failure`]).
pub(crate) fn exit_1(info: &RunInfo, why: Option<String>) -> Option<ExitCode> {
    eprintln!("run {} {}", info.id, why?);
    Some(ExitStatus::Errored.into())
}

/// Renders a stored run of any kind to `out`, then checks the `--fail-on` gates against it (exit 3 if one fails).
pub(crate) fn report(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    fail_on: &[String],
    by: Option<gauntlet_cases::SliceLevel>,
) -> Result<ExitCode> {
    let gates = parse_gates(fail_on, stored::metric_names(info.kind))?;
    let r = stored::render(st, info, format, out, max_detail, &gates, by)?;
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    Ok(gate_exit(&gates, &r.metrics))
}
