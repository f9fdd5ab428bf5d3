//! The progress line a job shows while it runs (a terminal redraws it; a log gets it every few seconds).
//! [`Ticker`] draws it on stderr: shown from the first second (waiting for the first result is progress too),
//! redrawn in place on a terminal, and printed as a plain line every ten seconds when stderr is not one (a CI log, a
//! pipe), so a slow model is never a silent screen. [`CasesSeen`] keeps a red team's line and errored causes.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// What the line says now.
struct Line {
    text: String,
    done: bool,
    drawn: Instant,
}

/// A job's progress line. Dropping it stops the ticker.
pub struct Ticker {
    line: Arc<Mutex<Line>>,
    /// Dropped to stop the ticker: its thread wakes at once instead of at its next tick, so a job's end does not
    /// wait up to a tick for it.
    stop: Option<std::sync::mpsc::Sender<()>>,
    tty: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    /// Starts the line for `total` results of kind `what` (`episodes`, `cases`); `None` when `quiet`.
    pub fn start(total: usize, what: &'static str, quiet: bool) -> Option<Ticker> {
        if quiet {
            return None;
        }
        let tty = std::io::stderr().is_terminal();
        let started = Instant::now();
        let line = Arc::new(Mutex::new(Line {
            text: format!("0/{total} {what}"),
            done: false,
            drawn: started,
        }));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let l = line.clone();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let every = if tty {
                    Duration::from_secs(1)
                } else {
                    Duration::from_secs(10)
                };
                // A terminal shows the line at once; a log gets its first line after ten seconds, so a short
                // job adds none.
                let mut next = if tty {
                    Instant::now()
                } else {
                    Instant::now() + every
                };
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(Duration::from_millis(100))
                {
                    if Instant::now() < next {
                        continue;
                    }
                    next = Instant::now() + every;
                    let Ok(mut line) = l.lock() else { return };
                    if line.done {
                        return;
                    }
                    let waiting = if line.text.starts_with("0/") {
                        ", waiting for the first to finish"
                    } else {
                        ""
                    };
                    let elapsed = started.elapsed().as_secs();
                    if tty {
                        eprint!("\r{}{waiting} ({elapsed} s)   ", line.text);
                    } else {
                        eprintln!("progress: {}{waiting} ({elapsed} s)", line.text);
                    }
                    line.drawn = Instant::now();
                }
            })
            .ok();
        Some(Ticker {
            line,
            stop: Some(stop),
            tty,
            thread,
        })
    }

    /// Sets the line after a result; on a terminal it is redrawn at most ten times a second, and at the end.
    pub fn set(&self, text: String, finished: bool) {
        let Ok(mut line) = self.line.lock() else {
            return;
        };
        line.text = text;
        if line.done {
            return;
        }
        if finished {
            line.done = true;
            if self.tty {
                eprintln!("\r{}   ", line.text);
            }
            return;
        }
        if self.tty && line.drawn.elapsed() >= Duration::from_millis(100) {
            eprint!("\r{}   ", line.text);
            line.drawn = Instant::now();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a red team's cases add up to as they come: errored causes, the tally, and the progress line.
pub struct CasesSeen {
    /// Why cases errored.
    pub causes: crate::causes::Causes,
    /// The outcomes so far.
    pub tally: gauntlet_redteam::job::Tally,
    ticker: Option<Ticker>,
    total: usize,
}

impl CasesSeen {
    /// Nothing seen yet of `total` cases; the progress line is shown unless `quiet`.
    pub fn start(total: usize, quiet: bool) -> CasesSeen {
        CasesSeen {
            causes: Default::default(),
            tally: Default::default(),
            ticker: Ticker::start(total, "cases", quiet),
            total,
        }
    }

    /// Counts case `c` and redraws the line.
    pub fn case(&mut self, c: &gauntlet_redteam::RtCase) {
        if c.judgement.outcome == gauntlet_judge::redteam::RtOutcome::Error {
            self.causes.add(c.error.as_deref());
        }
        self.tally.add(c.judgement.outcome);
        if let Some(t) = &self.ticker {
            let t_ = &self.tally;
            let done = (t_.passing + t_.failing + t_.errored + t_.unjudged) as usize;
            t.set(redteam_line(t_, self.total), done == self.total);
        }
    }
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
