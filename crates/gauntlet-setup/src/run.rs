//! The safety-case run's set-up from what it is asked: its plan (settings, repetitions, turns, shard), checked
//! with the flag named, whether it needs the model runtime, and its targets.

use crate::{Config, Models, SetupError};
use gauntlet_cases::RunConfig;
use gauntlet_core::Setting;

/// What a run is asked to do, as its flags give it.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// `--settings`.
    pub settings: &'a [Setting],
    /// `--repeat`.
    pub repeat: u32,
    /// `--max-turns`.
    pub max_turns: u32,
    /// `--concurrency`, when given.
    pub concurrency: Option<usize>,
    /// `--seed`.
    pub seed: u64,
    /// `--shard I/N`.
    pub shard: Option<&'a str>,
    /// `--fail-on` was given, which a shard cannot honour.
    pub gated: bool,
}

/// The run's plan, checked; its concurrency is `--concurrency`'s, or 0 for the caller to choose once it knows
/// whether models are in play. Each setting is run once, in the order first given.
pub fn plan(ask: &Ask<'_>) -> Result<RunConfig, SetupError> {
    let mut settings = Vec::new();
    for s in ask.settings {
        if !settings.contains(s) {
            settings.push(*s);
        }
    }
    let at_least_one = [
        ("--repeat", ask.repeat == 0),
        ("--max-turns", ask.max_turns == 0),
        ("--concurrency", ask.concurrency == Some(0)),
    ];
    if let Some((flag, _)) = at_least_one.iter().find(|(_, zero)| *zero) {
        return Err(SetupError::spec(flag, "must be at least 1"));
    }
    if ask.shard.is_some() && ask.gated {
        return Err(SetupError::spec(
            "--fail-on",
            "a shard's figures cover only its part of the run; gate the merged run instead (gauntlet report RUN_ID --fail-on …)",
        ));
    }
    let shard = ask
        .shard
        .map(gauntlet_cases::run::Shard::parse)
        .transpose()
        .map_err(|e| SetupError::spec("--shard", e))?;
    Ok(RunConfig {
        settings,
        repeat: ask.repeat,
        concurrency: ask.concurrency.unwrap_or(0),
        seed: ask.seed,
        max_turns: ask.max_turns,
        shard,
        by: Default::default(),
    })
}

/// The targets' names: those given, or the four reference agents.
pub fn target_names(given: &[String]) -> Vec<String> {
    if given.is_empty() {
        gauntlet_agents::BUILTIN_TARGETS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        given.to_vec()
    }
}

/// Whether the run needs the model runtime: a target, the controller, the judge or the defense is a model.
pub fn needs_models(agents: &[String], controller: &str, judge: bool, defense: &str) -> bool {
    agents
        .iter()
        .any(|n| gauntlet_agents::builtin_target(n).is_none())
        || controller != "scripted"
        || judge
        || gauntlet_defense::is_model_defense(defense)
}

/// The run's targets, by name (`--agent`), with `max_steps` model steps per user turn for LLM agents.
pub fn targets(
    models: &Models,
    cfg: &Config,
    names: &[String],
    max_steps: u32,
) -> Result<Vec<Box<dyn gauntlet_agents::Target>>, SetupError> {
    names
        .iter()
        .map(|n| models.target(n, cfg, max_steps, "--agent"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_checked_with_the_flag_named() {
        let settings = [Setting::Benign, Setting::Direct, Setting::Benign];
        let ask = Ask {
            settings: &settings,
            repeat: 1,
            max_turns: 10,
            concurrency: None,
            seed: 0,
            shard: None,
            gated: false,
        };
        let p = plan(&ask).expect("a plan");
        assert_eq!(p.settings, vec![Setting::Benign, Setting::Direct]);
        assert_eq!(p.concurrency, 0);
        let cases = [
            (Ask { repeat: 0, ..ask }, "--repeat: must be at least 1"),
            (
                Ask {
                    max_turns: 0,
                    ..ask
                },
                "--max-turns: must be at least 1",
            ),
            (
                Ask {
                    concurrency: Some(0),
                    ..ask
                },
                "--concurrency: must be at least 1",
            ),
            (
                Ask {
                    shard: Some("0/2"),
                    gated: true,
                    ..ask
                },
                "--fail-on: a shard's",
            ),
            (
                Ask {
                    shard: Some("3/2"),
                    ..ask
                },
                "--shard: ",
            ),
        ];
        for (ask, want) in cases {
            let e = plan(&ask).expect_err(want);
            assert!(e.to_string().starts_with(want), "{e}");
        }
        assert!(!needs_models(
            &target_names(&[]),
            "scripted",
            false,
            "allow-all"
        ));
        assert!(needs_models(&[], "mock/m", false, "allow-all"));
    }
}
