//! A job's run in the store, or none (`--no-store`): recorded new or resumed, its earlier results read back, its
//! writer (with the models' ledgers), and its end — ledgers saved, then complete or failed. The run and red-team
//! jobs go through it the same way, so a resumed run of either is read and finished alike.

use crate::{Models, SetupError};
use gauntlet_store::{Plan, RunInfo, RunStatus, Store, Writer};

/// Where a job's results go: the run it records (`id`), and which of its results an earlier attempt stored.
/// Without a store there is no id and nothing is done.
pub struct Recorded<'s> {
    store: Option<&'s Store>,
    /// The run id, when there is a store.
    pub id: Option<String>,
    /// Per planned result, whether an earlier attempt stored it (empty without a store).
    pub done: Vec<bool>,
}

impl<'s> Recorded<'s> {
    /// Records `plan` as a new run, or continues `resumed` (whose plan must be the same), in `store`.
    pub fn start(
        store: Option<&'s Store>,
        plan: &Plan<'_>,
        resumed: Option<&RunInfo>,
    ) -> Result<Recorded<'s>, SetupError> {
        let Some(st) = store else {
            return Ok(Recorded {
                store,
                id: None,
                done: Vec::new(),
            });
        };
        let rec = st.record(plan, resumed)?;
        Ok(Recorded {
            store,
            id: Some(rec.id),
            done: rec.done,
        })
    }

    /// How many results an earlier attempt stored.
    pub fn done_count(&self) -> usize {
        self.done.iter().filter(|d| **d).count()
    }

    /// Whether result `i` was stored by an earlier attempt (it is not stored again).
    pub fn is_done(&self, i: usize) -> bool {
        self.done.get(i).copied().unwrap_or(false)
    }

    /// The store and the run's id, when there is a store.
    pub fn at(&self) -> Option<(&'s Store, &str)> {
        self.store.zip(self.id.as_deref())
    }

    fn run(&self) -> std::io::Result<(&'s Store, &str)> {
        match (self.store, self.id.as_deref()) {
            (Some(st), Some(id)) => Ok((st, id)),
            _ => Err(std::io::Error::other("no store")),
        }
    }

    /// The episode an earlier attempt stored at `i` (for a resumed run's in-order output).
    pub fn episode(&self, i: usize) -> std::io::Result<gauntlet_cases::EpisodeRecord> {
        let (st, id) = self.run()?;
        st.episode(id, i)
            .map_err(std::io::Error::other)?
            .ok_or_else(|| std::io::Error::other(format!("episode {i} is not in the store")))
    }

    /// The result (a red-team case, a defense's score) an earlier attempt stored at `i`.
    pub fn item<T: serde::de::DeserializeOwned>(&self, i: usize) -> std::io::Result<T> {
        let (st, id) = self.run()?;
        let raw = st
            .item(id, i)
            .map_err(std::io::Error::other)?
            .ok_or_else(|| std::io::Error::other(format!("case {i} is not in the store")))?;
        serde_json::from_str(&raw).map_err(std::io::Error::other)
    }

    /// A writer of the run's results that also saves the models' ledgers as it commits.
    pub fn writer(&self, models: &Models) -> Option<Writer<'s>> {
        let (st, id) = self.run().ok()?;
        Some(st.writer(id).with_ledger(models.ledger_source()))
    }

    /// Ends the run (nothing without a store): the models' ledgers saved, then complete with `summary`, or failed
    /// when there is none. A failed run's ledger is saved on a best-effort basis: the run's own error is what the
    /// user must see.
    pub fn finish(
        &self,
        models: &Models,
        summary: Option<&serde_json::Value>,
    ) -> Result<(), SetupError> {
        let Ok((st, id)) = self.run() else {
            return Ok(());
        };
        match summary {
            Some(summary) => {
                models.save_ledger(st, id)?;
                st.finish_run(id, RunStatus::Complete, Some(summary))?;
            }
            None => {
                let _ = models.save_ledger(st, id);
                st.finish_run(id, RunStatus::Failed, None)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_recorded_resumed_read_back_and_finished() {
        let dir = std::env::temp_dir().join(format!("gauntlet-recorded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let st = Store::open(&dir.join("runs.db")).expect("store");
        let (args, header) = (serde_json::json!({"a": 1}), serde_json::json!({"h": 1}));
        let plan = Plan::new(gauntlet_store::RunKind::Redteam, &args, &header, 2);
        let models = Models::build(&crate::Config::default(), false, Default::default(), None)
            .expect("models");
        let rec = Recorded::start(Some(&st), &plan, None).expect("recorded");
        assert_eq!((rec.done_count(), rec.is_done(0)), (0, false));
        let mut w = rec.writer(&models).expect("a writer");
        w.item(1, "redteam-case", None, "{\"x\": 7}").expect("item");
        w.commit().expect("commit");
        let id = rec.id.clone().expect("an id");
        let info = st
            .run_of(&id, gauntlet_store::RunKind::Redteam)
            .expect("run");
        let again = Recorded::start(Some(&st), &plan, Some(&info)).expect("resumed");
        assert!(again.is_done(1) && !again.is_done(0) && !again.is_done(9));
        let v: serde_json::Value = again.item(1).expect("stored item");
        assert_eq!(v["x"], 7);
        assert!(again.item::<serde_json::Value>(0).is_err(), "not stored");
        again
            .finish(&models, Some(&serde_json::json!({})))
            .expect("finished");
        let none = Recorded::start(None, &plan, None).expect("no store");
        assert!(none.id.is_none() && none.writer(&models).is_none());
        assert!(none.finish(&models, None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
