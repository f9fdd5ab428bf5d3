//! A stored run rendered in any report format, for every kind of run: what `gauntlet report` and `runs show`
//! print. Episodes and cases stream from the store one at a time, so memory stays flat however large the run.

use crate::gate::{Gate, Metrics};
use crate::json::RunHeader;
use crate::{Unfinished, gate};
use gauntlet_cases::{EpisodeRecord, PreparedCase, SliceLevel, Source, Summary};
use gauntlet_store::{RunInfo, RunKind, RunStatus, Store, StoreError};
use std::collections::HashMap;
use std::io::Write;

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl Format {
    /// Every format, with its name on the command line.
    pub const NAMES: [(&'static str, Format); 6] = [
        ("table", Format::Table),
        ("json", Format::Json),
        ("jsonl", Format::Jsonl),
        ("html", Format::Html),
        ("junit", Format::Junit),
        ("md", Format::Md),
    ];

    /// The format named `s`.
    pub fn parse(s: &str) -> Option<Format> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, f)| *f)
    }
}

/// Why a stored run could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// The store failed or holds a record that cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the report failed. Not transparent: the `io::Error` stays in the error's chain, where the binary
    /// looks for a closed pipe (`gauntlet report … | head`), which is not an error.
    #[error("writing the report")]
    Io(#[from] std::io::Error),
    /// A stored document (header, summary, case) does not parse.
    #[error("{what} of run {run}")]
    Document {
        /// What was read.
        what: &'static str,
        /// The run.
        run: String,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// The run's cases cannot be found as its suites say them now.
    #[error("run {run}: {why}")]
    Cases {
        /// The run.
        run: String,
        /// What is missing or wrong.
        why: String,
    },
    /// A red-team or privilege run that did not finish has no report to render.
    #[error("{kind} run {run} did not finish ({done} of {total} {unit}): {resume}")]
    Unfinished {
        /// "red-team" or "privilege".
        kind: &'static str,
        /// The run.
        run: String,
        /// What was stored.
        done: u64,
        /// What was planned.
        total: u64,
        /// "cases stored" or "defenses scored".
        unit: &'static str,
        /// How to resume it.
        resume: String,
    },
}

/// What rendering found besides the report: the metrics the `--fail-on` gates read, and warnings about parts
/// that could not be shown (a case file that no longer exists leaves its lines without a plan).
#[derive(Debug)]
pub struct Rendered {
    /// The run's metrics, for the gates.
    pub metrics: Metrics,
    /// What the report could not show, and why.
    pub warnings: Vec<String>,
}

/// The metrics a gate may name for a run of this kind.
pub fn metric_names(kind: RunKind) -> &'static [&'static str] {
    match kind {
        RunKind::Run | RunKind::Replay | RunKind::Gateway => gate::RUN_METRICS,
        RunKind::Redteam | RunKind::RedteamReplay => gate::REDTEAM_METRICS,
        RunKind::Privilege => gate::PRIVILEGE_METRICS,
    }
}

/// Renders a stored run of any kind in `format` to `out`. `gates` are shown in Markdown; the caller checks them.
/// `by` is the level a safety-case run's slices are shown at (`None`: as stored, or by group).
pub fn render(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    gates: &[Gate],
    by: Option<SliceLevel>,
) -> Result<Rendered, StoredError> {
    match info.kind {
        RunKind::Run | RunKind::Replay | RunKind::Gateway => {
            render_run(st, info, format, out, max_detail, gates, by)
        }
        RunKind::Redteam | RunKind::RedteamReplay => {
            render_redteam(st, info, format, out, max_detail, gates)
        }
        RunKind::Privilege => render_privilege(st, info, format, out, gates),
    }
}

/// Parses a stored JSON document of run `info`, naming `what` it is on failure.
fn document<T: serde::de::DeserializeOwned>(
    info: &RunInfo,
    what: &'static str,
    v: &serde_json::Value,
) -> Result<T, StoredError> {
    serde_json::from_value(v.clone()).map_err(|source| StoredError::Document {
        what,
        run: info.id.clone(),
        source,
    })
}

/// A stored run's header.
pub fn header(info: &RunInfo) -> Result<RunHeader, StoredError> {
    document(info, "the stored header", &info.header)
}

/// A stored run's cases, in its order, as its suites say now.
pub fn stored_cases(info: &RunInfo, header: &RunHeader) -> Result<Vec<PreparedCase>, StoredError> {
    let fail = |why: String| StoredError::Cases {
        run: info.id.clone(),
        why,
    };
    // Every job that plans episodes stores its `suites` (a run's, a replay's, a gateway session's).
    let suites = info
        .suites()
        .ok_or_else(|| fail("its stored suites cannot be read".into()))?;
    let source = if suites.is_empty() {
        Source::Builtin
    } else {
        Source::Paths(suites.clone())
    };
    let loaded = gauntlet_cases::load(&source);
    if !loaded.diagnostics.is_empty() {
        let each: Vec<String> = loaded.diagnostics.iter().map(|d| d.to_string()).collect();
        return Err(fail(format!(
            "{} problem(s) in its suites now; fix them (see `gauntlet cases lint`):\n{}",
            each.len(),
            each.join("\n")
        )));
    }
    let cases = loaded.pick(&header.cases).map_err(|id| {
        let from: Vec<String> = suites.iter().map(|p| p.display().to_string()).collect();
        let from = if from.is_empty() {
            "the built-in suite".into()
        } else {
            from.join(", ")
        };
        fail(format!("case `{id}` is no longer in its suites ({from})"))
    })?;
    Ok(cases.into_iter().map(PreparedCase::new).collect())
}

/// `what` of each of a run's cases, by id, as its case files say now; nothing (with a warning that says what is
/// `lost`) when they cannot be read.
fn by_case<T>(
    info: &RunInfo,
    header: &RunHeader,
    lost: &str,
    warnings: &mut Vec<String>,
    what: impl Fn(&PreparedCase) -> Option<T>,
) -> HashMap<String, T> {
    match stored_cases(info, header) {
        Ok(cases) => cases
            .iter()
            .filter_map(|c| what(c).map(|v| (c.case.id.clone(), v)))
            .collect(),
        Err(e) => {
            warnings.push(format!("{lost}: {e}"));
            HashMap::new()
        }
    }
}

/// A stored run's summary with its slices at level `by` (`None`: the stored summary as it is). It is folded from
/// the episodes the run stored when the run did not finish or its stored slices are at another level.
pub fn run_summary(
    st: &Store,
    info: &RunInfo,
    header: &RunHeader,
    by: Option<SliceLevel>,
) -> Result<Summary, StoredError> {
    if let Some(s) = &info.summary {
        let s: Summary = document(info, "the stored summary", s)?;
        if by.is_none() || s.by == by {
            return Ok(s);
        }
    }
    let cases = stored_cases(info, header)?;
    let config = gauntlet_cases::RunConfig {
        by: by.unwrap_or_default(),
        ..header.config.clone()
    };
    let mut sum = gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &config);
    st.for_each_episode(&info.id, |r| {
        sum.add(&r);
        Ok(())
    })?;
    Ok(sum.finish())
}

/// Streams a run's episodes; a read error is kept, to be reported after the renderer is done.
pub struct Episodes {
    inner: gauntlet_store::EpisodeStream,
    /// The first read error, which ended the stream.
    pub error: Option<StoreError>,
}

impl Episodes {
    /// The episodes of run `id`, in order.
    pub fn of(st: &Store, id: &str) -> Episodes {
        Episodes {
            inner: gauntlet_store::stream_episodes(st.path(), id),
            error: None,
        }
    }

    /// Ends with the read error, if the stream had one.
    pub fn finish(self) -> Result<(), StoreError> {
        self.error.map_or(Ok(()), Err)
    }
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

/// [`render`] for a safety-case run (or a replay of one, or a gateway session).
fn render_run(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    gates: &[Gate],
    by: Option<SliceLevel>,
) -> Result<Rendered, StoredError> {
    let header = header(info)?;
    let summary = run_summary(st, info, &header, by)?;
    let mut warnings = Vec::new();
    let mut eps = Episodes::of(st, &info.id);
    // A run that never finished says so in every format (JSON Lines has no place for it: the exit code does).
    let unfinished = (info.status != RunStatus::Complete).then(|| Unfinished {
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
            crate::print_run(out, &header, &summary)?
        }
        Format::Json => {
            let mut sink = crate::JsonSink::start(&mut *out, &header)?;
            for r in &mut eps {
                gauntlet_cases::EpisodeSink::episode(&mut sink, &r)?;
            }
            sink.finish_stored(u, &summary)?;
        }
        Format::Jsonl => {
            // Each line carries its case's attack plan, as the run's case files say it now.
            let plans = by_case(info, &header, "lines carry no `plan`", &mut warnings, |c| {
                serde_json::to_string(c.plan()).ok()
            });
            for r in &mut eps {
                let line = serde_json::to_string(&r).map_err(std::io::Error::other)?;
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
            crate::markdown::run_markdown(&info.id, &header, &summary, &mut eps, gates, u)
                .as_bytes(),
        )?,
        Format::Junit => {
            let files = by_case(
                info,
                &header,
                "test cases carry no `file`",
                &mut warnings,
                |c| {
                    let embedded = ["builtin:", "generated:"]
                        .iter()
                        .any(|p| c.case.source.starts_with(p));
                    (!embedded).then(|| c.case.source.clone())
                },
            );
            let junit = crate::junit::run_junit(&info.id, &header, &mut eps, &files, u);
            out.write_all(junit.as_bytes())?
        }
        Format::Html => {
            let slices = by_case(
                info,
                &header,
                "slice heatmaps lead nowhere",
                &mut warnings,
                |c| Some(crate::html::slice_keys(&c.case, summary.by)),
            );
            let opts = crate::html::HtmlOptions {
                max_detail,
                slices,
                unfinished,
            };
            let html = crate::html::run_html(&info.id, &header, &summary, &mut eps, &opts);
            out.write_all(html.as_bytes())?
        }
    }
    eps.finish()?;
    Ok(Rendered {
        metrics: gate::run_metrics(&summary),
        warnings,
    })
}

/// [`render`] for a red-team run (or a replay of one): cases stream from the store one at a time.
fn render_redteam(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    max_detail: usize,
    gates: &[Gate],
) -> Result<Rendered, StoredError> {
    let head = gauntlet_redteam::catalog::json_head(&info.header);
    let Some(summary) = &info.summary else {
        return Err(unfinished(st, info, "red-team", "cases stored"));
    };
    let report: gauntlet_redteam::job::Report = document(info, "the stored report", summary)?;
    let framework = info.args.get("framework").and_then(|f| f.as_str());
    // A read or parse error ends the stream; it is kept and reported once the renderer is done.
    let mut failure: Option<StoreError> = None;
    let mut items = gauntlet_store::stream_items(st.path(), &info.id);
    let mut raw = std::iter::from_fn(|| match items.next()? {
        Ok((_, json)) => Some(json),
        Err(e) => {
            failure.get_or_insert(e);
            None
        }
    });
    let mut parse_error: Option<serde_json::Error> = None;
    match format {
        Format::Table => crate::print_redteam(out, &head, framework, &report)?,
        Format::Json => {
            let mut doc = crate::json::Streamed::start(&mut *out, &head, "cases")?;
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
            crate::markdown::redteam_markdown(&info.id, &report, &mut raw, gates).as_bytes(),
        )?,
        Format::Junit => {
            let mut values = raw.by_ref().map_while(|c| {
                serde_json::from_str::<serde_json::Value>(&c)
                    .map_err(|e| parse_error = Some(e))
                    .ok()
            });
            out.write_all(crate::junit::redteam_junit(&info.id, &mut values).as_bytes())?
        }
        Format::Html => {
            let mut cases = raw.by_ref().map_while(|c| {
                serde_json::from_str::<gauntlet_redteam::RtCase>(&c)
                    .map_err(|e| parse_error = Some(e))
                    .ok()
            });
            let html = crate::html::redteam_html(
                &info.id,
                &format!("Red team {}", info.id),
                &report,
                &mut cases,
                &crate::html::HtmlOptions::detail(max_detail),
            );
            // A report missing cases is not written at all.
            if parse_error.is_none() {
                out.write_all(html.as_bytes())?
            }
        }
    }
    if let Some(source) = parse_error {
        return Err(StoredError::Document {
            what: "a stored case",
            run: info.id.clone(),
            source,
        });
    }
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(Rendered {
        metrics: gate::redteam_metrics(&report),
        warnings: Vec::new(),
    })
}

/// The error for a job run without its report: it did not finish.
fn unfinished(st: &Store, info: &RunInfo, kind: &'static str, unit: &'static str) -> StoredError {
    StoredError::Unfinished {
        kind,
        run: info.id.clone(),
        done: info.done,
        total: info.total,
        unit,
        resume: info.how_to_resume(st.path()),
    }
}

/// [`render`] for a privilege run.
fn render_privilege(
    st: &Store,
    info: &RunInfo,
    format: Format,
    out: &mut dyn Write,
    gates: &[Gate],
) -> Result<Rendered, StoredError> {
    let Some(doc) = &info.summary else {
        return Err(unfinished(st, info, "privilege", "defenses scored"));
    };
    let census: gauntlet_privilege::score::Census =
        document(info, "the stored census", &doc["census"])?;
    let scores: Vec<gauntlet_privilege::score::DefenseScore> =
        document(info, "the stored scores", &doc["defenses"])?;
    match format {
        Format::Table => {
            writeln!(out, "Privilege: {}", census.summary())?;
            writeln!(out, "{}", crate::privilege_table(&scores))?;
        }
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(doc).map_err(std::io::Error::other)?
        )?,
        Format::Jsonl => {
            for s in &scores {
                serde_json::to_writer(&mut *out, s).map_err(std::io::Error::other)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Md => {
            out.write_all(crate::markdown::privilege_markdown(&info.id, &scores, gates).as_bytes())?
        }
        Format::Junit => {
            out.write_all(crate::junit::privilege_junit(&info.id, &scores).as_bytes())?
        }
        Format::Html => {
            let admitted = st.admitted_by_defense(&info.id, scores.len(), 200)?;
            let html = crate::html::privilege_html(&info.id, &census, &scores, &admitted);
            out.write_all(html.as_bytes())?
        }
    }
    Ok(Rendered {
        metrics: gate::privilege_metrics(&scores),
        warnings: Vec::new(),
    })
}

/// `gauntlet runs list`: the runs of the store at `path`, newest first, as a table or (`json`) one object per run
/// without its arguments and summary.
pub fn write_list(
    out: &mut dyn Write,
    path: &std::path::Path,
    runs: &[RunInfo],
    json: bool,
) -> std::io::Result<()> {
    if json {
        for r in runs {
            let v = serde_json::json!({"id": r.id, "kind": r.kind, "status": r.status, "created": r.created, "updated": r.updated, "total": r.total, "done": r.done});
            writeln!(out, "{v}")?;
        }
    } else if runs.is_empty() {
        writeln!(out, "no runs in {}", path.display())?;
    } else {
        let mut t = crate::table::table(vec!["Run", "Job", "Status", "Created (UTC)", "Done"]);
        for r in runs {
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
    Ok(())
}

/// `gauntlet runs show`: what started a run, how far it got, what its models spent, and how to resume it.
pub fn write_head(out: &mut dyn Write, st: &Store, r: &RunInfo) -> Result<(), StoredError> {
    writeln!(
        out,
        "run {}: {} · {} · {}/{} done · created {} · updated {} · gauntlet {}",
        r.id, r.kind, r.status, r.done, r.total, r.created, r.updated, r.version
    )?;
    writeln!(out, "arguments: {}", r.args)?;
    for (model, counters) in st.ledger(&r.id)? {
        writeln!(out, "model {model}: {counters}")?;
    }
    if r.status != RunStatus::Complete {
        writeln!(out, "not complete: {}", r.how_to_resume(st.path()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_stays_in_the_chain_where_a_closed_pipe_is_recognised() {
        let e = StoredError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        let inner = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(
            inner.map(std::io::Error::kind),
            Some(std::io::ErrorKind::BrokenPipe)
        );
        assert_eq!(e.to_string(), "writing the report");
    }
}
