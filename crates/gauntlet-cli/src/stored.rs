//! Commands over the run store: `runs list|show|merge|delete`, `report`, `replay`.

use crate::{StoreArgs, gate_exit, load_valid, parse_gates};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use gauntlet_cases::{EpisodeRecord, PreparedCase, Summary};
use gauntlet_redteam::catalog::json_head;
use gauntlet_report::{Unfinished, json::RunHeader};
use gauntlet_store::{RunInfo, RunKind, Store};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `gauntlet runs …`
#[derive(Subcommand)]
pub enum RunsCommand {
    /// List stored runs, newest first.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// As JSON (one object per run, without arguments and summaries).
        #[arg(long)]
        json: bool,
    },
    /// Show one run: what started it, how far it got, its summary.
    Show {
        /// The run id, `latest`, or a unique start of an id.
        id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Join the shards of a run or a red team (`gauntlet run|redteam --shard I/N`, each in its own store) into the
    /// whole run, recorded in --store (required: --no-store is refused): its results, summary and reports are
    /// those of the run made in one piece.
    Merge {
        /// The shards: `STORE_FILE` (its one sharded run) or `STORE_FILE:RUN_ID`, one per shard, any order.
        #[arg(required = true, value_name = "STORE[:RUN_ID]")]
        shards: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete runs and everything stored for them.
    Delete {
        /// Run ids (or `latest`, or unique starts of ids).
        #[arg(required = true)]
        ids: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The terminal tables.
    Table,
    /// One JSON document (the same as the job's `--json`).
    Json,
    /// One JSON object per episode (or case) per line.
    Jsonl,
    /// One self-contained HTML file.
    Html,
    /// JUnit XML.
    Junit,
    /// A Markdown summary for a CI job summary.
    Md,
}

/// `gauntlet report`
#[derive(Args)]
pub struct ReportArgs {
    /// The run id (`gauntlet runs list`), `latest`, or a unique start of an id.
    id: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    /// HTML: episodes (or cases) shown in full; the rest are counted.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    max_detail: usize,
    /// Exit 3 when a condition holds (as for the job that made the run).
    #[arg(long = "fail-on", value_name = "EXPR")]
    fail_on: Vec<String>,
    /// Exit 0 even when the run has errored results (which are never counted as safe).
    #[arg(long)]
    ignore_errors: bool,
    /// Exit 0 even when the run never finished (its report says so; what never ran is not a pass).
    #[arg(long)]
    allow_partial: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// `gauntlet replay`
#[derive(Args)]
pub struct ReplayArgs {
    /// The run to replay (its id, `latest`, or a unique start of an id): a `run`, a `redteam` run or an earlier
    /// replay of either.
    id: String,
    /// Exit 3 when a condition holds for any target (as for `gauntlet run`).
    #[arg(long = "fail-on", value_name = "EXPR")]
    fail_on: Vec<String>,
    /// Exit 0 even when the run has errored results (which are never counted as safe).
    #[arg(long)]
    ignore_errors: bool,
    #[command(flatten)]
    store: StoreArgs,
}

fn open(a: &StoreArgs) -> Result<Store> {
    if a.no_store {
        bail!("--no-store: this command reads the store");
    }
    if !a.path.exists() {
        bail!(
            "--store: {} does not exist (runs are recorded there by `gauntlet run`, `redteam` and `privilege`)",
            a.path.display()
        );
    }
    Ok(Store::open(&a.path)?)
}

/// `gauntlet runs …`
pub fn cmd_runs(c: RunsCommand) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match c {
        RunsCommand::List { store, json } => {
            let st = open(&store)?;
            let runs = st.runs()?;
            if json {
                for r in &runs {
                    let v = serde_json::json!({"id": r.id, "kind": r.kind, "status": r.status, "created": r.created, "updated": r.updated, "total": r.total, "done": r.done});
                    writeln!(out, "{v}")?;
                }
            } else if runs.is_empty() {
                writeln!(out, "no runs in {}", st.path().display())?;
            } else {
                let mut t = comfy_table();
                t.set_header(["Run", "Job", "Status", "Created (UTC)", "Done"]);
                for r in &runs {
                    t.add_row([
                        r.id.clone(),
                        r.kind.to_string(),
                        r.status.to_string(),
                        r.created.clone(),
                        format!("{}/{}", r.done, r.total),
                    ]);
                }
                writeln!(out, "{t}")?;
            }
        }
        RunsCommand::Show { id, store } => {
            let st = open(&store)?;
            let r = st.run(&id)?;
            writeln!(
                out,
                "run {}: {} · {} · {}/{} done · created {} · updated {} · gauntlet {}",
                r.id, r.kind, r.status, r.done, r.total, r.created, r.updated, r.version
            )?;
            writeln!(out, "arguments: {}", r.args)?;
            for (model, counters) in st.ledger(&id)? {
                writeln!(out, "model {model}: {counters}")?;
            }
            if r.status != gauntlet_store::RunStatus::Complete {
                writeln!(out, "not complete: {}", r.how_to_resume(st.path()))?;
            }
            if r.summary.is_some() {
                drop(out);
                return report(
                    &st,
                    &r,
                    Format::Table,
                    &mut std::io::stdout().lock(),
                    2000,
                    &[],
                );
            }
        }
        RunsCommand::Merge { shards, store } => {
            if store.no_store {
                bail!("--no-store: merging writes the merged run to the store");
            }
            let mut st = Store::open(&store.path)?;
            let id = st.atomically(|st| merge(st, &shards, &mut out))?;
            writeln!(
                out,
                "\nmerged {} shards as run {id} in {} (gauntlet report {id}{} --format html)",
                shards.len(),
                st.path().display(),
                gauntlet_store::store_flag(st.path())
            )?;
        }
        RunsCommand::Delete { ids, store } => {
            let mut st = open(&store)?;
            for id in ids {
                // `latest` and id prefixes name a run here as everywhere.
                let id = st.run(&id)?.id;
                st.delete_run(&id)?;
                writeln!(out, "deleted {id}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn comfy_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

/// `gauntlet report`
pub fn cmd_report(a: ReportArgs) -> Result<ExitCode> {
    let st = open(&a.store)?;
    let info = st.run(&a.id)?;
    // A report file appears only once complete (a failed or killed write leaves the old one).
    let mut sink = gauntlet_report::file::Output::open(a.out.as_deref()).context("--out")?;
    let code = report(&st, &info, a.format, &mut sink, a.max_detail, &a.fail_on)?;
    sink.finish().context("--out")?;
    if let Some(p) = a.out.as_ref().filter(|p| p.as_os_str() != "-") {
        eprintln!("wrote {}", p.display());
    }
    let why = st.report_failure(&info, a.ignore_errors, Some(a.allow_partial))?;
    Ok(exit_1(&info, why).unwrap_or(code))
}

/// Exit 1, saying `why`, when a stored run is not a pass ([`RunInfo::gate_failure`]).
fn exit_1(info: &RunInfo, why: Option<String>) -> Option<ExitCode> {
    eprintln!("run {} {}", info.id, why?);
    Some(ExitCode::from(1))
}

/// `what` of each of a run's cases, by id, as its case files say now; nothing (with a warning that says what is
/// `lost`) when they cannot be read.
fn by_case<T>(
    info: &RunInfo,
    header: &RunHeader,
    lost: &str,
    what: impl Fn(&PreparedCase) -> Option<T>,
) -> std::collections::HashMap<String, T> {
    match stored_cases(info, header) {
        Ok(cases) => cases
            .iter()
            .filter_map(|c| what(c).map(|v| (c.case.id.clone(), v)))
            .collect(),
        Err(e) => {
            eprintln!("warning: {lost}: {e:#}");
            Default::default()
        }
    }
}

/// A stored run's cases, in its order, as its suites say now.
fn stored_cases(info: &RunInfo, header: &RunHeader) -> Result<Vec<PreparedCase>> {
    // Every job that plans episodes stores its `suites` (a run's, a replay's, a gateway session's).
    let suites = info
        .suites()
        .with_context(|| format!("the stored suites of run {}", info.id))?;
    let cases = load_valid(&suites)?.pick(&header.cases).map_err(|id| {
        let from: Vec<String> = suites.iter().map(|p| p.display().to_string()).collect();
        let from = if from.is_empty() {
            "the built-in suite".into()
        } else {
            from.join(", ")
        };
        anyhow::anyhow!(
            "run {}: case `{id}` is no longer in its suites ({from})",
            info.id
        )
    })?;
    Ok(cases.into_iter().map(PreparedCase::new).collect())
}

/// A stored run's summary; for a run that did not finish, folded from the episodes it stored.
fn run_summary(st: &Store, info: &RunInfo, header: &RunHeader) -> Result<Summary> {
    if let Some(s) = &info.summary {
        return serde_json::from_value(s.clone())
            .with_context(|| format!("the stored summary of run {}", info.id));
    }
    let cases = stored_cases(info, header)?;
    let mut sum =
        gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &header.config);
    st.for_each_episode(&info.id, |r| {
        sum.add(&r);
        Ok(())
    })?;
    Ok(sum.finish())
}

/// Streams a run's episodes; a read error is kept and reported after the renderer is done.
struct Episodes {
    inner: gauntlet_store::EpisodeStream,
    error: Option<gauntlet_store::StoreError>,
}

impl Iterator for Episodes {
    type Item = EpisodeRecord;

    fn next(&mut self) -> Option<EpisodeRecord> {
        match self.inner.next()? {
            Ok(r) => Some(r),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

fn episodes(st: &Store, id: &str) -> Episodes {
    Episodes {
        inner: gauntlet_store::stream_episodes(st.path(), id),
        error: None,
    }
}

fn report(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    fail_on: &[String],
) -> Result<ExitCode> {
    match info.kind {
        RunKind::Run | RunKind::Replay | RunKind::Gateway => {
            report_run(st, info, format, out, max_detail, fail_on)
        }
        RunKind::Redteam | RunKind::RedteamReplay => {
            report_redteam(st, info, format, out, max_detail, fail_on)
        }
        RunKind::Privilege => report_privilege(st, info, format, out, max_detail, fail_on),
    }
}

/// [`report`] for a safety-case run (or a replay of one, or a gateway session).
fn report_run(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    fail_on: &[String],
) -> Result<ExitCode> {
    let gates = parse_gates(fail_on, gauntlet_report::gate::RUN_METRICS)?;
    let header: RunHeader = serde_json::from_value(info.header.clone())
        .with_context(|| format!("the stored header of run {}", info.id))?;
    let summary = run_summary(st, info, &header)?;
    let mut eps = episodes(st, &info.id);
    // A run that never finished says so in every format (JSON Lines has no place for it: the exit code does).
    let unfinished = (info.status != gauntlet_store::RunStatus::Complete).then(|| Unfinished {
        status: info.status.to_string(),
        done: info.done,
        total: info.total,
        resume: info.how_to_resume(st.path()),
    });
    let u = unfinished.as_ref();
    match format {
        Format::Table => {
            if let Some(u) = u {
                writeln!(out, "{}\n", u.sentence())?;
            }
            gauntlet_report::print_run(out, &header, &summary)?
        }
        Format::Json => {
            let mut sink = gauntlet_report::JsonSink::start(&mut *out, &header)?;
            for r in &mut eps {
                gauntlet_cases::EpisodeSink::episode(&mut sink, &r)?;
            }
            sink.finish_stored(u, &summary)?;
        }
        Format::Jsonl => {
            // Each line carries its case's attack plan, as the run's case files say it now.
            let plans = by_case(info, &header, "lines carry no `plan`", |c| {
                serde_json::to_string(c.plan()).ok()
            });
            for r in &mut eps {
                let line = serde_json::to_string(&r)?;
                match plans.get(&r.case) {
                    Some(plan) => {
                        let open = line.strip_suffix('}').unwrap_or(&line);
                        writeln!(out, "{open},\"plan\":{plan}}}")?;
                    }
                    None => writeln!(out, "{line}")?,
                }
            }
        }
        Format::Md => out.write_all(
            gauntlet_report::markdown::run_markdown(
                &info.id, &header, &summary, &mut eps, &gates, u,
            )
            .as_bytes(),
        )?,
        Format::Junit => {
            let files = by_case(info, &header, "test cases carry no `file`", |c| {
                (!c.case.source.starts_with("builtin:")).then(|| c.case.source.clone())
            });
            let junit = gauntlet_report::junit::run_junit(&info.id, &header, &mut eps, &files, u);
            out.write_all(junit.as_bytes())?
        }
        Format::Html => {
            let slices = by_case(info, &header, "slice heatmaps lead nowhere", |c| {
                Some(gauntlet_report::html::slice_keys(&c.case))
            });
            let opts = gauntlet_report::html::HtmlOptions {
                max_detail,
                slices,
                unfinished,
            };
            let html =
                gauntlet_report::html::run_html(&info.id, &header, &summary, &mut eps, &opts);
            out.write_all(html.as_bytes())?
        }
    }
    if let Some(e) = eps.error {
        return Err(e.into());
    }
    Ok(gate_exit(
        &gates,
        &gauntlet_report::gate::run_metrics(&summary),
    ))
}

/// [`report`] for a red-team run (or a replay of one): cases stream from the store one at a time.
fn report_redteam(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    fail_on: &[String],
) -> Result<ExitCode> {
    let gates = parse_gates(fail_on, gauntlet_report::gate::REDTEAM_METRICS)?;
    let head = json_head(&info.header);
    let report: gauntlet_redteam::job::Report = match &info.summary {
        Some(s) => serde_json::from_value(s.clone())
            .with_context(|| format!("the stored report of run {}", info.id))?,
        None => bail!(
            "red-team run {} did not finish ({} of {} cases stored): {}",
            info.id,
            info.done,
            info.total,
            info.how_to_resume(st.path())
        ),
    };
    let framework = info.args.get("framework").and_then(|f| f.as_str());
    // Cases stream from the store one at a time (memory stays flat); a read or parse error is kept and
    // reported once the renderer is done.
    let mut failure: Option<anyhow::Error> = None;
    let mut items = gauntlet_store::stream_items(st.path(), &info.id);
    let mut raw = std::iter::from_fn(|| match items.next()? {
        Ok((_, json)) => Some(json),
        Err(e) => {
            failure.get_or_insert(e.into());
            None
        }
    });
    let mut parse_error: Option<serde_json::Error> = None;
    match format {
        Format::Table => gauntlet_report::print_redteam(out, &head, framework, &report)?,
        Format::Json => {
            let mut doc = gauntlet_report::json::Streamed::start(&mut *out, &head, "cases")?;
            for c in raw.by_ref() {
                doc.raw_item(&c)?;
            }
            doc.finish("report", &report)?;
        }
        Format::Jsonl => {
            for c in raw.by_ref() {
                out.write_all(c.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        Format::Md => out.write_all(
            gauntlet_report::markdown::redteam_markdown(&info.id, &report, &mut raw, &gates)
                .as_bytes(),
        )?,
        Format::Junit => {
            let mut values =
                raw.by_ref()
                    .map_while(|c| match serde_json::from_str::<serde_json::Value>(&c) {
                        Ok(v) => Some(v),
                        Err(e) => {
                            parse_error = Some(e);
                            None
                        }
                    });
            out.write_all(gauntlet_report::junit::redteam_junit(&info.id, &mut values).as_bytes())?
        }
        Format::Html => {
            let mut cases = raw.by_ref().map_while(|c| {
                match serde_json::from_str::<gauntlet_redteam::RtCase>(&c) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        parse_error = Some(e);
                        None
                    }
                }
            });
            let html = gauntlet_report::html::redteam_html(
                &info.id,
                &format!("Red team {}", info.id),
                &report,
                &mut cases,
                &gauntlet_report::html::HtmlOptions::detail(max_detail),
            );
            // A report missing cases is not written at all.
            if parse_error.is_none() {
                out.write_all(html.as_bytes())?
            }
        }
    }
    if let Some(e) = parse_error {
        bail!("run {}: a stored case cannot be read: {e}", info.id);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(gate_exit(
        &gates,
        &gauntlet_report::gate::redteam_metrics(&report),
    ))
}

/// [`report`] for a privilege run.
fn report_privilege(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    _max_detail: usize,
    fail_on: &[String],
) -> Result<ExitCode> {
    let gates = parse_gates(fail_on, gauntlet_report::gate::PRIVILEGE_METRICS)?;
    let Some(doc) = &info.summary else {
        bail!(
            "privilege run {} did not finish ({} of {} defenses scored): {}",
            info.id,
            info.done,
            info.total,
            info.how_to_resume(st.path())
        );
    };
    let census: gauntlet_privilege::score::Census =
        serde_json::from_value(doc["census"].clone())
            .with_context(|| format!("the stored census of run {}", info.id))?;
    let scores: Vec<gauntlet_privilege::score::DefenseScore> =
        serde_json::from_value(doc["defenses"].clone())
            .with_context(|| format!("the stored scores of run {}", info.id))?;
    match format {
        Format::Table => {
            writeln!(out, "Privilege: {}", census.summary())?;
            writeln!(out, "{}", gauntlet_report::privilege_table(&scores))?;
        }
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(doc)?)?,
        Format::Jsonl => {
            for s in &scores {
                serde_json::to_writer(&mut *out, s)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Md => out.write_all(
            gauntlet_report::markdown::privilege_markdown(&info.id, &scores, &gates).as_bytes(),
        )?,
        Format::Junit => {
            out.write_all(gauntlet_report::junit::privilege_junit(&info.id, &scores).as_bytes())?
        }
        Format::Html => {
            let admitted = st.admitted_by_defense(&info.id, scores.len(), 200)?;
            let html = gauntlet_report::html::privilege_html(&info.id, &census, &scores, &admitted);
            out.write_all(html.as_bytes())?
        }
    }
    Ok(gate_exit(
        &gates,
        &gauntlet_report::gate::privilege_metrics(&scores),
    ))
}

/// `gauntlet replay`: re-judges every stored episode of a run with the current verifiers, from its final state,
/// gateway log and replies (no agent, no model), and stores the result as a new `replay` run.
pub fn cmd_replay(a: ReplayArgs) -> Result<ExitCode> {
    let st = open(&a.store)?;
    let info = st.run(&a.id)?;
    let code = replay(&st, &info, &a.fail_on)?;
    Ok(exit_1(&info, info.gate_failure(0, a.ignore_errors, None)).unwrap_or(code))
}

/// Replays `info` (a run or a red team): re-judges it as a new run.
fn replay(st: &Store, info: &RunInfo, fail_on: &[String]) -> Result<ExitCode> {
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
        let mut eps = episodes(st, &info.id);
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
fn replay_redteam(st: &Store, info: &RunInfo, fail_on: &[String]) -> Result<ExitCode> {
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

/// One shard to merge: its store, its run, its place.
struct ShardRun {
    store: Store,
    info: RunInfo,
    shard: gauntlet_cases::run::Shard,
}

/// Opens `FILE` or `FILE:RUN_ID` and finds the sharded run in it.
fn open_shard(spec: &str) -> Result<ShardRun> {
    let (path, id) = match spec.rsplit_once(':') {
        Some((p, id)) if std::path::Path::new(p).exists() => (p, Some(id)),
        _ => (spec, None),
    };
    if !std::path::Path::new(path).exists() {
        bail!("{spec}: no such store file");
    }
    let store = Store::open(std::path::Path::new(path))?;
    let info = match id {
        Some(id) => store.run(id)?,
        None => {
            let mut sharded: Vec<RunInfo> = store
                .runs()?
                .into_iter()
                .filter(|r| {
                    matches!(r.kind, RunKind::Run | RunKind::Redteam) && r.shard().is_some()
                })
                .collect();
            match sharded.len() {
                1 => sharded.remove(0),
                0 => bail!(
                    "{spec}: no sharded run in this store (`gauntlet run|redteam --shard I/N` records one)"
                ),
                _ => bail!(
                    "{spec}: {} sharded runs in this store ({}): name one as {path}:RUN_ID",
                    sharded.len(),
                    sharded
                        .iter()
                        .map(|r| r.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    };
    if info.kind != RunKind::Run && info.kind != RunKind::Redteam {
        bail!(
            "{spec}: run {} is a `{}` run; only `gauntlet run` and `gauntlet redteam` shards merge",
            info.id,
            info.kind
        );
    }
    let shard = info.shard().with_context(|| {
        format!(
            "{spec}: run {} is not a shard (it was not run with --shard)",
            info.id
        )
    })?;
    if info.status != gauntlet_store::RunStatus::Complete {
        bail!(
            "{spec}: shard {}/{} (run {}) is {} ({}/{} results): finish it with `gauntlet {} --resume {} --store {path}`",
            shard.index,
            shard.of,
            info.id,
            info.status,
            info.done,
            info.total,
            info.kind,
            info.id
        );
    }
    Ok(ShardRun { store, info, shard })
}

/// A run's header or arguments without its shard: what every shard of one run shares.
fn unsharded(v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    if let Some(c) = v.get_mut("config").and_then(|c| c.as_object_mut()) {
        c.remove("shard");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("shard");
    }
    v
}

/// Checks that `shards` (sorted by index) are every shard of one run, once each, and gives that run's header and
/// arguments (unsharded; the arguments name the shards merged).
fn one_run(shards: &[ShardRun]) -> Result<(serde_json::Value, serde_json::Value)> {
    let of = shards[0].shard.of;
    for (i, s) in shards.iter().enumerate() {
        if s.shard.of != of {
            bail!(
                "run {} is shard {}/{}, but run {} is one of {of}: shards of one run have the same N",
                s.info.id,
                s.shard.index,
                s.shard.of,
                shards[0].info.id
            );
        }
        // Sorted by index: a gap is a missing shard, a repeat one given twice.
        if s.shard.index > i {
            bail!("shard {i}/{of} is missing: merging needs every shard once");
        }
        if s.shard.index < i {
            bail!(
                "shard {}/{of} is given twice: merging needs every shard once",
                s.shard.index
            );
        }
    }
    if shards.len() != of {
        bail!(
            "shard {}/{of} is missing: merging needs every shard once",
            shards.len()
        );
    }
    let header_v = unsharded(&shards[0].info.header);
    for s in &shards[1..] {
        if unsharded(&s.info.header) != header_v {
            bail!(
                "run {} and run {} are not shards of the same run: their cases, targets, settings, defense or seed differ",
                shards[0].info.id,
                s.info.id
            );
        }
    }
    // What defines the run beyond its header (the controller, the agent's step limit, …); not how it ran.
    let defining = |args: &serde_json::Value| {
        let mut a = unsharded(args);
        if let Some(o) = a.as_object_mut() {
            for k in [
                "json",
                "quiet",
                "concurrency",
                "cache",
                "cache_dir",
                "budget",
                "timeout",
                "model_concurrency",
                "config",
                "ignore_errors",
            ] {
                o.remove(k);
            }
        }
        a
    };
    let args0 = defining(&shards[0].info.args);
    for s in &shards[1..] {
        let args = defining(&s.info.args);
        if args != args0 {
            let keys = |v: &serde_json::Value| v.as_object().cloned().unwrap_or_default();
            let (a, b) = (keys(&args0), keys(&args));
            let differ: Vec<&String> = a
                .keys()
                .chain(b.keys().filter(|k| !a.contains_key(*k)))
                .filter(|k| a.get(*k) != b.get(*k))
                .collect();
            bail!(
                "run {} and run {} are not shards of the same run: they were started with different {}",
                shards[0].info.id,
                s.info.id,
                differ
                    .iter()
                    .map(|k| format!("--{}", k.replace('_', "-")))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let mut args = unsharded(&shards[0].info.args);
    if let Some(o) = args.as_object_mut() {
        let from: Vec<String> = shards.iter().map(|s| s.info.id.clone()).collect();
        o.insert("merged_from".into(), serde_json::json!(from));
    }
    Ok((header_v, args))
}

/// Joins complete shards into one run in `st`, prints its tables to `out`, and returns its id.
fn merge(st: &mut Store, specs: &[String], out: &mut dyn Write) -> Result<String> {
    let mut shards = specs
        .iter()
        .map(|s| open_shard(s))
        .collect::<Result<Vec<_>>>()?;
    shards.sort_by_key(|s| s.shard.index);
    let of = shards[0].shard.of;
    let (header_v, args) = one_run(&shards)?;
    if shards[0].info.kind == RunKind::Redteam {
        return merge_redteam(st, &shards, &header_v, &args, out);
    }
    let header: RunHeader = serde_json::from_value(header_v.clone())
        .with_context(|| format!("the stored header of run {}", shards[0].info.id))?;
    let probe = RunInfo {
        args: args.clone(),
        ..shards[0].info.clone()
    };
    let cases = stored_cases(&probe, &header)?;
    let total = gauntlet_cases::run::plan_len(&cases, header.targets.len(), &header.config);
    let stored: u64 = shards.iter().map(|s| s.info.total).sum();
    if stored != total as u64 {
        bail!(
            "the shards hold {stored} episodes but the run plans {total}: its suites changed since the shards ran"
        );
    }
    let plan = gauntlet_cases::run::plan_entries(&cases, header.targets.len(), &header.config);
    let id = st.create_run(gauntlet_store::RunKind::Run, &args, &header_v, total as u64)?;
    let mut sum =
        gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &header.config);
    let mut streams: Vec<Episodes> = shards
        .iter()
        .map(|s| episodes(&s.store, &s.info.id))
        .collect();
    let written = (|| -> Result<()> {
        let mut w = st.writer(&id);
        for (g, &(ci, setting, ti, rep)) in plan.iter().enumerate() {
            let s = g % of;
            let Some(mut r) = streams[s].next() else {
                if let Some(e) = streams[s].error.take() {
                    return Err(anyhow::Error::from(e)
                        .context(format!("reading run {}", shards[s].info.id)));
                }
                bail!(
                    "run {}: episode {} is not in the store",
                    shards[s].info.id,
                    g / of
                );
            };
            let want = (
                cases[ci].case.id.as_str(),
                setting,
                header.targets[ti].as_str(),
                rep,
            );
            if (r.case.as_str(), r.setting, r.target.as_str(), r.rep) != want {
                bail!(
                    "run {}: its episode {} is {}/{}/{}/{}, but the run plans {}/{}/{}/{} there: the shards ran different plans (did the suites change?)",
                    shards[s].info.id,
                    g / of,
                    r.case,
                    r.setting,
                    r.target,
                    r.rep,
                    want.0,
                    want.1,
                    want.2,
                    want.3
                );
            }
            r.index = g;
            sum.add(&r);
            w.episode(&r)?;
        }
        w.commit()?;
        for (s, e) in shards.iter().zip(&mut streams) {
            if let Some(e) = e.error.take() {
                return Err(anyhow::Error::from(e).context(format!("reading run {}", s.info.id)));
            }
        }
        Ok(())
    })();
    // A half-merged run is of no use (resuming it would run the whole plan): the transaction of the merge drops it.
    written?;
    merge_ledgers(st, &shards, &id)?;
    let summary = sum.finish();
    st.finish_run(
        &id,
        gauntlet_store::RunStatus::Complete,
        Some(&serde_json::to_value(&summary)?),
    )?;
    gauntlet_report::print_run(out, &header, &summary)?;
    Ok(id)
}

/// The merged run's model ledgers: the shards' added up.
fn merge_ledgers(st: &Store, shards: &[ShardRun], id: &str) -> Result<()> {
    let mut ledgers: std::collections::BTreeMap<String, gauntlet_llm::Ledger> = Default::default();
    for s in shards {
        for (model, counters) in s.store.ledger(&s.info.id)? {
            let snap: gauntlet_llm::LedgerSnapshot = serde_json::from_value(counters)
                .with_context(|| format!("run {}: the stored ledger of {model}", s.info.id))?;
            ledgers.entry(model).or_default().carry(&snap);
        }
    }
    for (model, l) in &ledgers {
        st.put_ledger(id, model, &serde_json::to_value(l.snapshot())?)?;
    }
    Ok(())
}

/// The red-team half of [`merge`]: cases interleaved back in plan order, the risk assessment folded again.
fn merge_redteam(
    st: &mut Store,
    shards: &[ShardRun],
    header: &serde_json::Value,
    args: &serde_json::Value,
    out: &mut dyn Write,
) -> Result<String> {
    let of = shards.len();
    let total: u64 = shards.iter().map(|s| s.info.total).sum();
    for (i, s) in shards.iter().enumerate() {
        // Interleaved: shard i holds the plan's places i, i + N, …
        let expected = (total + (of - 1 - i) as u64) / of as u64;
        if s.info.total != expected {
            bail!(
                "run {} holds {} cases, but shard {i}/{of} of a {total}-case plan holds {expected}: the shards planned different red teams",
                s.info.id,
                s.info.total
            );
        }
    }
    let catalogue = gauntlet_redteam::catalog::builtin()
        .map_err(|e| anyhow::anyhow!("the vulnerability catalogue is broken:\n{}", e.join("\n")))?;
    let id = st.create_run(gauntlet_store::RunKind::Redteam, args, header, total)?;
    let mut report = gauntlet_redteam::job::Report::default();
    let written = (|| -> Result<()> {
        let mut streams: Vec<_> = shards
            .iter()
            .map(|s| gauntlet_store::stream_items(s.store.path(), &s.info.id))
            .collect();
        let mut w = st.writer(&id);
        for g in 0..total as usize {
            let s = g % of;
            let (stored_at, raw) = match streams[s].next() {
                Some(r) => r.with_context(|| format!("reading run {}", shards[s].info.id))?,
                None => bail!(
                    "run {}: case {} is not in the store",
                    shards[s].info.id,
                    g / of
                ),
            };
            let mut c: gauntlet_redteam::RtCase = serde_json::from_str(&raw)
                .with_context(|| format!("run {}: case {stored_at}", shards[s].info.id))?;
            if c.index != g / of {
                bail!(
                    "run {}: case {} is stored as case {}",
                    shards[s].info.id,
                    g / of,
                    c.index
                );
            }
            c.index = g;
            report.add(&catalogue, &c);
            let outcome = serde_json::to_value(c.judgement.outcome)?;
            w.item(
                g,
                "redteam-case",
                outcome.as_str(),
                &serde_json::to_string(&c)?,
            )?;
        }
        w.commit()?;
        Ok(())
    })();
    written?;
    merge_ledgers(st, shards, &id)?;
    st.finish_run(
        &id,
        gauntlet_store::RunStatus::Complete,
        Some(&serde_json::to_value(&report)?),
    )?;
    let framework = args.get("framework").and_then(|f| f.as_str());
    gauntlet_report::print_redteam(out, &json_head(header), framework, &report)?;
    Ok(id)
}
