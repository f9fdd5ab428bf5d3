//! What the jobs share around their run: the cases they load, the run they resume, the `--json` they stream.

use anyhow::{Context, Result, bail};
use gauntlet_cases::{Loaded, Source};
use gauntlet_setup::interrupt;
use gauntlet_setup::recording::Recorded;
use gauntlet_store::RunKind;
use std::path::PathBuf;

pub(crate) fn source(paths: &[PathBuf]) -> Source {
    if paths.is_empty() {
        Source::Builtin
    } else {
        Source::Paths(paths.to_vec())
    }
}

pub(crate) fn print_diagnostics(loaded: &Loaded) {
    for d in &loaded.diagnostics {
        eprintln!("{d}");
    }
}

/// Loads a suite for running ([`gauntlet_cases::suite::load_valid`]): any broken case stops the run (a broken case
/// is not a finding), its problems printed first.
pub(crate) fn load_valid(paths: &[PathBuf]) -> Result<Loaded> {
    gauntlet_cases::suite::load_valid(paths).map_err(|e| {
        print_problems(&e);
        e.into()
    })
}

/// The problems of a broken suite, on standard error (each with file, line and column).
pub(crate) fn print_problems(e: &gauntlet_cases::suite::InvalidSuite) {
    if let gauntlet_cases::suite::InvalidSuite::Problems(ds) = e {
        ds.iter().for_each(|d| eprintln!("{d}"));
    }
}

/// The run `--resume ID` names, checked to be a run of `kind`, and the arguments it was started with.
pub(crate) fn resumed_run<A: serde::de::DeserializeOwned>(
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

/// The `--json` document at `path`, if one is asked for: the head's fields, then the `list` of results as they come;
/// Ctrl-C closes it.
pub(crate) fn json_document(
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

/// The job's run is recorded from now on: a resumed run says how much it has (unless `quiet`), and Ctrl-C marks
/// it interrupted.
pub(crate) fn recording(
    rec: &Recorded<'_>,
    (kind, cmd): (RunKind, &'static str),
    resumed: bool,
    quiet: bool,
    store: &std::path::Path,
) {
    let Some(id) = &rec.id else { return };
    if resumed && !quiet {
        let line = kind.resuming_line(id, rec.done_count(), rec.done.len());
        eprintln!("{line}");
    }
    interrupt::recording(store.to_path_buf(), id.clone(), cmd);
}

/// Ends the job's recorded run (see [`Recorded::finish`]): a Ctrl-C from now on no longer marks it interrupted.
pub(crate) fn finish(
    rec: &Recorded<'_>,
    models: &gauntlet_setup::Models,
    summary: Option<&serde_json::Value>,
) -> Result<()> {
    interrupt::finished();
    Ok(rec.finish(models, summary)?)
}
