//! The argument groups several commands share: model options, case selection, the run store.

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use gauntlet_cases::SliceLevel;
use gauntlet_report::stored::Format;
use gauntlet_setup::{Models, config};
use std::path::PathBuf;

/// The model flags of every job that may call models (`run`, `redteam`, `privilege`).
#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ModelFlags {
    /// Model response cache: record (use and fill), replay (cache only, no network) or off.
    #[arg(long, default_value = "off")]
    pub(crate) cache: gauntlet_llm::CacheMode,
    /// Where the response cache lives.
    #[arg(long, default_value = ".gauntlet/cache", value_name = "DIR")]
    pub(crate) cache_dir: PathBuf,
    /// Stop sending model requests once this many USD are spent (per model).
    #[arg(long, value_name = "USD")]
    pub(crate) budget: Option<f64>,
    /// Per-request model timeout in seconds.
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// Model requests in flight per model.
    #[arg(long, value_name = "N")]
    pub(crate) model_concurrency: Option<usize>,
}

impl Default for ModelFlags {
    /// What the flags' defaults give (for runs stored before a job had them).
    fn default() -> Self {
        ModelFlags {
            cache: gauntlet_llm::CacheMode::Off,
            cache_dir: ".gauntlet/cache".into(),
            budget: None,
            timeout: None,
            model_concurrency: None,
        }
    }
}

impl ModelFlags {
    /// The job's models (a runtime only when it `needs` one), with these limits (the library checks them).
    pub(crate) fn build(&self, cfg: &config::Config, needs: bool) -> Result<Models> {
        let mode = self.cache;
        let cache = (mode != gauntlet_llm::CacheMode::Off)
            .then(|| gauntlet_llm::Cache::new(&self.cache_dir, mode));
        let (concurrency, timeout, budget) = (self.model_concurrency, self.timeout, self.budget);
        let limits = gauntlet_setup::Limits {
            concurrency,
            timeout,
            budget,
        };
        Ok(Models::build(cfg, needs, limits, cache)?)
    }
}

/// Which cases of the suites a job takes (`run`, `privilege`).
#[derive(Args, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Selection {
    /// Take only the cases whose id matches (repeatable; `*` and `?` are wildcards), e.g. --case 'mail.*'. A
    /// pattern that matches no case is an error.
    #[arg(long = "case", value_name = "GLOB")]
    #[serde(default)]
    pub(crate) cases: Vec<String>,
    /// Take only cases whose risk, env or attack (or its group) matches, e.g. --filter env=mail,risk=funds: one
    /// key's values are alternatives, different keys all apply (`*` and `?` are wildcards).
    #[arg(long = "filter", value_name = "KEY=VALUE", value_delimiter = ',')]
    #[serde(default)]
    pub(crate) filters: Vec<String>,
    /// Take a sample of N of the chosen cases, drawn with --seed (the same suite and seed draw the same sample).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

impl Selection {
    /// The selection as the privilege job's suites take it, with the seed of its sample.
    pub(crate) fn choice(&self, seed: u64) -> gauntlet_privilege::suites::Choice<'_> {
        let (cases, filters, limit) = (&self.cases, &self.filters, self.limit);
        gauntlet_privilege::suites::Choice {
            cases,
            filters,
            limit,
            seed,
        }
    }

    /// The chosen cases of `cases` (see [`gauntlet_cases::suite::choose`]).
    pub(crate) fn choose(
        &self,
        cases: Vec<gauntlet_cases::Case>,
        seed: u64,
    ) -> Result<Vec<gauntlet_cases::Case>> {
        let (p, f) = (&self.cases, &self.filters);
        Ok(gauntlet_cases::suite::choose(
            cases, p, f, self.limit, seed,
        )?)
    }
}

/// Where runs are recorded.
#[derive(Args, Clone, Default)]
pub(crate) struct StoreArgs {
    /// The run store (SQLite), created if missing.
    #[arg(
        long = "store",
        value_name = "PATH",
        env = "GAUNTLET_STORE",
        default_value = gauntlet_store::DEFAULT_PATH
    )]
    pub(crate) path: PathBuf,
    /// Do not record the run in the store (it cannot then be resumed, replayed or reported on).
    #[arg(long)]
    pub(crate) no_store: bool,
}

pub(crate) fn default_judge_tokens() -> u32 {
    1024
}

/// Opens the run store unless `--no-store`.
pub(crate) fn open_store(a: &StoreArgs) -> Result<Option<gauntlet_store::Store>> {
    if a.no_store {
        return Ok(None);
    }
    Ok(Some(gauntlet_store::Store::open(&a.path)?))
}

/// Prints each model's ledger to stderr.
pub(crate) fn report_models(models: &Models) {
    for line in models.ledger_lines() {
        eprintln!("{line}");
    }
}

/// `--by`: `group` or `leaf`, the level of the taxonomy trees a safety-case run's slice tables aggregate at.
pub(crate) fn slice_level() -> impl TypedValueParser<Value = gauntlet_cases::SliceLevel> {
    PossibleValuesParser::new(["group", "leaf"]).map(|s| SliceLevel::parse(&s).unwrap_or_default())
}

/// `--format`: one of [`Format::NAMES`].
pub(crate) fn format() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::NAMES.map(|(n, _)| n))
        .map(|s| Format::parse(&s).unwrap_or(Format::Table))
}
