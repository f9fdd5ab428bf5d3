//! The allocator's options for a long job: mimalloc (the binary's allocator) reads them from the environment
//! when the process starts, and the workspace forbids the `unsafe` call that would set them later, so the binary
//! starts itself again with them set. It also names them in [`gauntlet_core::environment::ADDED`], so the programs
//! it starts (agents, MCP upstreams, external defenses) do not inherit them. Being read at the start, they are
//! taken from the environment Gauntlet is started in: a value in a `.env` file has no effect.

use gauntlet_core::environment::ADDED;
use std::ffi::OsString;

/// The variable mimalloc reads for how long (ms) it keeps freed pages before returning them to the system.
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// What the binary's first image should do about the allocator's options.
#[derive(Debug, PartialEq, Eq)]
pub enum Start {
    /// Go on as it is: the options are set (by an earlier start, or by the user, whose value wins).
    AsIs,
    /// Start again with these variables added to the environment.
    Again(Vec<(&'static str, &'static str)>),
}

/// Decides from the variable's current value. Freed pages are returned after 1 ms instead of mimalloc's 10: a
/// 2-worker run of 100,000 episodes peaked at 51.8–58.3 MB in seven runs instead of 55.0–67.0 MB in three the same
/// hour, at no measurable cost in time (`bench/run.sh`, BENCHMARKS.md).
pub fn start(purge_delay: Option<OsString>) -> Start {
    match purge_delay {
        Some(_) => Start::AsIs,
        None => Start::Again(vec![(PURGE_DELAY, "1"), (ADDED, PURGE_DELAY)]),
    }
}

/// Whether `exe` is a dynamic loader the binary was started through (`/lib64/ld-linux-x86-64.so.2 gauntlet …`):
/// starting the loader again with the binary's arguments would not start the binary.
fn is_loader(exe: &std::path::Path) -> bool {
    exe.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("ld-") || n.starts_with("ld.so"))
}

/// Replaces the process with the same binary, the same arguments (its own name included) and the allocator's
/// options set, when they are not set yet. Returns only when they are, or when the binary cannot be started again
/// (its file is gone, say): then the job runs with the allocator's defaults, which are correct, only larger.
#[cfg(unix)]
pub fn start_with_options() {
    use std::os::unix::process::CommandExt;
    let Start::Again(vars) = start(std::env::var_os(PURGE_DELAY)) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if is_loader(&exe) {
        return;
    }
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new(exe);
    if let Some(name) = args.next() {
        again.arg0(name);
    }
    // exec returns only if it failed; the job then goes on in this image.
    let _failed = again.args(args).envs(vars).exec();
}

/// Elsewhere the allocator keeps its defaults.
#[cfg(not(unix))]
pub fn start_with_options() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_variable_is_left_as_the_user_set_it() {
        assert_eq!(start(Some("25".into())), Start::AsIs);
        assert_eq!(start(Some("".into())), Start::AsIs);
        assert_eq!(
            start(None),
            Start::Again(vec![(PURGE_DELAY, "1"), (ADDED, PURGE_DELAY)])
        );
    }

    /// What the start adds is what the programs Gauntlet starts are spared.
    #[test]
    fn children_are_spared_what_the_start_added() {
        let Start::Again(vars) = start(None) else {
            panic!("an unset delay starts again");
        };
        let listed = vars.iter().find(|(k, _)| *k == ADDED).map(|(_, v)| *v);
        let spared =
            gauntlet_core::environment::not_inherited_given(listed.map(std::ffi::OsStr::new));
        for (name, _) in vars {
            assert!(spared.iter().any(|s| s == name), "{name}");
        }
    }

    #[test]
    fn a_loader_is_not_started_again() {
        assert!(is_loader("/lib64/ld-linux-x86-64.so.2".as_ref()));
        assert!(is_loader("/lib/ld-musl-x86_64.so.1".as_ref()));
        assert!(!is_loader("/usr/local/bin/gauntlet".as_ref()));
    }
}
