//! The ordered worker pool every job that streams results runs on ([`run_ordered`]: the run job and the red
//! team), and its parts: results back in run order ([`InOrder`]: workers finish in any order, and a resumed run has
//! some results already, stored by an earlier attempt), and shards of a plan.

use std::collections::BTreeMap;

/// Puts results back in index order, loading those an earlier attempt finished when their turn comes.
pub struct InOrder<'a, T> {
    pending: BTreeMap<usize, T>,
    expected: usize,
    total: usize,
    done: &'a [bool],
}

impl<'a, T> InOrder<'a, T> {
    /// Results `0..total`; `done[i]` marks those to load instead of waiting for (empty: none).
    pub fn new(total: usize, done: &'a [bool]) -> InOrder<'a, T> {
        InOrder {
            pending: BTreeMap::new(),
            expected: 0,
            total,
            done,
        }
    }

    /// The next result in order. `receive` waits for more computed results: a batch of `(index, result)`,
    /// [`Received::Idle`] when none came for a while, or [`Received::End`] when no more will come; `load` reads a
    /// finished one. [`Next::Idle`] passes a quiet spell on (what the caller waits on may take minutes: it may
    /// commit what it holds); `None` when the stream ends: every result delivered, or the workers stopped early.
    pub fn next(
        &mut self,
        receive: &mut dyn FnMut() -> Received<T>,
        load: &mut dyn FnMut(usize) -> std::io::Result<T>,
    ) -> Option<Next<T>> {
        loop {
            if let Some(r) = self.pending.remove(&self.expected) {
                self.expected += 1;
                return Some(Next::Item(Ok(r)));
            }
            if self.expected < self.total && self.done.get(self.expected).copied().unwrap_or(false)
            {
                let r = load(self.expected);
                self.expected += 1;
                return Some(Next::Item(r));
            }
            match receive() {
                Received::Results(batch) => {
                    for (i, r) in batch {
                        self.pending.insert(i, r);
                    }
                }
                Received::Idle => return Some(Next::Idle),
                Received::End => return None,
            }
        }
    }
}

/// What a wait for computed results brought ([`InOrder::next`]).
pub enum Received<T> {
    /// Results, `(index, result)`, in any order.
    Results(Vec<(usize, T)>),
    /// None for a while ([`IDLE`]).
    Idle,
    /// None will come.
    End,
}

/// What [`InOrder::next`] hands on: the next result in order, or word that none came for a while.
pub enum Next<T> {
    /// The next result, or the error of loading it.
    Item(std::io::Result<T>),
    /// Nothing for [`IDLE`].
    Idle,
}

/// How long the ordered loop waits for a result before telling its sink it is idle: what the sink holds (a store
/// transaction) is committed within about twice this, however long the next result takes.
pub const IDLE: std::time::Duration = std::time::Duration::from_millis(250);

/// How a job's items are run: by how many workers, handed out how many at a time.
#[derive(Debug, Clone, Copy)]
pub struct PoolConfig {
    /// Worker threads (at least 1; never more than there are items).
    pub workers: usize,
    /// Items a worker takes at once and hands back together (one channel round trip per chunk); 0 picks a size
    /// from the number of items and workers.
    pub chunk: usize,
}

/// Results an earlier, interrupted attempt of the same job already finished: they are not run again, but loaded
/// (in order, one at a time) when their turn comes.
pub struct Resume<'a, R> {
    /// By index: whether it is finished.
    pub done: &'a [bool],
    /// Loads a finished result.
    pub load: &'a mut dyn FnMut(usize) -> std::io::Result<R>,
}

/// The message of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// Runs items `0..total` on a pool of workers and hands every result to `sink` in index order; with `resume`, the
/// items an earlier attempt finished are loaded when their turn comes instead of run.
///
/// - `work(i)` computes item `i`; a panic inside it is caught and becomes `panicked(i, message)` — an errored
///   result, never a lost one.
/// - `sink` sees results in order, and `None` each time none came for [`IDLE`]; an error from it (or from `load`)
///   stops handing out work, lets the workers finish what they hold (so none blocks), and is returned.
pub fn run_ordered<R: Send>(
    total: usize,
    resume: Option<Resume<'_, R>>,
    config: PoolConfig,
    work: &(dyn Fn(usize) -> R + Sync),
    panicked: &(dyn Fn(usize, String) -> R + Sync),
    sink: &mut dyn FnMut(Option<R>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (done, mut load) = match resume {
        Some(r) => (r.done, Some(r.load)),
        None => (&[][..], None),
    };
    let mut load = |i: usize| match load.as_mut() {
        Some(load) => load(i),
        None => Err(std::io::Error::other("no resume source")),
    };
    let is_done = |i: usize| done.get(i).copied().unwrap_or(false);
    // Workers take chunks of `0..total` and skip what is done: no list of the indices to do (which cost 8 bytes an
    // item, 0.8 MB for a run of 100,000 episodes).
    let todo = total - (0..total.min(done.len())).filter(|&i| done[i]).count();
    let workers = config.workers.clamp(1, todo.max(1));
    let chunk = if config.chunk == 0 {
        (todo / (workers * 8)).clamp(1, 32)
    } else {
        config.chunk
    };
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(usize, R)>>(workers * 2);
    let mut result = Ok(());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (tx, next, is_done) = (tx.clone(), &next, &is_done);
            scope.spawn(move || {
                loop {
                    let start = next.fetch_add(chunk, Ordering::Relaxed);
                    if start >= total {
                        break;
                    }
                    let end = start.saturating_add(chunk).min(total);
                    let out: Vec<(usize, R)> = (start..end)
                        .filter(|&i| !is_done(i))
                        .map(|i| {
                            let r =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i)))
                                    .unwrap_or_else(|p| panicked(i, panic_message(p.as_ref())));
                            (i, r)
                        })
                        .collect();
                    if !out.is_empty() && tx.send(out).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut order = InOrder::new(total, done);
        // Idle is measured from the last thing handed to the sink, not per wait: results that arrive out of order
        // while the next one in order is slow hand nothing on, and must not postpone the sink's commit.
        let handed = std::cell::Cell::new(std::time::Instant::now());
        let mut receive = || {
            let wait = IDLE.saturating_sub(handed.get().elapsed());
            if wait.is_zero() {
                return Received::Idle;
            }
            match rx.recv_timeout(wait) {
                Ok(batch) => Received::Results(batch),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Received::Idle,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Received::End,
            }
        };
        while let Some(got) = order.next(&mut receive, &mut load) {
            handed.set(std::time::Instant::now());
            let r = match got {
                Next::Item(r) => r.map(Some),
                Next::Idle => Ok(None),
            };
            if let Err(e) = r.and_then(&mut *sink) {
                result = Err(e);
                // Stop handing out work; workers finish their current chunk.
                next.store(total, Ordering::Relaxed);
                break;
            }
        }
        // After a failure, drain so that no worker blocks on a full channel.
        for _ in rx {}
    });
    result
}

/// One of `of` interleaved parts of a job's plan (run or red team): the results whose index in the whole plan is
/// `index` modulo `of`. Interleaving spreads every case, setting and target over the shards, so they take about as long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// This shard, from 0.
    pub index: usize,
    /// How many shards.
    pub of: usize,
}

impl Shard {
    /// Parses `I/N` (0 ≤ I < N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not I/N (for example 0/4)"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| format!("`{i}` is not a shard number"))?;
        let of: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("`{n}` is not a number of shards"))?;
        if of == 0 || index >= of {
            return Err(format!(
                "shard {index} of {of}: shards are numbered 0 to N-1 and N is at least 1"
            ));
        }
        Ok(Shard { index, of })
    }

    /// Whether this shard holds the whole plan's `global`-th result.
    pub fn holds(&self, global: usize) -> bool {
        global % self.of == self.index
    }
}

#[cfg(test)]
mod pool_tests {
    use super::*;

    #[test]
    fn results_come_in_order_panics_become_errors_and_done_items_are_loaded() {
        let done = [false, true, false, false, false, false, false, false];
        let mut seen = vec![];
        run_ordered(
            8,
            Some(Resume {
                done: &done,
                load: &mut |i| Ok(format!("loaded {i}")),
            }),
            PoolConfig {
                workers: 3,
                chunk: 1,
            },
            &|i| {
                if i == 5 {
                    panic!("item five");
                }
                format!("ran {i}")
            },
            &|i, why| format!("errored {i}: {why}"),
            &mut |r| {
                seen.extend(r);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seen[0], "ran 0");
        assert_eq!(seen[1], "loaded 1");
        assert_eq!(seen[5], "errored 5: item five");
        assert_eq!(seen.len(), 8);
    }

    #[test]
    fn a_quiet_spell_reaches_the_sink_while_a_slow_item_runs() {
        let (mut items, mut idle) = (0, 0);
        // The slow item waits until the sink has heard of a quiet spell (never a fixed delay: a busy machine may
        // take its time), or a minute.
        let heard = std::sync::atomic::AtomicBool::new(false);
        run_ordered(
            2,
            None,
            PoolConfig {
                workers: 1,
                chunk: 1,
            },
            &|i| {
                let started = std::time::Instant::now();
                while i == 1
                    && !heard.load(std::sync::atomic::Ordering::SeqCst)
                    && started.elapsed() < std::time::Duration::from_secs(60)
                {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                i
            },
            &|i, _| i,
            &mut |r| {
                match r {
                    Some(_) => items += 1,
                    // The first item was delivered before the slow one's quiet spells.
                    None => {
                        assert_eq!(items, 1);
                        idle += 1;
                        heard.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(items, 2);
        assert!(idle >= 1, "no quiet spell reached the sink");
    }

    #[test]
    fn a_quiet_spell_is_told_even_while_later_results_keep_arriving() {
        // Item 0 waits for the sink to hear of a quiet spell while the other worker keeps finishing later items
        // (every few milliseconds, out of order): they hand the sink nothing, so it must hear all the same.
        let heard = std::sync::atomic::AtomicBool::new(false);
        let is_heard = || heard.load(std::sync::atomic::Ordering::SeqCst);
        let mut released_by_idle = None;
        run_ordered(
            2000,
            None,
            PoolConfig {
                workers: 2,
                chunk: 1,
            },
            &|i| {
                let started = std::time::Instant::now();
                // Five seconds: about half the time the later items take while nothing is heard, so a pool
                // that waited for them to end before telling the sink would let it pass.
                if i == 0 {
                    while !is_heard() && started.elapsed() < std::time::Duration::from_secs(5) {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    return is_heard();
                }
                if !is_heard() {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                false
            },
            &|_, _| false,
            &mut |r| {
                match r {
                    None => heard.store(true, std::sync::atomic::Ordering::SeqCst),
                    Some(by_idle) if released_by_idle.is_none() => released_by_idle = Some(by_idle),
                    Some(_) => {}
                }
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            released_by_idle,
            Some(true),
            "the slow first item waited out its deadline"
        );
    }

    #[test]
    fn a_sink_error_stops_the_pool_and_is_returned() {
        let mut n = 0;
        let r = run_ordered(
            1000,
            None,
            PoolConfig {
                workers: 2,
                chunk: 4,
            },
            &|i| i,
            &|i, _| i,
            &mut |r| {
                n += usize::from(r.is_some());
                if n == 10 {
                    Err(std::io::Error::other("disk full"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.map_err(|e| e.to_string()), Err("disk full".to_string()));
        assert_eq!(n, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_with_finished_ones_loaded() {
        // 0..6; 1 and 4 were finished earlier; the rest arrive out of order, in two batches.
        let done = [false, true, false, false, true, false];
        let mut batches = vec![vec![(5, "f"), (2, "c")], vec![(3, "d"), (0, "a")]];
        let mut order = InOrder::new(6, &done);
        let mut receive = || match batches.is_empty() {
            true => Received::End,
            false => Received::Results(batches.remove(0)),
        };
        let mut load = |i: usize| Ok(["a", "B", "c", "d", "E", "f"][i]);
        let mut got = Vec::new();
        while let Some(r) = order.next(&mut receive, &mut load) {
            if let Next::Item(r) = r {
                got.push(r.unwrap_or("?"));
            }
        }
        assert_eq!(got, ["a", "B", "c", "d", "E", "f"]);
    }

    #[test]
    fn the_stream_ends_when_the_workers_stop_early() {
        let mut order: InOrder<'_, u8> = InOrder::new(3, &[]);
        let mut receive = || Received::End;
        let mut load = |_| Ok(0);
        assert!(order.next(&mut receive, &mut load).is_none());
    }

    #[test]
    fn shards_parse_and_map_back_to_the_whole_plan() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, of: 4 }));
        assert_eq!(Shard::parse(" 0 / 1 "), Ok(Shard { index: 0, of: 1 }));
        for bad in ["4/4", "0/0", "1", "a/2", "1/b", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        // Shard 1 of 4 holds whole-plan episodes 1, 5, 9, …
        let s = Shard { index: 1, of: 4 };
        let held: Vec<usize> = (0..12).filter(|&g| s.holds(g)).collect();
        assert_eq!(held, [1, 5, 9]);
    }
}
