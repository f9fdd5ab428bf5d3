//! `gauntlet runs list|show|merge|delete`: the stored runs.

use crate::commands::report::{Format, report};
use crate::flags::StoreArgs;
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use gauntlet_redteam::catalog::json_head;
use gauntlet_report::json::RunHeader;
use gauntlet_report::stored::{Episodes, stored_cases};
use gauntlet_store::{RunInfo, RunKind, Store};
use std::io::Write;
use std::process::ExitCode;

/// `gauntlet runs …`
#[derive(Subcommand)]
pub(crate) enum RunsCommand {
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

pub(crate) fn open(a: &StoreArgs) -> Result<Store> {
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
pub(crate) fn cmd_runs(c: RunsCommand) -> Result<ExitCode> {
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

pub(crate) fn comfy_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

/// One shard to merge: its store, its run, its place.
pub(crate) struct ShardRun {
    pub(crate) store: Store,
    pub(crate) info: RunInfo,
    pub(crate) shard: gauntlet_cases::run::Shard,
}

/// Opens `FILE` or `FILE:RUN_ID` and finds the sharded run in it.
pub(crate) fn open_shard(spec: &str) -> Result<ShardRun> {
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
pub(crate) fn unsharded(v: &serde_json::Value) -> serde_json::Value {
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
pub(crate) fn one_run(shards: &[ShardRun]) -> Result<(serde_json::Value, serde_json::Value)> {
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
pub(crate) fn merge(st: &mut Store, specs: &[String], out: &mut dyn Write) -> Result<String> {
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
        .map(|s| Episodes::of(&s.store, &s.info.id))
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
pub(crate) fn merge_ledgers(st: &Store, shards: &[ShardRun], id: &str) -> Result<()> {
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
pub(crate) fn merge_redteam(
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
