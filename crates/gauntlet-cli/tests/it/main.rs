//! End-to-end tests: they run the `gauntlet` binary.

mod cases;
mod defenses;
mod models;
mod redteam;
mod run;

use std::path::PathBuf;
use std::process::Output;

/// Runs the binary with `args`.
pub fn gauntlet(args: &[&str]) -> Output {
    assert_cmd::Command::cargo_bin("gauntlet")
        .unwrap_or_else(|e| panic!("binary: {e}"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"))
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
