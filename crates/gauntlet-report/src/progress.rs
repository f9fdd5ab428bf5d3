//! The progress line a job shows while it runs (a terminal redraws it; a log gets it every few seconds).

/// The run's progress line. The ETA is shown once a full wave of `workers` episodes has finished: before that, the
/// first episodes' time (start-up, the first model replies) says little about the rate.
pub fn run_line(
    p: &gauntlet_cases::ProgressInfo,
    elapsed: f64,
    cost: f64,
    workers: usize,
) -> String {
    let eta = if p.done >= workers.max(1) {
        format!(
            "{:.0}s",
            elapsed / p.done as f64 * (p.total - p.done) as f64
        )
    } else {
        "–".to_string()
    };
    let asr = if p.valid > 0 {
        format!("{:.1}%", 100.0 * p.violated as f64 / p.valid as f64)
    } else {
        "–".into()
    };
    format!(
        "[{}] {}/{} episodes, ETA {eta} | ASR so far {asr} | errored {} | {} tokens{}",
        bar(p.done, p.total),
        p.done,
        p.total,
        p.errored,
        p.tokens,
        if cost > 0.0 {
            format!(" | ${cost:.4}")
        } else {
            String::new()
        }
    )
}

/// The red team's progress line.
pub fn redteam_line(t: &gauntlet_redteam::job::Tally, total: usize) -> String {
    let done = (t.passing + t.failing + t.errored + t.unjudged) as usize;
    format!(
        "[{}] {done}/{total} cases | passing {} | failing {} | errored {} | unjudged {}",
        bar(done, total),
        t.passing,
        t.failing,
        t.errored,
        t.unjudged
    )
}

/// A 24-character bar, `#` for what is done.
fn bar(done: usize, total: usize) -> String {
    let width = 24;
    let filled = (width * done)
        .checked_div(total)
        .unwrap_or(width)
        .min(width);
    "#".repeat(filled) + &"-".repeat(width - filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_waits_for_a_full_wave_and_the_bar_fills() {
        let mut p = gauntlet_cases::ProgressInfo {
            total: 100,
            done: 3,
            ..Default::default()
        };
        assert!(run_line(&p, 3.0, 0.0, 4).contains("ETA –"));
        p.done = 50;
        let line = run_line(&p, 10.0, 0.25, 4);
        assert!(
            line.starts_with("[############------------] 50/100"),
            "{line}"
        );
        assert!(
            line.contains("ETA 10s") && line.ends_with("| $0.2500"),
            "{line}"
        );
        assert_eq!(bar(5, 0), "#".repeat(24));
    }
}
