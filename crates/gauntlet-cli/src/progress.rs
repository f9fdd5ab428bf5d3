//! The progress line of a job on stderr: shown from the first second (waiting for the first result is progress
//! too), redrawn in place on a terminal, and printed as a plain line every ten seconds when stderr is not one (a CI
//! log, a pipe), so a slow model is never a silent screen.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the line says now.
struct Line {
    text: String,
    done: bool,
    drawn: Instant,
}

/// A job's progress line. Dropping it stops the ticker.
pub struct Ticker {
    line: Arc<Mutex<Line>>,
    stop: Arc<AtomicBool>,
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
        let stop = Arc::new(AtomicBool::new(false));
        let (l, s) = (line.clone(), stop.clone());
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
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
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
            stop,
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
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
