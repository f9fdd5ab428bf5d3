//! `gauntlet replay`: a stored run re-judged with the current verifiers, calling no model.

use crate::commands::report::exit_1;
use crate::commands::runs::open;
use crate::exit::{gate_exit, parse_gates};
use crate::flags::StoreArgs;
use anyhow::{Context, Result, bail};
use clap::Args;
use gauntlet_cases::PreparedCase;
use gauntlet_redteam::catalog::json_head;
use gauntlet_report::json::RunHeader;
use gauntlet_report::stored::{Episodes, stored_cases};
use gauntlet_store::{RunInfo, RunKind, Store};
use std::io::Write;
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
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// `gauntlet replay`: re-judges every stored episode of a run with the current verifiers, from its final state,
/// gateway log and replies (no agent, no model), and stores the result as a new `replay` run.
pub(crate) fn cmd_replay(a: ReplayArgs) -> Result<ExitCode> {
    let st = open(&a.store)?;
    let info = st.run(&a.id)?;
    let code = replay(&st, &info, &a.fail_on)?;
    Ok(exit_1(&info, info.gate_failure(0, a.ignore_errors, None)).unwrap_or(code))
}

/// Replays `info` (a run or a red team): re-judges it as a new run.
pub(crate) fn replay(st: &Store, info: &RunInfo, fail_on: &[String]) -> Result<ExitCode> {
    if info.kind == RunKind::Redteam || info.kind == RunKind::RedteamReplay {
        return replay_redteam(st, info, fail_on);
    }
    let gates = parse_gates(fail_on, gauntlet_report::gate::RUN_METRICS)?;
    if info.kind != RunKind::Run && info.kind != RunKind::Replay {
        bail!(
            "run {} is a `{}` run; replay re-judges safety-case and red-team runs",
            info.id,
            info.kind
        );
    }
    let header: RunHeader = serde_json::from_value(info.header.clone())
        .with_context(|| format!("the stored header of run {}", info.id))?;
    let cases = stored_cases(info, &header)?;
    let total = gauntlet_cases::run::plan_len(&cases, header.targets.len(), &header.config);
    if total as u64 != info.total {
        bail!(
            "run {}: its cases now plan {total} episodes instead of {} (a case's settings changed); run it again instead",
            info.id,
            info.total
        );
    }
    let by_id: std::collections::HashMap<&str, &PreparedCase> =
        cases.iter().map(|c| (c.case.id.as_str(), c)).collect();
    let mut args = info.args.clone();
    if let Some(o) = args.as_object_mut() {
        o.insert("replay_of".into(), serde_json::json!(info.id));
    }
    let new_id = st.create_run(
        gauntlet_store::RunKind::Replay,
        &args,
        &info.header,
        info.total,
    )?;
    let mut sum =
        gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &header.config);
    let mut changed = Vec::new();
    let mut n = 0u64;
    {
        let mut w = st.writer(&new_id);
        let mut eps = Episodes::of(st, &info.id);
        for mut r in &mut eps {
            let Some(pc) = by_id.get(r.case.as_str()) else {
                continue;
            };
            let before = (r.verdict.outcome, r.task_success);
            if gauntlet_cases::episode::rejudge(pc, &mut r) {
                changed.push((
                    r.index,
                    r.case.clone(),
                    r.setting,
                    r.target.clone(),
                    before,
                    (r.verdict.outcome, r.task_success),
                ));
            }
            sum.add(&r);
            w.episode(&r)?;
            n += 1;
        }
        w.commit()?;
        if let Some(e) = eps.error {
            st.finish_run(&new_id, gauntlet_store::RunStatus::Failed, None)?;
            return Err(e.into());
        }
    }
    let summary = sum.finish();
    let complete = n == info.total;
    st.finish_run(
        &new_id,
        if complete {
            gauntlet_store::RunStatus::Complete
        } else {
            gauntlet_store::RunStatus::Failed
        },
        complete
            .then(|| serde_json::to_value(&summary))
            .transpose()?
            .as_ref(),
    )?;
    let mut out = std::io::stdout().lock();
    gauntlet_report::print_run(&mut out, &header, &summary)?;
    writeln!(
        out,
        "\nReplayed run {} as {new_id}: {n} episodes re-judged, {} verdicts or task results changed{}",
        info.id,
        changed.len(),
        if complete {
            String::new()
        } else {
            format!(
                " (the original stored {n} of {} episodes: resume it first)",
                info.total
            )
        }
    )?;
    for (i, case, setting, target, (o0, t0), (o1, t1)) in changed.iter().take(50) {
        writeln!(
            out,
            "  episode {i} {case} / {setting} / {target}: {o0:?} → {o1:?}, task {t0:?} → {t1:?}"
        )?;
    }
    if changed.len() > 50 {
        writeln!(out, "  … and {} more", changed.len() - 50)?;
    }
    Ok(gate_exit(
        &gates,
        &gauntlet_report::gate::run_metrics(&summary),
    ))
}

/// Replays a red-team run: each stored case re-judged by the judge's deterministic parts as they are now (see
/// `gauntlet_redteam::job::rejudge`), stored as a new `redteam-replay` run.
pub(crate) fn replay_redteam(st: &Store, info: &RunInfo, fail_on: &[String]) -> Result<ExitCode> {
    let gates = parse_gates(fail_on, gauntlet_report::gate::REDTEAM_METRICS)?;
    let Some(_) = &info.summary else {
        bail!(
            "red-team run {} did not finish: {} first",
            info.id,
            info.how_to_resume(st.path())
        );
    };
    let catalogue = gauntlet_redteam::catalog::builtin()
        .map_err(|e| anyhow::anyhow!("the vulnerability catalogue is broken:\n{}", e.join("\n")))?;
    let mut args = info.args.clone();
    if let Some(o) = args.as_object_mut() {
        o.insert("replay_of".into(), serde_json::json!(info.id));
    }
    let new_id = st.create_run(
        gauntlet_store::RunKind::RedteamReplay,
        &args,
        &info.header,
        info.total,
    )?;
    let mut report = gauntlet_redteam::job::Report::default();
    let (mut n, mut kept) = (0u64, 0u64);
    let mut changed = Vec::new();
    {
        let mut w = st.writer(&new_id);
        st.for_each_item(&info.id, |idx, raw| {
            let mut c: gauntlet_redteam::RtCase =
                serde_json::from_str(raw).map_err(|e| gauntlet_store::StoreError::Corrupt {
                    path: st.path().to_path_buf(),
                    run: info.id.clone(),
                    index: idx,
                    source: e,
                })?;
            let before = c.judgement.outcome;
            match catalogue
                .vulnerabilities
                .iter()
                .find(|v| v.id == c.vulnerability)
            {
                Some(v) => {
                    if gauntlet_redteam::job::rejudge(v, &mut c) {
                        changed.push((
                            c.index,
                            c.vulnerability.clone(),
                            c.subtype.clone(),
                            c.attack.clone(),
                            c.target.clone(),
                            before,
                            c.judgement.outcome,
                        ));
                    }
                }
                // A custom vulnerability of the run file: its stored judgement stays.
                None => kept += 1,
            }
            report.add(&catalogue, &c);
            let outcome = serde_json::to_value(c.judgement.outcome).unwrap_or_default();
            let json =
                serde_json::to_string(&c).map_err(|e| gauntlet_store::StoreError::Corrupt {
                    path: st.path().to_path_buf(),
                    run: info.id.clone(),
                    index: idx,
                    source: e,
                })?;
            w.item(c.index, "redteam-case", outcome.as_str(), &json)?;
            n += 1;
            Ok(())
        })?;
        w.commit()?;
    }
    report.simulator = info
        .summary
        .as_ref()
        .and_then(|s| s.get("simulator").cloned())
        .and_then(|v| serde_json::from_value(v).ok());
    st.finish_run(
        &new_id,
        gauntlet_store::RunStatus::Complete,
        Some(&serde_json::to_value(&report)?),
    )?;
    let mut out = std::io::stdout().lock();
    let head = json_head(&info.header);
    let framework = info.args.get("framework").and_then(|f| f.as_str());
    gauntlet_report::print_redteam(&mut out, &head, framework, &report)?;
    writeln!(
        out,
        "\nReplayed red-team run {} as {new_id}: {n} cases re-judged by tool evidence, detectors and the refusal screen, {} outcomes changed{}",
        info.id,
        changed.len(),
        if kept > 0 {
            format!("; {kept} cases of custom vulnerabilities kept their stored judgement")
        } else {
            String::new()
        }
    )?;
    for (i, v, sub, attack, target, o0, o1) in changed.iter().take(50) {
        writeln!(
            out,
            "  case {i} {v}/{sub} / {attack} / {target}: {o0:?} → {o1:?}"
        )?;
    }
    if changed.len() > 50 {
        writeln!(out, "  … and {} more", changed.len() - 50)?;
    }
    Ok(gate_exit(
        &gates,
        &gauntlet_report::gate::redteam_metrics(&report),
    ))
}
