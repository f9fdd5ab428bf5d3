//! Metrics math: rates with 95 % Wilson score intervals, and pass^k.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A proportion `k / n` with its 95 % Wilson interval. With `n == 0` the rate is undefined (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Successes (numerator).
    pub k: u64,
    /// Trials (denominator).
    pub n: u64,
    /// `k / n`, absent when `n == 0`.
    pub value: Option<f64>,
    /// Lower bound of the 95 % Wilson interval.
    pub low: Option<f64>,
    /// Upper bound of the 95 % Wilson interval.
    pub high: Option<f64>,
}

impl Rate {
    /// The rate `k / n` with its Wilson interval. `k` is clamped to `n`.
    pub fn new(k: u64, n: u64) -> Rate {
        let k = k.min(n);
        match wilson(k, n) {
            Some((low, high)) => Rate {
                k,
                n,
                value: Some(k as f64 / n as f64),
                low: Some(low),
                high: Some(high),
            },
            None => Rate {
                k,
                n,
                value: None,
                low: None,
                high: None,
            },
        }
    }

    /// `"37.5% [22.1–55.8] (6/16)"`, or `"– (0/0)"` when undefined.
    pub fn display(&self) -> String {
        match (self.value, self.low, self.high) {
            (Some(v), Some(l), Some(h)) => {
                format!(
                    "{:.1}% [{:.1}–{:.1}] ({}/{})",
                    v * 100.0,
                    l * 100.0,
                    h * 100.0,
                    self.k,
                    self.n
                )
            }
            _ => format!("– ({}/{})", self.k, self.n),
        }
    }
}

/// The 95 % Wilson score interval for `k` successes in `n` trials; `None` when `n == 0`.
pub fn wilson(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n_f = n as f64;
    let p = k.min(n) as f64 / n_f;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = Z95 * ((p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt()) / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// pass^k: the share of tasks whose `k` repetitions all passed. `outcomes` holds, per task, whether each
/// repetition passed; tasks with fewer than `k` repetitions are skipped.
pub fn pass_hat_k<'a>(outcomes: impl IntoIterator<Item = &'a [bool]>, k: usize) -> Rate {
    let (mut all, mut n) = (0u64, 0u64);
    for reps in outcomes {
        if reps.len() < k || k == 0 {
            continue;
        }
        n += 1;
        if reps.iter().take(k).all(|p| *p) {
            all += 1;
        }
    }
    Rate::new(all, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_reference_values() {
        // Reference: 8/10 → [0.4902, 0.9433] (Wilson, z=1.96).
        let (l, h) = wilson(8, 10).unwrap_or((0.0, 0.0));
        assert!((l - 0.4902).abs() < 1e-3, "{l}");
        assert!((h - 0.9433).abs() < 1e-3, "{h}");
        let (l, h) = wilson(0, 20).unwrap_or((1.0, 1.0));
        assert_eq!(l, 0.0);
        assert!((h - 0.1611).abs() < 1e-3, "{h}");
        assert!(wilson(0, 0).is_none());
    }

    #[test]
    fn rate_display() {
        assert_eq!(Rate::new(0, 0).display(), "– (0/0)");
        assert!(Rate::new(1, 2).display().starts_with("50.0% ["));
    }

    #[test]
    fn pass_hat_k_requires_all_reps() {
        let a = [true, true];
        let b = [true, false];
        let r = pass_hat_k([&a[..], &b[..]], 2);
        assert_eq!((r.k, r.n), (1, 2));
    }
}
