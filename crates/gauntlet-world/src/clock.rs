//! The deterministic logical clock: starts at a fixed instant and advances one minute per write.

use serde::Deserialize;
use serde_json::Value;

/// Minutes since the clock's epoch, 2026-03-02T09:00Z (a Monday).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clock {
    minutes: i64,
    /// Per-kind id counters, so ids are deterministic: `msg-1`, `evt-1`, …
    counters: std::collections::BTreeMap<&'static str, u64>,
}

const EPOCH_DAYS: i64 = 20_514; // days from 1970-01-01 to 2026-03-02
const EPOCH_MINUTES: i64 = 9 * 60;
/// How far the clock may be advanced in setup: far enough for any case, near enough that date arithmetic
/// (and one tick per write after it) never overflows.
const MAX_MINUTES: i64 = 1000 * 366 * 1440;

impl Clock {
    /// The current instant as `YYYY-MM-DDTHH:MMZ`.
    pub fn now(&self) -> String {
        format_minutes(EPOCH_DAYS * 1440 + EPOCH_MINUTES + self.minutes)
    }

    /// Today's date as `YYYY-MM-DD`.
    pub fn today(&self) -> String {
        self.now()[..10].to_string()
    }

    /// Advances one minute.
    pub(crate) fn tick(&mut self) {
        self.minutes += 1;
    }

    /// A fresh id for `kind`, deterministic in the order of creation.
    pub(crate) fn id(&mut self, kind: &'static str) -> String {
        let n = self.counters.entry(kind).or_insert(0);
        *n += 1;
        format!("{kind}-{n}")
    }

    /// A fresh id for `kind` that `taken` does not already use (a case may pick ids like `msg-1` itself).
    pub(crate) fn fresh_id(&mut self, kind: &'static str, taken: impl Fn(&str) -> bool) -> String {
        loop {
            let id = self.id(kind);
            if !taken(&id) {
                return id;
            }
        }
    }

    /// The id of a record added by a setup operation: the one the case gave (refused if already taken, with
    /// `what` naming the record in the error) or a fresh one.
    pub(crate) fn setup_id(
        &mut self,
        given: Option<String>,
        kind: &'static str,
        what: &str,
        taken: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        match given {
            Some(id) if taken(&id) => Err(format!("duplicate {what} id {id}")),
            Some(id) => Ok(id),
            None => Ok(self.fresh_id(kind, taken)),
        }
    }

    /// `world.clock {advance_minutes}`: moves time forward while building s0.
    pub(crate) fn setup(&mut self, op: &str, args: &Value) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Advance {
            advance_minutes: i64,
        }
        match op {
            "clock" => {
                let a: Advance = crate::parse(args)?;
                match self.minutes.checked_add(a.advance_minutes) {
                    Some(m) if m <= MAX_MINUTES => {
                        self.minutes = m;
                        Ok(())
                    }
                    _ => Err(format!(
                        "cannot advance the clock beyond {MAX_MINUTES} minutes (about 1000 years)"
                    )),
                }
            }
            other => Err(format!("unknown operation {other}")),
        }
    }
}

/// Formats absolute minutes since 1970-01-01T00:00Z as `YYYY-MM-DDTHH:MMZ`.
fn format_minutes(total: i64) -> String {
    let days = total.div_euclid(1440);
    let mins = total.rem_euclid(1440);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}Z", mins / 60, mins % 60)
}

/// Howard Hinnant's days → civil date algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_starts_at_epoch_and_ticks() {
        let mut c = Clock::default();
        assert_eq!(c.now(), "2026-03-02T09:00Z");
        c.tick();
        assert_eq!(c.now(), "2026-03-02T09:01Z");
        c.minutes += 15 * 60;
        assert_eq!(c.today(), "2026-03-03");
        assert_eq!(c.id("msg"), "msg-1");
        assert_eq!(c.id("msg"), "msg-2");
        assert_eq!(format_minutes(0), "1970-01-01T00:00Z");
    }
}
