//! A stored run that never finished (still running, interrupted or failed): every report of it says so, in its
//! header or as a banner, because the results it lacks were never judged and are not a pass.

use serde::Serialize;

/// Why a report covers only part of its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unfinished {
    /// The run's status: `running`, `interrupted` or `failed`.
    pub status: String,
    /// Results stored.
    pub done: u64,
    /// Results planned.
    pub total: u64,
    /// How to finish the run, as a clause ("`gauntlet run --resume ID` continues it").
    pub resume: String,
}

impl Unfinished {
    /// Results planned and never stored.
    pub fn missing(&self) -> u64 {
        self.total.saturating_sub(self.done)
    }

    /// One sentence for a banner: what the run is, what it lacks, how to finish it.
    pub fn sentence(&self) -> String {
        format!(
            "Unfinished run: {} with {} of {} results; the {} never run are not a pass ({}).",
            self.status,
            self.done,
            self.total,
            self.missing(),
            self.resume
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_status_counts_and_the_way_to_finish() {
        let u = Unfinished {
            status: "interrupted".into(),
            done: 5409,
            total: 20480,
            resume: "`gauntlet run --resume abc` continues it".into(),
        };
        assert_eq!(u.missing(), 15071);
        assert_eq!(
            u.sentence(),
            "Unfinished run: interrupted with 5409 of 20480 results; the 15071 never run are not a pass \
             (`gauntlet run --resume abc` continues it)."
        );
    }
}
