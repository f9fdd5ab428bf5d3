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
}
