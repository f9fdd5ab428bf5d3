//! `cargo bench -p gauntlet-store`: episodes written per second (real records of the built-in suite, replicated
//! to 102,400 episodes) and read back per second, on a fresh database in a temporary directory.

use gauntlet_cases::{EpisodeRecord, EpisodeSink, PreparedCase, RunConfig};
use gauntlet_core::Setting;
use gauntlet_store::{RunKind, Store};
use std::time::Instant;

struct Collect(Vec<EpisodeRecord>);

impl EpisodeSink for Collect {
    fn episode(&mut self, r: &EpisodeRecord) -> std::io::Result<()> {
        self.0.push(r.clone());
        Ok(())
    }
}

fn main() {
    let loaded = gauntlet_cases::load(&gauntlet_cases::Source::Builtin);
    let cases: Vec<PreparedCase> = loaded.cases.into_iter().map(PreparedCase::new).collect();
    let targets: Vec<Box<dyn gauntlet_agents::Target>> = gauntlet_agents::BUILTIN_TARGETS
        .iter()
        .filter_map(|n| gauntlet_agents::builtin_target(n))
        .collect();
    let config = RunConfig {
        settings: vec![
            Setting::Benign,
            Setting::Direct,
            Setting::Indirect,
            Setting::Multi,
        ],
        repeat: 1,
        concurrency: 2,
        seed: 0,
        max_turns: 10,
        shard: None,
        by: Default::default(),
    };
    let mut sample = Collect(Vec::new());
    let defense = gauntlet_defense::AllowAll;
    gauntlet_cases::run(
        &cases,
        &targets,
        &defense,
        None,
        None,
        &config,
        &mut sample,
        &|_| {},
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let sample = sample.0;
    let bytes: usize = sample
        .iter()
        .map(|r| serde_json::to_string(r).map_or(0, |s| s.len()))
        .sum();
    println!(
        "sample: {} episodes of the built-in suite, {:.1} KB of JSON each",
        sample.len(),
        bytes as f64 / sample.len() as f64 / 1024.0
    );
    let copies = 100;
    let total = sample.len() * copies;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("bench.db");
    let store = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let id = store
        .create_run(
            RunKind::Run,
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            total as u64,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sample = sample;
    let n = sample.len();
    let t = Instant::now();
    {
        let mut w = store.writer(&id);
        for c in 0..copies {
            for r in &mut sample {
                r.index = r.index % n + c * n;
                w.episode(r).unwrap_or_else(|e| panic!("{e}"));
            }
        }
        w.commit().unwrap_or_else(|e| panic!("{e}"));
    }
    let secs = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path).map_or(0, |m| m.len())
        + std::fs::metadata(path.with_extension("db-wal")).map_or(0, |m| m.len());
    println!(
        "write: {total} episodes in {secs:.2} s = {:.0} episodes/s (serialize + insert, one thread); {:.0} MB on disk",
        total as f64 / secs,
        size as f64 / 1e6
    );
    let t = Instant::now();
    let n = gauntlet_store::stream_episodes(&path, &id)
        .filter(|r| r.is_ok())
        .count();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "read: {n} episodes in {secs:.2} s = {:.0} episodes/s (select + parse, reader thread)",
        n as f64 / secs
    );
}
