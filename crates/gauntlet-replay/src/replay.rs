//! `gauntlet replay`: a stored run re-judged with the current verifiers (safety cases: from each episode's final
//! state, gateway log and replies) or the red-team judge's deterministic parts (tool evidence, detectors, the
//! refusal screen), calling no agent and no model, stored as a new `replay` or `redteam-replay` run.

use crate::{Error, catalogue};
use gauntlet_cases::{PreparedCase, Summary};
use gauntlet_core::{Outcome, Setting};
use gauntlet_report::gate::Metrics;
use gauntlet_report::json::RunHeader;
use gauntlet_report::stored::{Episodes, header, stored_cases};
use gauntlet_store::{RunInfo, RunKind, RunStatus, Store, StoreError};
use serde_json::Value;
use std::io::Write;

/// How many changed verdicts are listed; the rest are counted.
const LISTED: usize = 50;

/// A safety-case episode whose verdict or task result changed.
#[derive(Debug, Clone)]
pub struct EpisodeChange {
    /// The episode's place in the run.
    pub index: usize,
    /// Its case.
    pub case: String,
    /// Its setting.
    pub setting: Setting,
    /// Its target.
    pub target: String,
    /// Verdict and task success as stored.
    pub before: (Outcome, Option<bool>),
    /// Verdict and task success now.
    pub after: (Outcome, Option<bool>),
}

/// A red-team case whose outcome changed.
#[derive(Debug, Clone)]
pub struct CaseChange {
    /// The case's place in the run.
    pub index: usize,
    /// Its vulnerability, sub-type, attack method and target.
    pub what: [String; 4],
    /// Its outcome as stored.
    pub before: gauntlet_judge::redteam::RtOutcome,
    /// Its outcome now.
    pub after: gauntlet_judge::redteam::RtOutcome,
}

/// The run a replay made, for the caller to print and gate.
#[derive(Debug)]
pub enum Replayed {
    /// A safety-case run re-judged.
    Run {
        /// The run replayed.
        of: String,
        /// The new run (none for a dry run).
        id: Option<String>,
        /// Its header (the replayed run's).
        header: Box<RunHeader>,
        /// Its summary.
        summary: Box<Summary>,
        /// Episodes re-judged.
        episodes: u64,
        /// Episodes the replayed run planned.
        planned: u64,
        /// Episodes whose verdict or task result changed.
        changed: Vec<EpisodeChange>,
    },
    /// A red team re-judged.
    Redteam {
        /// The run replayed.
        of: String,
        /// The new run (none for a dry run).
        id: Option<String>,
        /// Its header as the job's document shows it.
        head: Value,
        /// The framework the red team was mapped to, if one was asked for.
        framework: Option<String>,
        /// Its risk assessment.
        report: Box<gauntlet_redteam::job::Report>,
        /// Cases re-judged.
        cases: u64,
        /// Cases of custom vulnerabilities, which keep their stored judgement.
        kept: u64,
        /// Cases whose outcome changed.
        changed: Vec<CaseChange>,
    },
}

impl Replayed {
    /// The metrics `--fail-on` reads.
    pub fn metrics(&self) -> Metrics {
        match self {
            Replayed::Run { summary, .. } => gauntlet_report::gate::run_metrics(summary),
            Replayed::Redteam { report, .. } => gauntlet_report::gate::redteam_metrics(report),
        }
    }

    /// The new run's tables, then what changed (the first [`LISTED`] changes, the rest counted).
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Replayed::Run {
                of,
                id,
                header,
                summary,
                episodes,
                planned,
                changed,
            } => {
                gauntlet_report::print_run(out, header, summary)?;
                let partial = if episodes == planned {
                    String::new()
                } else {
                    format!(
                        " (the original stored {episodes} of {planned} episodes: resume it first)"
                    )
                };
                writeln!(
                    out,
                    "\nReplayed run {of} {}: {episodes} episodes re-judged, {} verdicts or task results changed{partial}",
                    stored_as(id),
                    changed.len()
                )?;
                for c in changed.iter().take(LISTED) {
                    let ((o0, t0), (o1, t1)) = (c.before, c.after);
                    writeln!(
                        out,
                        "  episode {} {} / {} / {}: {o0:?} → {o1:?}, task {t0:?} → {t1:?}",
                        c.index, c.case, c.setting, c.target
                    )?;
                }
                more(out, changed.len())
            }
            Replayed::Redteam {
                of,
                id,
                head,
                framework,
                report,
                cases,
                kept,
                changed,
            } => {
                gauntlet_report::print_redteam(out, head, framework.as_deref(), report)?;
                let kept = if *kept > 0 {
                    format!("; {kept} cases of custom vulnerabilities kept their stored judgement")
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "\nReplayed red-team run {of} {}: {cases} cases re-judged by tool evidence, detectors and the refusal screen, {} outcomes changed{kept}",
                    stored_as(id),
                    changed.len()
                )?;
                for c in changed.iter().take(LISTED) {
                    let [v, sub, attack, target] = &c.what;
                    writeln!(
                        out,
                        "  case {} {v}/{sub} / {attack} / {target}: {:?} → {:?}",
                        c.index, c.before, c.after
                    )?;
                }
                more(out, changed.len())
            }
        }
    }
}

/// Where a replay went: `as ID`, or nowhere for a dry run.
fn stored_as(id: &Option<String>) -> String {
    match id {
        Some(id) => format!("as {id}"),
        None => "(dry run: nothing stored)".into(),
    }
}

/// The count of changes past those listed.
fn more(out: &mut dyn Write, changed: usize) -> std::io::Result<()> {
    if changed > LISTED {
        writeln!(out, "  … and {} more", changed - LISTED)?;
    }
    Ok(())
}

/// The arguments of a replay of `info`: its own, naming the run replayed.
fn replay_args(info: &RunInfo) -> Value {
    let mut args = info.args.clone();
    if let Some(o) = args.as_object_mut() {
        o.insert("replay_of".into(), serde_json::json!(info.id));
    }
    args
}

/// Replays `info` (a safety-case run, a red team, or a replay of either) as a new run in `st`; with `dry_run`,
/// re-judges it and stores nothing (which a read-only store allows).
pub fn replay(st: &Store, info: &RunInfo, dry_run: bool) -> Result<Replayed, Error> {
    match info.kind {
        RunKind::Redteam | RunKind::RedteamReplay => replay_redteam(st, info, dry_run),
        RunKind::Run | RunKind::Replay => replay_run(st, info, dry_run),
        kind => Err(Error::Unsupported(format!(
            "run {} is a `{kind}` run; replay re-judges safety-case and red-team runs",
            info.id
        ))),
    }
}

/// [`replay`] of a safety-case run: every episode re-judged from its stored evidence.
fn replay_run(st: &Store, info: &RunInfo, dry_run: bool) -> Result<Replayed, Error> {
    let header = header(info)?;
    let cases = stored_cases(info, &header)?;
    let total = gauntlet_cases::run::plan_len(&cases, header.targets.len(), &header.config);
    if total as u64 != info.total {
        return Err(Error::Changed(format!(
            "run {}: its cases now plan {total} episodes instead of {} (a case's settings changed); run it again instead",
            info.id, info.total
        )));
    }
    let by_id: std::collections::HashMap<&str, &PreparedCase> =
        cases.iter().map(|c| (c.case.id.as_str(), c)).collect();
    let new_id = (!dry_run)
        .then(|| {
            st.create_run(
                RunKind::Replay,
                &replay_args(info),
                &info.header,
                info.total,
            )
        })
        .transpose()?;
    let mut sum =
        gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &header.config);
    let mut changed = Vec::new();
    let mut n = 0u64;
    {
        let mut w = new_id.as_deref().map(|id| st.writer(id));
        let mut eps = Episodes::of(st, &info.id);
        for mut r in &mut eps {
            let Some(pc) = by_id.get(r.case.as_str()) else {
                continue;
            };
            let before = (r.verdict.outcome, r.task_success);
            if gauntlet_cases::episode::rejudge(pc, &mut r) {
                changed.push(EpisodeChange {
                    index: r.index,
                    case: r.case.clone(),
                    setting: r.setting,
                    target: r.target.clone(),
                    before,
                    after: (r.verdict.outcome, r.task_success),
                });
            }
            sum.add(&r);
            if let Some(w) = w.as_mut() {
                w.episode(&r)?;
            }
            n += 1;
        }
        if let Some(w) = w.as_mut() {
            w.commit()?;
        }
        if let Some(e) = eps.error {
            if let Some(id) = &new_id {
                st.finish_run(id, RunStatus::Failed, None)?;
            }
            return Err(e.into());
        }
    }
    let summary = sum.finish();
    let complete = n == info.total;
    if let Some(id) = &new_id {
        st.finish_run(
            id,
            if complete {
                RunStatus::Complete
            } else {
                RunStatus::Failed
            },
            complete
                .then(|| serde_json::to_value(&summary))
                .transpose()?
                .as_ref(),
        )?;
    }
    Ok(Replayed::Run {
        of: info.id.clone(),
        id: new_id,
        header: Box::new(header),
        summary: Box::new(summary),
        episodes: n,
        planned: info.total,
        changed,
    })
}

/// [`replay`] of a red team: each stored case re-judged by the judge's deterministic parts as they are now (see
/// `gauntlet_redteam::job::rejudge`).
fn replay_redteam(st: &Store, info: &RunInfo, dry_run: bool) -> Result<Replayed, Error> {
    if info.summary.is_none() {
        return Err(Error::Unsupported(format!(
            "red-team run {} did not finish: {} first",
            info.id,
            info.how_to_resume(st.path())
        )));
    }
    let catalogue = catalogue()?;
    let new_id = (!dry_run)
        .then(|| {
            st.create_run(
                RunKind::RedteamReplay,
                &replay_args(info),
                &info.header,
                info.total,
            )
        })
        .transpose()?;
    let mut report = gauntlet_redteam::job::Report::default();
    let (mut n, mut kept) = (0u64, 0u64);
    let mut changed = Vec::new();
    let corrupt = |index: i64, source: serde_json::Error| StoreError::Corrupt {
        path: st.path().to_path_buf(),
        run: info.id.clone(),
        index,
        source,
    };
    {
        let mut w = new_id.as_deref().map(|id| st.writer(id));
        st.for_each_item(&info.id, |idx, raw| {
            let mut c: gauntlet_redteam::RtCase =
                serde_json::from_str(raw).map_err(|e| corrupt(idx, e))?;
            let before = c.judgement.outcome;
            match catalogue
                .vulnerabilities
                .iter()
                .find(|v| v.id == c.vulnerability)
            {
                Some(v) => {
                    if gauntlet_redteam::job::rejudge(v, &mut c) {
                        changed.push(CaseChange {
                            index: c.index,
                            what: [
                                c.vulnerability.clone(),
                                c.subtype.clone(),
                                c.attack.clone(),
                                c.target.clone(),
                            ],
                            before,
                            after: c.judgement.outcome,
                        });
                    }
                }
                // A custom vulnerability of the run file: its stored judgement stays.
                None => kept += 1,
            }
            report.add(&catalogue, &c);
            let outcome = serde_json::to_value(c.judgement.outcome).unwrap_or_default();
            let json = serde_json::to_string(&c).map_err(|e| corrupt(idx, e))?;
            if let Some(w) = w.as_mut() {
                w.item(c.index, "redteam-case", outcome.as_str(), &json)?;
            }
            n += 1;
            Ok(())
        })?;
        if let Some(w) = w.as_mut() {
            w.commit()?;
        }
    }
    report.simulator = info
        .summary
        .as_ref()
        .and_then(|s| s.get("simulator").cloned())
        .and_then(|v| serde_json::from_value(v).ok());
    if let Some(id) = &new_id {
        st.finish_run(
            id,
            RunStatus::Complete,
            Some(&serde_json::to_value(&report)?),
        )?;
    }
    Ok(Replayed::Redteam {
        of: info.id.clone(),
        id: new_id,
        head: gauntlet_redteam::catalog::json_head(&info.header),
        framework: info
            .args
            .get("framework")
            .and_then(|f| f.as_str())
            .map(str::to_string),
        report: Box::new(report),
        cases: n,
        kept,
        changed,
    })
}
