//! Results back in run order: workers finish in any order, and a resumed run has some results already (stored
//! by an earlier attempt). Both jobs that stream results (the run job and the red team) hand them on in index
//! order through [`InOrder`].

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

    /// The next result in order. `receive` waits for more computed results, `(index, result)`, and returns
    /// `None` when no more will come; `load` reads a finished one. `None` when the stream ends: every result
    /// delivered, or the workers stopped early.
    pub fn next(
        &mut self,
        receive: &mut dyn FnMut() -> Option<Vec<(usize, T)>>,
        load: &mut dyn FnMut(usize) -> std::io::Result<T>,
    ) -> Option<std::io::Result<T>> {
        loop {
            if let Some(r) = self.pending.remove(&self.expected) {
                self.expected += 1;
                return Some(Ok(r));
            }
            if self.expected < self.total && self.done.get(self.expected).copied().unwrap_or(false)
            {
                let r = load(self.expected);
                self.expected += 1;
                return Some(r);
            }
            for (i, r) in receive()? {
                self.pending.insert(i, r);
            }
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_with_finished_ones_loaded() {
        // 0..6; 1 and 4 were finished earlier; the rest arrive out of order, in two batches.
        let done = [false, true, false, false, true, false];
        let mut batches = vec![vec![(5, "f"), (2, "c")], vec![(3, "d"), (0, "a")]];
        let mut order = InOrder::new(6, &done);
        let mut receive = || (!batches.is_empty()).then(|| batches.remove(0));
        let mut load = |i: usize| Ok(["a", "B", "c", "d", "E", "f"][i]);
        let mut got = Vec::new();
        while let Some(r) = order.next(&mut receive, &mut load) {
            got.push(r.unwrap_or("?"));
        }
        assert_eq!(got, ["a", "B", "c", "d", "E", "f"]);
    }

    #[test]
    fn the_stream_ends_when_the_workers_stop_early() {
        let mut order: InOrder<'_, u8> = InOrder::new(3, &[]);
        let mut receive = || None;
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
