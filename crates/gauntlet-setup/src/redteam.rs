//! The red team's set-up from what it is asked: its plan (the config file's `redteam:` section under the flags,
//! checked), its targets, the models in its roles (judge, attacker, simulator), its seeds (a resumed run's, a
//! simulator's or the catalogue's), and its run in the store with the store-only header fields.

use crate::recording::Recorded;
use crate::{Config, Models, SetupError, config::RedteamFile};
use gauntlet_redteam::simulator::{Feed, Summary};
use gauntlet_redteam::{Catalogue, RedTeamConfig, RtCase, Vulnerability};
use std::sync::Arc;

/// What a red team is asked to run, as its flags give it (each `None` or empty falls back to the config file's
/// `redteam:` section).
#[derive(Debug, Default, Clone, Copy)]
pub struct Ask<'a> {
    /// `--target`s.
    pub targets: &'a [String],
    /// `--vulns`: ids, sub-types or a YAML file.
    pub vulns: Option<&'a str>,
    /// `--attacks`.
    pub attacks: &'a [String],
    /// `--framework`.
    pub framework: Option<&'a str>,
    /// `--simulator`: whether one draws the seeds.
    pub simulator: Option<&'a str>,
    /// `--seeds-per-subtype`.
    pub seeds_per_subtype: Option<usize>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--max-turns`.
    pub max_turns: Option<usize>,
    /// `--shard I/N`.
    pub shard: Option<&'a str>,
    /// `--config`'s path, named as the source of the file's custom vulnerabilities.
    pub config: Option<&'a std::path::Path>,
}

/// A red team's plan: its configuration (concurrency left 0, for the caller, which knows whether models are in
/// play), the vulnerabilities and the names of the targets it runs.
#[derive(Debug)]
pub struct Planned {
    /// The plan.
    pub config: RedTeamConfig,
    /// The chosen vulnerabilities.
    pub vulns: Vec<Vulnerability>,
    /// The targets (by default the reference chat targets).
    pub targets: Vec<String>,
}

/// The plan of `ask` over `file`, checked. `gated`: `--fail-on` was given, which a shard cannot honour.
pub fn plan(
    ask: &Ask<'_>,
    file: &RedteamFile,
    catalogue: &Catalogue,
    gated: bool,
) -> Result<Planned, SetupError> {
    let shard = ask
        .shard
        .map(gauntlet_core::order::Shard::parse)
        .transpose()
        .map_err(|e| SetupError::spec("--shard", e))?;
    if shard.is_some() && ask.simulator.is_some() {
        return Err(SetupError::spec(
            "--shard",
            "a simulator draws its seeds on each machine, so the shards would not test the same cases; shard a red team with the catalogue's seeds",
        ));
    }
    if shard.is_some() && gated {
        return Err(SetupError::spec(
            "--fail-on",
            "a shard's figures cover only its part of the red team; gate the merged run instead (gauntlet report RUN_ID --fail-on …)",
        ));
    }
    let seeds_per_subtype = ask
        .seeds_per_subtype
        .or(file.seeds_per_subtype)
        .unwrap_or(3);
    let mut multi_turn = file.multi_turn.unwrap_or_default();
    if let Some(n) = ask.max_turns {
        multi_turn.max_turns = n;
    }
    for (field, v) in [
        (
            "--max-turns / redteam.multi_turn.max_turns",
            multi_turn.max_turns,
        ),
        ("redteam.multi_turn.tree_width", multi_turn.tree_width),
        ("redteam.multi_turn.tree_depth", multi_turn.tree_depth),
    ] {
        if v == 0 {
            return Err(SetupError::spec(field, "must be at least 1"));
        }
    }
    let source = ask
        .config
        .map_or(String::new(), |p| p.display().to_string());
    let (vulns, attacks) = gauntlet_redteam::selection::select(
        catalogue,
        &gauntlet_redteam::selection::Request {
            framework: ask.framework,
            vulns: ask.vulns,
            attacks: ask.attacks,
            custom: &file.custom_vulnerabilities,
            custom_source: &source,
        },
    )?;
    if seeds_per_subtype == 0 {
        return Err(SetupError::spec(
            "--seeds-per-subtype",
            "must be at least 1",
        ));
    }
    let targets = if ask.targets.is_empty() {
        gauntlet_agents::CHAT_TARGETS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        ask.targets.to_vec()
    };
    let config = RedTeamConfig {
        shard,
        attacks,
        seeds_per_subtype,
        seed: ask.seed.or(file.seed).unwrap_or(0),
        multi_turn,
        concurrency: 0,
    };
    Ok(Planned {
        config,
        vulns,
        targets,
    })
}

/// Whether the red team needs the model runtime: a target, the judge, the attacker or the simulator is a model.
pub fn needs_models(targets: &[String], roles: [Option<&str>; 3]) -> bool {
    let model_targets = targets
        .iter()
        .filter(|n| gauntlet_agents::ChatTarget::from_name(n).is_none())
        .map(String::as_str);
    model_targets
        .chain(roles.into_iter().flatten())
        .any(|n| gauntlet_agents::builtin_target(n).is_none())
}

/// The red team's targets: reference chat targets by name, anything else a model or app target with the run's
/// canary in its system prompt (so prompt leakage is detectable).
pub fn targets(
    models: &Models,
    cfg: &Config,
    names: &[String],
) -> Result<Vec<Box<dyn gauntlet_agents::Target>>, SetupError> {
    let mut targets: Vec<Box<dyn gauntlet_agents::Target>> = Vec::new();
    for n in names {
        if let Some(t) = gauntlet_agents::ChatTarget::from_name(n) {
            targets.push(Box::new(t));
            continue;
        }
        let mut tcfg = cfg.clone_with_canary(n);
        tcfg.pool = cfg.pool.clone();
        targets.push(models.target(n, &tcfg, 10, "--target")?);
    }
    Ok(targets)
}

/// The models of the red team's roles that are given: the judge of the rubrics, the attacker of the model-driven
/// methods and the simulator of the seeds, each with its own pool, and the runtime they block on.
pub struct Roles {
    judge: Option<Arc<gauntlet_llm::Pool>>,
    attacker: Option<Arc<gauntlet_llm::Pool>>,
    simulator: Option<Arc<gauntlet_llm::Pool>>,
    runtime: Option<tokio::runtime::Handle>,
}

impl Roles {
    /// The pools of the `judge`, `attacker` and `simulator` specs given (checked, with their flags named).
    pub fn new(
        models: &Models,
        [judge, attacker, simulator]: [Option<&str>; 3],
    ) -> Result<Roles, SetupError> {
        let pool = |spec: Option<&str>, role: &str, flag: &str| {
            spec.map(|m| models.pool(role, m, flag)).transpose()
        };
        let judge = pool(judge, "judge", "--judge")?;
        let attacker = pool(attacker, "attacker", "--attacker")?;
        let simulator = pool(simulator, "simulator", "--simulator")?;
        let any = judge.is_some() || attacker.is_some() || simulator.is_some();
        let runtime = any.then(|| models.handle()).transpose()?;
        Ok(Roles {
            judge,
            attacker,
            simulator,
            runtime,
        })
    }

    /// The judge of the sub-types' rubrics, if one is given.
    pub fn judge(&self) -> Option<gauntlet_judge::redteam::JudgeModel<'_>> {
        let (p, runtime) = self.judge.as_ref().zip(self.runtime.as_ref())?;
        Some(gauntlet_judge::redteam::JudgeModel {
            model: p.as_ref(),
            runtime,
        })
    }

    fn writer<'a>(
        &'a self,
        pool: &'a Option<Arc<gauntlet_llm::Pool>>,
    ) -> Option<gauntlet_redteam::model_attacks::Attacker<'a>> {
        let (p, runtime) = pool.as_ref().zip(self.runtime.as_ref())?;
        Some(gauntlet_redteam::model_attacks::Attacker {
            model: p.as_ref(),
            runtime,
        })
    }

    /// The attacker of the model-driven methods, if one is given.
    pub fn attacker(&self) -> Option<gauntlet_redteam::model_attacks::Attacker<'_>> {
        self.writer(&self.attacker)
    }

    /// The simulator of the baseline attacks, if one is given.
    pub fn simulator(&self) -> Option<gauntlet_redteam::model_attacks::Attacker<'_>> {
        self.writer(&self.simulator)
    }
}

/// Where the red team's seeds come from.
pub enum Seeding<'r> {
    /// The catalogue's, or a resumed run's stored simulated seeds (put into the vulnerabilities), with what the
    /// stored run's simulator did.
    Given(Option<Summary>),
    /// A simulator, which makes them while the cases run (each case waits for its own seed).
    Simulated(Feed, gauntlet_redteam::model_attacks::Attacker<'r>),
}

impl Seeding<'_> {
    /// Whether a simulator makes the seeds (the plan then has `--seeds-per-subtype` per sub-type).
    pub fn simulated(&self) -> bool {
        matches!(self, Seeding::Simulated(..))
    }

    /// The seeds as the job takes them.
    pub fn as_seeds(&self) -> gauntlet_redteam::job::Seeds<'_> {
        match self {
            Seeding::Given(_) => gauntlet_redteam::job::Seeds::Given,
            Seeding::Simulated(feed, model) => gauntlet_redteam::job::Seeds::Simulated {
                feed,
                model: *model,
            },
        }
    }
}

/// The red team's seeds: a resumed run's stored simulated seeds, put into `vulns` (so it plans and attacks the
/// very same cases), or a simulator's feed, or the catalogue's as they are.
pub fn seeds<'r>(
    resumed: Option<&gauntlet_store::RunInfo>,
    roles: &'r Roles,
    vulns: &mut [Vulnerability],
    plan: &RedTeamConfig,
) -> Result<Seeding<'r>, SetupError> {
    if let Some(seeds) = resumed.and_then(|i| i.header.get("simulated_seeds")) {
        gauntlet_redteam::catalog::apply_simulated_seeds(vulns, seeds)
            .map_err(|e| SetupError::spec("--resume", e))?;
        return Ok(Seeding::Given(
            resumed
                .and_then(|i| i.header.get("simulator_summary").cloned())
                .and_then(|v| serde_json::from_value(v).ok()),
        ));
    }
    Ok(match roles.simulator() {
        Some(model) => Seeding::Simulated(Feed::new(vulns, plan.seeds_per_subtype), model),
        None => Seeding::Given(None),
    })
}

/// The red team's run in the store: a new run, or the resumed run, reopened, with the cases it already has. The
/// simulated seeds are stored later, once made ([`store_seeds`]).
pub fn record<'s>(
    store: Option<&'s gauntlet_store::Store>,
    resumed: Option<&gauntlet_store::RunInfo>,
    args: &serde_json::Value,
    head: &serde_json::Value,
    total: usize,
) -> Result<Recorded<'s>, SetupError> {
    // The simulated seeds are the store's alone: a resumed run's are never compared, whether or not it has them.
    let [k_seeds, k_summary] = gauntlet_redteam::catalog::STORED_ONLY;
    let extra = [(k_seeds, None), (k_summary, None)];
    let plan = gauntlet_store::Plan {
        extra: &extra,
        ..gauntlet_store::Plan::new(gauntlet_store::RunKind::Redteam, args, head, total)
    };
    Recorded::start(store, &plan, resumed)
}

/// Stores the simulator's seeds of `vulns` and what it did in the run's header, with the cases around them, so
/// that a resume attacks the same inputs without calling the simulator again.
pub fn store_seeds(
    w: &mut gauntlet_store::Writer<'_>,
    feed: &Feed,
    vulns: &[Vulnerability],
) -> std::io::Result<()> {
    let seeds = gauntlet_redteam::catalog::simulated_seeds_json(&feed.seeded(vulns));
    let summary = serde_json::to_value(feed.summary())?;
    let [k_seeds, k_summary] = gauntlet_redteam::catalog::STORED_ONLY;
    w.header_fields(&[(k_seeds, seeds), (k_summary, summary)])
        .map_err(std::io::Error::other)
}

/// Stores one red-team case as it completes.
pub fn store_case(w: &mut gauntlet_store::Writer<'_>, c: &RtCase) -> std::io::Result<()> {
    let outcome = serde_json::to_value(c.judgement.outcome)?;
    w.item(
        c.index,
        "redteam-case",
        outcome.as_str(),
        &serde_json::to_string(c)?,
    )
    .map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_checked_with_the_flag_named() {
        let catalogue = gauntlet_redteam::catalog::builtin().expect("catalogue");
        let file = RedteamFile::default();
        let planned = plan(&Ask::default(), &file, &catalogue, false).expect("the defaults plan");
        assert_eq!(planned.targets.len(), gauntlet_agents::CHAT_TARGETS.len());
        assert_eq!(planned.config.seeds_per_subtype, 3);
        assert!(!planned.vulns.is_empty());
        let refused = [
            (
                Ask {
                    shard: Some("0/2"),
                    simulator: Some("mock/m"),
                    ..Ask::default()
                },
                false,
                "--shard: a simulator",
            ),
            (
                Ask {
                    shard: Some("0/2"),
                    ..Ask::default()
                },
                true,
                "--fail-on: a shard's",
            ),
            (
                Ask {
                    shard: Some("2/2"),
                    ..Ask::default()
                },
                false,
                "--shard: ",
            ),
            (
                Ask {
                    max_turns: Some(0),
                    ..Ask::default()
                },
                false,
                "--max-turns / redteam.multi_turn.max_turns: must be at least 1",
            ),
            (
                Ask {
                    seeds_per_subtype: Some(0),
                    ..Ask::default()
                },
                false,
                "--seeds-per-subtype: must be at least 1",
            ),
        ];
        for (ask, gated, want) in refused {
            let e = plan(&ask, &file, &catalogue, gated).expect_err(want);
            assert!(e.to_string().starts_with(want), "{e}");
        }
    }

    #[test]
    fn only_model_specs_need_the_runtime() {
        let chat = vec!["chat-refuser".to_string()];
        assert!(!needs_models(&chat, [None, None, None]));
        assert!(needs_models(
            &chat,
            [Some("openai/gpt-4.1-mini"), None, None]
        ));
        assert!(needs_models(
            &["http://127.0.0.1:9/".to_string()],
            [None; 3]
        ));
    }
}
