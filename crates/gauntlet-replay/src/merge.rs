//! `runs merge`: the shards of a run or a red team (`--shard I/N`, each in its own store) joined into the run made
//! in one piece — results interleaved back in plan order, summary or risk assessment folded again, model ledgers
//! added up.

use crate::{Error, catalogue};
use gauntlet_cases::Summary;
use gauntlet_report::json::RunHeader;
use gauntlet_report::stored::{Episodes, StoredError, stored_cases};
use gauntlet_store::{RunInfo, RunKind, RunStatus, Store};
use serde_json::Value;
use std::path::Path;

/// One shard to merge: its store, its run, its place.
struct ShardRun {
    store: Store,
    info: RunInfo,
    shard: gauntlet_core::order::Shard,
}

/// The run a merge made, for the caller to print.
#[derive(Debug)]
pub enum Merged {
    /// A safety-case run.
    Run {
        /// The merged run's id.
        id: String,
        /// Its header.
        header: Box<RunHeader>,
        /// Its summary.
        summary: Box<Summary>,
    },
    /// A red team.
    Redteam {
        /// The merged run's id.
        id: String,
        /// Its header as the job's document shows it.
        head: Value,
        /// The framework the red team was mapped to, if one was asked for.
        framework: Option<String>,
        /// Its risk assessment.
        report: Box<gauntlet_redteam::job::Report>,
    },
}

impl Merged {
    /// The merged run's id.
    pub fn id(&self) -> &str {
        match self {
            Merged::Run { id, .. } | Merged::Redteam { id, .. } => id,
        }
    }

    /// The merged run's tables, as the job prints them.
    pub fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Merged::Run {
                header, summary, ..
            } => gauntlet_report::print_run(out, header, summary),
            Merged::Redteam {
                head,
                framework,
                report,
                ..
            } => gauntlet_report::print_redteam(out, head, framework.as_deref(), report),
        }
    }
}

/// Opens `FILE` or `FILE:RUN_ID` and finds the sharded run in it.
fn open_shard(spec: &str) -> Result<ShardRun, Error> {
    let (path, id) = match spec.rsplit_once(':') {
        Some((p, id)) if Path::new(p).exists() => (p, Some(id)),
        _ => (spec, None),
    };
    if !Path::new(path).exists() {
        return Err(Error::Shards(format!("{spec}: no such store file")));
    }
    let store = Store::open(Path::new(path))?;
    let info = match id {
        Some(id) => store.run(id)?,
        None => the_sharded_run(&store, spec, path)?,
    };
    if info.kind != RunKind::Run && info.kind != RunKind::Redteam {
        return Err(Error::Shards(format!(
            "{spec}: run {} is a `{}` run; only `gauntlet run` and `gauntlet redteam` shards merge",
            info.id, info.kind
        )));
    }
    let shard = info.shard().ok_or_else(|| {
        Error::Shards(format!(
            "{spec}: run {} is not a shard (it was not run with --shard)",
            info.id
        ))
    })?;
    if info.status != RunStatus::Complete {
        return Err(Error::Shards(format!(
            "{spec}: shard {}/{} (run {}) is {} ({}/{} results): finish it with `gauntlet {} --resume {} --store {path}`",
            shard.index, shard.of, info.id, info.status, info.done, info.total, info.kind, info.id
        )));
    }
    Ok(ShardRun { store, info, shard })
}

/// The one sharded run of a store named without a run id.
fn the_sharded_run(store: &Store, spec: &str, path: &str) -> Result<RunInfo, Error> {
    let mut sharded: Vec<RunInfo> = store
        .runs()?
        .into_iter()
        .filter(|r| matches!(r.kind, RunKind::Run | RunKind::Redteam) && r.shard().is_some())
        .collect();
    match sharded.len() {
        1 => Ok(sharded.remove(0)),
        0 => Err(Error::Shards(format!(
            "{spec}: no sharded run in this store (`gauntlet run|redteam --shard I/N` records one)"
        ))),
        _ => Err(Error::Shards(format!(
            "{spec}: {} sharded runs in this store ({}): name one as {path}:RUN_ID",
            sharded.len(),
            sharded
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A run's header or arguments without its shard: what every shard of one run shares.
fn unsharded(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(c) = v.get_mut("config").and_then(|c| c.as_object_mut()) {
        c.remove("shard");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("shard");
    }
    v
}

/// What defines a run beyond its header (the controller, the agent's step limit, …); not how it ran.
fn defining(args: &Value) -> Value {
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
}

/// Checks that `shards` (sorted by index) are every shard of one run, once each.
fn every_shard_once(shards: &[ShardRun]) -> Result<(), Error> {
    let of = shards[0].shard.of;
    for (i, s) in shards.iter().enumerate() {
        if s.shard.of != of {
            return Err(Error::Shards(format!(
                "run {} is shard {}/{}, but run {} is one of {of}: shards of one run have the same N",
                s.info.id, s.shard.index, s.shard.of, shards[0].info.id
            )));
        }
        // Sorted by index: a gap is a missing shard, a repeat one given twice.
        if s.shard.index > i {
            return Err(Error::Shards(format!(
                "shard {i}/{of} is missing: merging needs every shard once"
            )));
        }
        if s.shard.index < i {
            return Err(Error::Shards(format!(
                "shard {}/{of} is given twice: merging needs every shard once",
                s.shard.index
            )));
        }
    }
    if shards.len() != of {
        return Err(Error::Shards(format!(
            "shard {}/{of} is missing: merging needs every shard once",
            shards.len()
        )));
    }
    Ok(())
}

/// Checks that `shards` (sorted by index) are every shard of one run, once each, and gives that run's header and
/// arguments (unsharded; the arguments name the shards merged).
fn one_run(shards: &[ShardRun]) -> Result<(Value, Value), Error> {
    every_shard_once(shards)?;
    let header_v = unsharded(&shards[0].info.header);
    for s in &shards[1..] {
        if unsharded(&s.info.header) != header_v {
            return Err(Error::Shards(format!(
                "run {} and run {} are not shards of the same run: their cases, targets, settings, defense or seed differ",
                shards[0].info.id, s.info.id
            )));
        }
    }
    let args0 = defining(&shards[0].info.args);
    for s in &shards[1..] {
        let args = defining(&s.info.args);
        if args != args0 {
            return Err(Error::Shards(format!(
                "run {} and run {} are not shards of the same run: they were started with different {}",
                shards[0].info.id,
                s.info.id,
                differing_flags(&args0, &args)
            )));
        }
    }
    let mut args = unsharded(&shards[0].info.args);
    if let Some(o) = args.as_object_mut() {
        let from: Vec<String> = shards.iter().map(|s| s.info.id.clone()).collect();
        o.insert("merged_from".into(), serde_json::json!(from));
    }
    Ok((header_v, args))
}

/// The flags (`--a-b`) whose stored values differ between two runs' arguments.
fn differing_flags(a: &Value, b: &Value) -> String {
    let keys = |v: &Value| v.as_object().cloned().unwrap_or_default();
    let (a, b) = (keys(a), keys(b));
    a.keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("--{}", k.replace('_', "-")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Joins the complete shards `specs` (`STORE_FILE` or `STORE_FILE:RUN_ID`, any order) into one run in `st`. Call it
/// inside [`Store::atomically`], so that a merge that fails midway leaves no run behind.
pub fn merge(st: &mut Store, specs: &[String]) -> Result<Merged, Error> {
    let mut shards = specs
        .iter()
        .map(|s| open_shard(s))
        .collect::<Result<Vec<_>, _>>()?;
    if shards.is_empty() {
        return Err(Error::Shards("no shards to merge".into()));
    }
    shards.sort_by_key(|s| s.shard.index);
    let (header_v, args) = one_run(&shards)?;
    if shards[0].info.kind == RunKind::Redteam {
        return merge_redteam(st, &shards, &header_v, &args);
    }
    let header: RunHeader =
        serde_json::from_value(header_v.clone()).map_err(|source| StoredError::Document {
            what: "the stored header",
            run: shards[0].info.id.clone(),
            source,
        })?;
    let probe = RunInfo {
        args: args.clone(),
        ..shards[0].info.clone()
    };
    let cases = stored_cases(&probe, &header)?;
    let total = gauntlet_cases::run::plan_len(&cases, header.targets.len(), &header.config);
    let stored: u64 = shards.iter().map(|s| s.info.total).sum();
    if stored != total as u64 {
        return Err(Error::Changed(format!(
            "the shards hold {stored} episodes but the run plans {total}: its suites changed since the shards ran"
        )));
    }
    let id = st.create_run(RunKind::Run, &args, &header_v, total as u64)?;
    let mut sum =
        gauntlet_cases::run::Summarizer::new(&cases, header.targets.clone(), &header.config);
    interleave_episodes(st, &id, &shards, &cases, &header, &mut sum)?;
    merge_ledgers(st, &shards, &id)?;
    let summary = sum.finish();
    st.finish_run(
        &id,
        RunStatus::Complete,
        Some(&serde_json::to_value(&summary)?),
    )?;
    Ok(Merged::Run {
        id,
        header: Box::new(header),
        summary: Box::new(summary),
    })
}

/// Writes the shards' episodes into run `id` in plan order (shard `g % N` holds place `g`), each checked to be the
/// episode the plan has there.
fn interleave_episodes(
    st: &Store,
    id: &str,
    shards: &[ShardRun],
    cases: &[gauntlet_cases::PreparedCase],
    header: &RunHeader,
    sum: &mut gauntlet_cases::run::Summarizer,
) -> Result<(), Error> {
    let of = shards.len();
    let plan = gauntlet_cases::run::plan_entries(cases, header.targets.len(), &header.config);
    let mut streams: Vec<Episodes> = shards
        .iter()
        .map(|s| Episodes::of(&s.store, &s.info.id))
        .collect();
    let mut w = st.writer(id);
    for (g, &(ci, setting, ti, rep)) in plan.iter().enumerate() {
        let s = g % of;
        let Some(mut r) = streams[s].next() else {
            if let Some(e) = streams[s].error.take() {
                return Err(Error::reading(
                    format!("reading run {}", shards[s].info.id),
                    e,
                ));
            }
            return Err(Error::Changed(format!(
                "run {}: episode {} is not in the store",
                shards[s].info.id,
                g / of
            )));
        };
        let want = (
            cases[ci].case.id.as_str(),
            setting,
            header.targets[ti].as_str(),
            rep,
        );
        if (r.case.as_str(), r.setting, r.target.as_str(), r.rep) != want {
            return Err(Error::Changed(format!(
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
            )));
        }
        r.index = g;
        sum.add(&r);
        w.episode(&r)?;
    }
    w.commit()?;
    for (s, e) in shards.iter().zip(&mut streams) {
        if let Some(e) = e.error.take() {
            return Err(Error::reading(format!("reading run {}", s.info.id), e));
        }
    }
    Ok(())
}

/// The merged run's model ledgers: the shards' added up.
fn merge_ledgers(st: &Store, shards: &[ShardRun], id: &str) -> Result<(), Error> {
    let mut ledgers: std::collections::BTreeMap<String, gauntlet_llm::Ledger> = Default::default();
    for s in shards {
        for (model, counters) in s.store.ledger(&s.info.id)? {
            let snap: gauntlet_llm::LedgerSnapshot =
                serde_json::from_value(counters).map_err(|e| {
                    Error::reading(
                        format!("run {}: the stored ledger of {model}", s.info.id),
                        e,
                    )
                })?;
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
    header: &Value,
    args: &Value,
) -> Result<Merged, Error> {
    let of = shards.len();
    let total: u64 = shards.iter().map(|s| s.info.total).sum();
    for (i, s) in shards.iter().enumerate() {
        // Interleaved: shard i holds the plan's places i, i + N, …
        let expected = (total + (of - 1 - i) as u64) / of as u64;
        if s.info.total != expected {
            return Err(Error::Shards(format!(
                "run {} holds {} cases, but shard {i}/{of} of a {total}-case plan holds {expected}: the shards planned different red teams",
                s.info.id, s.info.total
            )));
        }
    }
    let catalogue = catalogue()?;
    let id = st.create_run(RunKind::Redteam, args, header, total)?;
    let mut report = gauntlet_redteam::job::Report::default();
    let mut streams: Vec<_> = shards
        .iter()
        .map(|s| gauntlet_store::stream_items(s.store.path(), &s.info.id))
        .collect();
    let mut w = st.writer(&id);
    for g in 0..total as usize {
        let s = g % of;
        let run = &shards[s].info.id;
        let (stored_at, raw) = match streams[s].next() {
            Some(r) => r.map_err(|e| Error::reading(format!("reading run {run}"), e))?,
            None => {
                return Err(Error::Changed(format!(
                    "run {run}: case {} is not in the store",
                    g / of
                )));
            }
        };
        let mut c: gauntlet_redteam::RtCase = serde_json::from_str(&raw)
            .map_err(|e| Error::reading(format!("run {run}: case {stored_at}"), e))?;
        if c.index != g / of {
            return Err(Error::Changed(format!(
                "run {run}: case {} is stored as case {}",
                g / of,
                c.index
            )));
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
    drop(w);
    merge_ledgers(st, shards, &id)?;
    st.finish_run(
        &id,
        RunStatus::Complete,
        Some(&serde_json::to_value(&report)?),
    )?;
    Ok(Merged::Redteam {
        id,
        head: gauntlet_redteam::catalog::json_head(header),
        framework: args
            .get("framework")
            .and_then(|f| f.as_str())
            .map(str::to_string),
        report: Box::new(report),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shard_is_the_same_run_without_its_shard() {
        let a = json!({"config": {"shard": {"index": 0, "of": 2}, "seed": 7}, "shard": "0/2", "cases": ["x"]});
        let b = json!({"config": {"shard": {"index": 1, "of": 2}, "seed": 7}, "shard": "1/2", "cases": ["x"]});
        assert_eq!(unsharded(&a), unsharded(&b));
        assert_eq!(
            unsharded(&a),
            json!({"config": {"seed": 7}, "cases": ["x"]})
        );
        let c = json!({"config": {"shard": {"index": 1, "of": 2}, "seed": 8}, "cases": ["x"]});
        assert_ne!(unsharded(&a), unsharded(&c));
    }

    #[test]
    fn how_a_shard_ran_does_not_define_it_but_what_it_ran_does() {
        let a = json!({"concurrency": 4, "quiet": true, "max_steps": 8, "controller": null});
        let b = json!({"concurrency": 16, "quiet": false, "max_steps": 8, "controller": null});
        assert_eq!(defining(&a), defining(&b));
        let c = json!({"concurrency": 4, "max_steps": 9, "controller": "m", "extra": 1});
        assert_ne!(defining(&a), defining(&c));
        assert_eq!(
            differing_flags(&defining(&a), &defining(&c)),
            "--controller, --max-steps, --extra"
        );
    }
}
