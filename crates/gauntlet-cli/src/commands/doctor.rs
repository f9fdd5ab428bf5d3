//! `gauntlet doctor`: what this machine and configuration have and lack.

use crate::exit::ExitStatus;
use crate::flags::StoreArgs;
use anyhow::Result;
use clap::Args;
use gauntlet_setup::config;
use std::path::PathBuf;
use std::process::ExitCode;

/// `gauntlet doctor`
#[derive(Args)]
pub(crate) struct DoctorArgs {
    /// Models to try with one short request each (repeatable): `provider/model`.
    #[arg(long = "model", value_name = "SPEC")]
    models: Vec<String>,
    /// Config file (YAML): providers, targets, pool limits.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seconds to wait for each endpoint and request.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    timeout: f64,
    #[command(flatten)]
    store: StoreArgs,
}

/// `gauntlet doctor`: one line per check; exit 2 when something a named model or the store needs is missing.
pub(crate) fn cmd_doctor(a: DoctorArgs) -> Result<ExitCode> {
    let cfg = config::Config::load_opt(a.config.as_deref())?;
    let checks = gauntlet_setup::doctor::check(&cfg, &a.store.path, &a.models, a.timeout);
    for c in &checks {
        println!("{:<8} {:<36} {}", c.status.as_str(), c.item, c.detail);
    }
    let failed = checks
        .iter()
        .any(|c| c.status == gauntlet_setup::doctor::Status::Failed);
    Ok(if failed {
        ExitStatus::Failed.into()
    } else {
        ExitCode::SUCCESS
    })
}
