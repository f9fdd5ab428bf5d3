//! `gauntlet runs list|show|merge|delete`: the stored runs.

use crate::commands::report::report;
use crate::flags::StoreArgs;
use anyhow::{Result, bail};
use clap::Subcommand;
use gauntlet_report::stored::Format;
use gauntlet_store::Store;
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
            gauntlet_report::stored::write_list(&mut out, st.path(), &st.runs()?, json)?;
        }
        RunsCommand::Show { id, store } => {
            let st = open(&store)?;
            let r = st.run(&id)?;
            gauntlet_report::stored::write_head(&mut out, &st, &r)?;
            if r.summary.is_some() {
                drop(out);
                return report(
                    &st,
                    &r,
                    Format::Table,
                    &mut std::io::stdout().lock(),
                    2000,
                    &[],
                    None,
                );
            }
        }
        RunsCommand::Merge { shards, store } => {
            if store.no_store {
                bail!("--no-store: merging writes the merged run to the store");
            }
            let mut st = Store::open(&store.path)?;
            let merged = st.atomically(|st| gauntlet_replay::merge(st, &shards))?;
            merged.write(&mut out)?;
            let id = merged.id();
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
