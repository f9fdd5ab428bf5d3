//! The model side of a job: the config file (`--config`, [`config`]) and the pools, targets and defenses built from
//! their specs ([`Models`]) — one tokio runtime, one pool per (role, model) with its own limits and ledger, the
//! endpoints a job will call (for the preflight check), the circuit breakers, and the ledgers carried across a
//! resumed run. Every job's front end (the binary, and later the Python package) builds its models here, so a spec
//! means the same thing everywhere. Also the gateway's sessions over MCP, whose defenses are built here
//! ([`gateway`]: a case's sandbox, judged and recorded as a run; the proxy), the process's allocator options
//! for a long job ([`allocator`]), a job's run in the store from start to finish ([`recording`]), the red
//! team's plan, targets, role models and seeds ([`redteam`]), the safety-case run's plan and targets ([`run`]),
//! the privilege job's scoring of its defenses, each decision recorded and a resumed run's scores kept
//! ([`privilege`]), and what Ctrl-C does to a job's run ([`interrupt`]: the `--json` closed, the run marked
//! interrupted).

pub mod allocator;
pub mod config;
pub mod doctor;
pub mod gateway;
pub mod interrupt;
mod models;
pub mod privilege;
pub mod recording;
pub mod redteam;
mod roles;
pub mod run;

pub use config::Config;
pub use models::{Limits, Models};

/// Why a job's models could not be set up: the message names the flag or file and what to fix.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The config file cannot be read or parsed, or a setting it names is missing.
    #[error("{0}")]
    Config(String),
    /// A spec (model, target, defense) given to a flag is unusable.
    #[error("{flag}: {message}")]
    Spec {
        /// The flag that gave the spec (`--agent`, `--judge`, …).
        flag: String,
        /// What is wrong with it.
        message: String,
    },
    /// A limit given on the command line or in the config is out of range.
    #[error("{0}")]
    Limit(String),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// An endpoint the job will call cannot be reached: nothing was run.
    #[error("{0}")]
    Unreachable(String),
    /// The store could not read or write the models' ledgers.
    #[error(transparent)]
    Store(#[from] gauntlet_store::StoreError),
    /// A stored ledger could not be read back.
    #[error("{0}")]
    Ledger(String),
    /// The red team's vulnerabilities or attacks cannot be chosen as asked.
    #[error(transparent)]
    Select(#[from] gauntlet_redteam::selection::SelectError),
    /// A part of the run's record could not be encoded.
    #[error("cannot encode the run's record: {0}")]
    Encode(#[from] serde_json::Error),
}

impl SetupError {
    fn spec(flag: &str, message: impl std::fmt::Display) -> SetupError {
        SetupError::Spec {
            flag: flag.to_string(),
            message: message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_config_file_names_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("gauntlet-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("bad.yaml");
        std::fs::write(&path, "providers:\n  mock: {base_url: 3, nope: 1}\n").expect("write");
        let e = Config::load(&path).expect_err("unknown field");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("--config {}:2:", path.display())),
            "{msg}"
        );
        let e = Config::load(&dir.join("missing.yaml")).expect_err("missing file");
        assert!(e.to_string().contains("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn specs_and_limits_are_checked_with_the_flag_named() {
        let cfg = Config::default();
        let zero = Limits {
            concurrency: Some(0),
            ..Limits::default()
        };
        let Err(e) = Models::build(&cfg, false, zero, None) else {
            panic!("a zero concurrency is refused")
        };
        assert!(e.to_string().contains("--model-concurrency"), "{e}");
        let m = Models::build(&cfg, false, Limits::default(), None).expect("models");
        let e = m
            .target("no-such-agent", &cfg, 8, "--agent")
            .err()
            .expect("unknown");
        assert!(
            e.to_string()
                .starts_with("--agent: unknown target `no-such-agent`"),
            "{e}"
        );
        assert!(m.target("reference", &cfg, 8, "--agent").is_ok());
        let Err(e) = m.defense("nonsense") else {
            panic!("an unknown defense is refused")
        };
        assert!(e.to_string().starts_with("--defense: "), "{e}");
        for bad in [f64::INFINITY, -1.0, 1e300] {
            let limits = Limits {
                timeout: Some(bad),
                ..Limits::default()
            };
            assert!(Models::build(&cfg, false, limits, None).is_err(), "{bad}");
        }
        let mut typo = Config::default();
        typo.pool.max_tokens.insert("jduge".into(), 100);
        let Err(e) = Models::build(&typo, false, Limits::default(), None) else {
            panic!("an unknown role is refused")
        };
        assert!(
            e.to_string().contains("pool.max_tokens.jduge: not a role"),
            "{e}"
        );
    }
}
