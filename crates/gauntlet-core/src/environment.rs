//! What the programs the harness starts (agents under test, MCP upstreams, external defenses) inherit of its
//! environment: everything but the variables the binary's own start added for itself (the allocator's options,
//! see `gauntlet_setup::allocator`), so a child sees the environment the user gave Gauntlet.

use std::ffi::{OsStr, OsString};

/// The variable that lists, comma-separated, the variables the binary's start added to its own environment.
pub const ADDED: &str = "GAUNTLET_ADDED_ENV";

/// Removes from `cmd`'s environment what a program the harness starts must not inherit ([`not_inherited_given`]
/// of this process's environment). Every place that starts a program calls it.
pub fn withhold(cmd: &mut std::process::Command) {
    for name in not_inherited_given(std::env::var_os(ADDED).as_deref()) {
        cmd.env_remove(name);
    }
}

/// What a program the harness starts must not inherit, for a given value of [`ADDED`]: the list itself and each variable it names.
pub fn not_inherited_given(added: Option<&OsStr>) -> Vec<OsString> {
    let Some(added) = added else {
        return Vec::new();
    };
    let mut out = vec![OsString::from(ADDED)];
    out.extend(
        added
            .to_string_lossy()
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(OsString::from),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_start_added_is_withheld() {
        assert!(not_inherited_given(None).is_empty());
        assert_eq!(
            not_inherited_given(Some(OsStr::new("MIMALLOC_PURGE_DELAY"))),
            vec![OsString::from(ADDED), "MIMALLOC_PURGE_DELAY".into()]
        );
        assert_eq!(
            not_inherited_given(Some(OsStr::new(" A, ,B,"))),
            vec![OsString::from(ADDED), "A".into(), "B".into()]
        );
    }
}
