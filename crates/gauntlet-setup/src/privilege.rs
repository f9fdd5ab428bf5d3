//! The privilege job's scoring, as `gauntlet privilege` runs it: each defense built from its spec ([`Models`]),
//! scored on the probe suite with every decision recorded in the run's store, and its score stored; the defenses
//! an earlier attempt of a resumed run scored are read back instead ([`score_defenses`]). Also the run's record
//! ([`record`]: a [`Recorded`] run, started with its probes). Printing is left
//! to the caller.

use crate::recording::Recorded;
use crate::{Models, SetupError};
use gauntlet_privilege::{DefenseScore, ProbeSuite};
use gauntlet_store::{RunInfo, RunKind, Store, StoreError};
use std::time::Instant;

/// Why the defenses could not be scored; the message names the defense or the run.
#[derive(Debug, thiserror::Error)]
pub enum PrivilegeError {
    /// A defense spec is unusable.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A defense failed while deciding the probes (or its decisions could not be recorded).
    #[error("scoring {spec}: {error}")]
    Scoring {
        /// The defense's spec.
        spec: String,
        /// What failed.
        error: gauntlet_defense::DefenseError,
    },
    /// The store marks the defense scored but holds no score of it.
    #[error("run {id}: no stored score of {spec}")]
    NoStoredScore {
        /// The run.
        id: String,
        /// The defense's spec.
        spec: String,
    },
    /// The store could not read or write the run.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A score could not be serialised for the store.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The privilege run in the store (none without one): a new run, or `resumed` continued, with the job's `args`,
/// the suite's census as its head, one result per defense, and the probes (whose decisions then refer to them).
pub fn record<'s>(
    store: Option<&'s Store>,
    args: &serde_json::Value,
    suite: &ProbeSuite,
    defenses: usize,
    resumed: Option<&RunInfo>,
) -> Result<Recorded<'s>, SetupError> {
    let head = gauntlet_report::privilege_head(&gauntlet_privilege::score::census(suite));
    let plan = gauntlet_store::Plan::new(RunKind::Privilege, args, &head, defenses);
    let rec = Recorded::start(store, &plan, resumed)?;
    if let Some((st, id)) = rec.at() {
        st.record_probes(id, suite)?;
    }
    Ok(rec)
}

/// Scores each defense of `specs` on `suite`, in order. With `store` (the store and the run's id), each
/// decision is recorded as it is made and each score stored when done, and a defense the run already scored is
/// read back, not scored again. `scored` is called with each new score and the seconds it took.
pub fn score_defenses(
    suite: &ProbeSuite,
    models: &Models,
    specs: &[String],
    store: Option<(&Store, &str)>,
    scored: &mut dyn FnMut(&DefenseScore, f64),
) -> Result<Vec<DefenseScore>, PrivilegeError> {
    let done = match store {
        Some((st, id)) => st.done(id, specs.len())?,
        None => Vec::new(),
    };
    let mut scores = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if let (Some((st, id)), true) = (store, done.get(i).copied().unwrap_or(false)) {
            // Scored by an earlier attempt of this run.
            let stored = st.item_as(id, i)?;
            scores.push(stored.ok_or_else(|| PrivilegeError::NoStoredScore {
                id: id.to_string(),
                spec: spec.clone(),
            })?);
            continue;
        }
        let s = score_one(suite, models, (i, spec), store, scored)?;
        if let Some((st, id)) = store {
            let mut w = st.writer(id);
            w.item(i, "privilege-score", None, &serde_json::to_string(&s)?)?;
            w.commit()?;
        }
        scores.push(s);
    }
    Ok(scores)
}

/// Scores the `i`th defense, recording its decisions (and the models' ledgers) in the run's store if there is
/// one, then tells `scored`.
fn score_one(
    suite: &ProbeSuite,
    models: &Models,
    (i, spec): (usize, &String),
    store: Option<(&Store, &str)>,
    scored: &mut dyn FnMut(&DefenseScore, f64),
) -> Result<DefenseScore, PrivilegeError> {
    let d = models.defense(spec)?;
    let started = Instant::now();
    let mut writer = store.map(|(st, id)| st.writer(id).with_ledger(models.ledger_source()));
    let s = gauntlet_privilege::score_with(suite, d.as_ref(), &mut |k, _, decision| match writer
        .as_mut()
    {
        Some(w) => w
            .decision(i, k, decision)
            .map_err(|e| gauntlet_defense::DefenseError {
                defense: spec.clone(),
                message: format!("recording the decision: {e}"),
            }),
        None => Ok(()),
    })
    .map_err(|error| PrivilegeError::Scoring {
        spec: spec.clone(),
        error,
    })?;
    if let Some(mut w) = writer {
        w.commit()?;
    }
    scored(&s, started.elapsed().as_secs_f64());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Limits};

    #[test]
    fn defenses_are_scored_in_order_and_a_bad_spec_is_named() {
        let suite = gauntlet_privilege::suites::load(&[], &Default::default(), &mut |_| {})
            .expect("built-in suite");
        let models =
            Models::build(&Config::default(), false, Limits::default(), None).expect("models");
        let specs = ["allow-all".to_string(), "deny-all".to_string()];
        let mut timed = Vec::new();
        let scores = score_defenses(&suite, &models, &specs, None, &mut |s, secs| {
            timed.push((s.defense.clone(), secs >= 0.0));
        })
        .expect("scores");
        let names: Vec<&str> = scores.iter().map(|s| s.defense.as_str()).collect();
        assert_eq!(names, ["allow-all", "deny-all"]);
        assert_eq!(timed.len(), 2);
        assert!(timed.iter().all(|(_, ok)| *ok));
        let bad = ["nonsense".to_string()];
        let e = score_defenses(&suite, &models, &bad, None, &mut |_, _| {}).expect_err("unknown");
        assert!(e.to_string().starts_with("--defense: "), "{e}");
    }

    #[test]
    fn a_stored_run_keeps_the_scores_it_has() {
        let dir =
            std::env::temp_dir().join(format!("gauntlet-setup-privilege-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let st = Store::open(&dir.join("runs.db")).expect("store");
        let suite = gauntlet_privilege::suites::load(&[], &Default::default(), &mut |_| {})
            .expect("built-in suite");
        let models =
            Models::build(&Config::default(), false, Limits::default(), None).expect("models");
        let specs = ["allow-all".to_string()];
        let rec =
            record(Some(&st), &serde_json::json!({}), &suite, specs.len(), None).expect("record");
        let first =
            score_defenses(&suite, &models, &specs, rec.at(), &mut |_, _| {}).expect("scored");
        let mut again = 0;
        let second = score_defenses(&suite, &models, &specs, rec.at(), &mut |_, _| {
            again += 1;
        })
        .expect("read back");
        assert_eq!(again, 0, "a stored score is not scored again");
        assert_eq!(
            serde_json::to_value(&first).expect("json"),
            serde_json::to_value(&second).expect("json")
        );
        rec.finish(&models, Some(&serde_json::json!({})))
            .expect("complete");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
