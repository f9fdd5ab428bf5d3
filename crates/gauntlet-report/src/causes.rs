//! Errored results grouped by cause: what a job prints when something errored, so the cause is on screen and not
//! only in the stored records.

use std::collections::BTreeMap;

/// Counts of errored results by cause (the first line of the error, at most [`CAUSE_CHARS`] characters).
#[derive(Debug, Default, Clone)]
pub struct Causes {
    counts: BTreeMap<String, u64>,
}

/// The longest cause kept; longer first lines are cut with an ellipsis.
pub const CAUSE_CHARS: usize = 200;

impl Causes {
    /// Counts one errored result; `error` is its message (`None`: none was recorded).
    pub fn add(&mut self, error: Option<&str>) {
        let first = error
            .and_then(|e| e.lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or("no error message was recorded");
        let cause = if first.chars().count() > CAUSE_CHARS {
            let cut: String = first.chars().take(CAUSE_CHARS).collect();
            format!("{cut}…")
        } else {
            first.to_string()
        };
        *self.counts.entry(cause).or_default() += 1;
    }

    /// Errored results counted.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The causes with their counts, most frequent first (ties in text order), at most `max` of them, and how many
    /// causes were left out.
    pub fn most_frequent(&self, max: usize) -> (Vec<(&str, u64)>, usize) {
        let mut by_count: Vec<(&str, u64)> =
            self.counts.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let more = by_count.len().saturating_sub(max);
        by_count.truncate(max);
        (by_count, more)
    }

    /// One line per cause, most frequent first (ties in text order), at most `max` of them and then how many
    /// more causes there were. Control characters are shown escaped: the causes come from agents, providers and
    /// defenses, and must not drive the terminal.
    pub fn lines(&self, max: usize) -> Vec<String> {
        let (listed, more) = self.most_frequent(max);
        let mut out: Vec<String> = listed
            .iter()
            .map(|(cause, n)| format!("{n:>6} × {}", cause.escape_debug()))
            .collect();
        if more > 0 {
            out.push(format!("       … and {more} more causes"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_group_by_first_line_most_frequent_first() {
        let mut c = Causes::default();
        for _ in 0..3 {
            c.add(Some(
                "connection failed: refused (127.0.0.1:9)\nretried 3 times",
            ));
        }
        c.add(Some("judge reply is not {score, reason}"));
        c.add(None);
        c.add(Some(&"x".repeat(500)));
        c.add(Some("bell \u{7} and escape \u{1b}[2J"));
        assert_eq!(c.total(), 7);
        let lines = c.lines(2);
        assert_eq!(
            lines[0],
            "     3 × connection failed: refused (127.0.0.1:9)"
        );
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], "       … and 3 more causes");
        let all = c.lines(10);
        assert!(
            all.iter()
                .any(|l| l.ends_with("no error message was recorded"))
        );
        assert!(
            all.iter()
                .any(|l| l.contains(&format!("{}…", "x".repeat(CAUSE_CHARS))))
        );
        assert!(
            all.iter()
                .all(|l| !l.contains('\u{1b}') && !l.contains('\u{7}'))
        );
    }
}
