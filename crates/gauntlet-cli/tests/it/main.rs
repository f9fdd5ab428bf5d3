//! End-to-end tests: they run the `gauntlet` binary.

mod cases;
mod defenses;
mod mcp;
mod models;
mod redteam;
mod run;
mod store;

use std::path::PathBuf;
use std::process::Output;

/// Runs the binary with `args`. Unless a test passes `--store`, each call records into a store of its own
/// that is removed afterwards, so parallel tests never share (or lock) one database.
pub fn gauntlet(args: &[&str]) -> Output {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let store = std::env::temp_dir().join(format!("gauntlet-it-{}-{n}.db", std::process::id()));
    let out = assert_cmd::Command::cargo_bin("gauntlet")
        .unwrap_or_else(|e| panic!("binary: {e}"))
        .env("GAUNTLET_STORE", &store)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
    out
}

/// A path under tests/fixtures.
pub fn fixture(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
