//! The allocator's options for a long job: mimalloc (the binary's allocator) reads them from the environment
//! when the process starts, and the workspace forbids the `unsafe` call that would set them later, so the binary
//! starts itself again with them set.

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
/// 2-worker run of 100,000 episodes peaks at about 54 MB instead of 60–67 MB, at no measurable cost in time
/// (`bench/run.sh`).
pub fn start(purge_delay: Option<OsString>) -> Start {
    match purge_delay {
        Some(_) => Start::AsIs,
        None => Start::Again(vec![(PURGE_DELAY, "1")]),
    }
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
        assert_eq!(start(None), Start::Again(vec![(PURGE_DELAY, "1")]));
    }
}
