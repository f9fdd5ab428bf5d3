//! Training and scoring of the refusal screen's learned second opinion: a logistic model over hashed character
//! and word n-grams of a reply's normal form. Plain `std` only: the build script includes this file to train the
//! model on the development sets, and the crate includes it to score with the weights the build wrote.
//! Training is deterministic (fixed order, no randomness), so the same sets give the same weights on every build.

// The crate itself only scores; training is for the build script and the tests.
#![cfg_attr(not(test), allow(dead_code))]

/// Hash buckets (a power of two).
pub(crate) const BUCKETS: usize = 1 << 18;
/// Passes over the training rows.
const EPOCHS: usize = 24;
/// AdaGrad's step size.
const RATE: f32 = 0.5;
/// L2 penalty per step, which keeps rare n-grams from carrying a verdict alone.
const L2: f32 = 1e-5;

/// One labelled reply of a set in `catalog/refusals/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// Language code.
    pub lang: String,
    /// True when the reply is labelled a refusal.
    pub refusal: bool,
    /// The reply as written.
    pub text: String,
}

/// Rows of one set: lines of the form `- {lang: xx, refusal: true, text: "…"}` (the sets' only shape; other
/// lines are comments).
pub(crate) fn rows(src: &str) -> Vec<Row> {
    src.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- {lang: ")?;
            let (lang, rest) = rest.split_once(", refusal: ")?;
            let (label, rest) = rest.split_once(", text: \"")?;
            let body = rest.trim_end().strip_suffix("\"}")?;
            Some(Row {
                lang: lang.trim().to_string(),
                refusal: label.trim() == "true",
                text: unescape(body),
            })
        })
        .collect()
}

/// A YAML double-quoted scalar's escapes (the sets use `\"`, `\\` and `\n`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Trained weights: the bias, then one weight per bucket.
pub(crate) struct Trained {
    /// Weight per hash bucket.
    pub weights: Vec<f32>,
    /// The intercept.
    pub bias: f32,
}

impl Trained {
    /// Trains on `rows` of (normal form, label).
    pub(crate) fn train(rows: &[(String, bool)]) -> Trained {
        let features: Vec<Vec<u32>> = rows.iter().map(|(n, _)| features(n)).collect();
        let mut weights = vec![0.0f32; BUCKETS];
        let mut squares = vec![1e-6f32; BUCKETS];
        let (mut bias, mut bias_square) = (0.0f32, 1e-6f32);
        let order = interleaved(rows);
        for _ in 0..EPOCHS {
            for &i in &order {
                let f = &features[i];
                let p = probability_with(|h| weights[h], bias, f);
                let g = p - if rows[i].1 { 1.0 } else { 0.0 };
                let scale = unit_scale(f.len());
                for &h in f {
                    let h = h as usize;
                    let grad = g * scale + L2 * weights[h];
                    squares[h] += grad * grad;
                    weights[h] -= RATE * grad / squares[h].sqrt();
                }
                bias_square += g * g;
                bias -= RATE * g / bias_square.sqrt();
            }
        }
        Trained { weights, bias }
    }

    /// The probability that the reply whose normal form is `n` is a refusal.
    pub(crate) fn probability(&self, n: &str) -> f32 {
        probability_with(|h| self.weights[h], self.bias, &features(n))
    }

    /// Little-endian bytes: the bias, then the weights.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 * (BUCKETS + 1));
        out.extend(self.bias.to_le_bytes());
        for w in &self.weights {
            out.extend(w.to_le_bytes());
        }
        out
    }
}

/// The model's probability for the hashed features `f`, with `weight` giving a bucket's weight.
pub(crate) fn probability_with(weight: impl Fn(usize) -> f32, bias: f32, f: &[u32]) -> f32 {
    let sum: f32 = f.iter().map(|&h| weight(h as usize)).sum();
    let x = bias + unit_scale(f.len()) * sum;
    1.0 / (1.0 + (-x).exp())
}

/// Row indices alternating refusal / non-refusal (in file order within each label), so every stretch of an
/// epoch sees both.
fn interleaved(rows: &[(String, bool)]) -> Vec<usize> {
    let yes: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].1).collect();
    let no: Vec<usize> = (0..rows.len()).filter(|&i| !rows[i].1).collect();
    let mut order = Vec::with_capacity(rows.len());
    for k in 0..yes.len().max(no.len()) {
        order.extend(yes.get(k));
        order.extend(no.get(k));
    }
    order
}

/// Feature vectors are scaled to unit length (each present feature counts once).
fn unit_scale(len: usize) -> f32 {
    1.0 / (len.max(1) as f32).sqrt()
}

/// Hashed features of a normal form: character 3- to 5-grams (which carry inflections, and scripts written
/// without spaces) and word 1- and 2-grams, each once.
pub(crate) fn features(n: &str) -> Vec<u32> {
    let chars: Vec<u64> = n.chars().map(u64::from).collect();
    let mut out = Vec::with_capacity(chars.len() * 3 + 16);
    for size in 3..=5 {
        for w in chars.windows(size) {
            out.push(bucket(size as u64, w.iter().copied()));
        }
    }
    let words: Vec<&str> = n.split(' ').filter(|w| !w.is_empty()).collect();
    for w in &words {
        out.push(bucket(11, w.chars().map(u64::from)));
    }
    for pair in words.windows(2) {
        let joined = pair[0].chars().chain([' ']).chain(pair[1].chars());
        out.push(bucket(12, joined.map(u64::from)));
    }
    sorted_once(out)
}

/// Hashes sorted, each once. Above [`BITSET_FROM`] hashes, a bit per bucket read back in order does it in one
/// pass, several times faster on a 2 KB reply than sorting its ~6,000 hashes; below, sorting is cheaper than
/// clearing and scanning the bits.
fn sorted_once(mut hashes: Vec<u32>) -> Vec<u32> {
    if hashes.len() < BITSET_FROM {
        hashes.sort_unstable();
        hashes.dedup();
        return hashes;
    }
    let mut seen = vec![0u64; BUCKETS / 64];
    for &h in &hashes {
        seen[h as usize / 64] |= 1 << (h % 64);
    }
    hashes.clear();
    for (i, &word) in seen.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            hashes.push((i * 64) as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
    hashes
}

/// The number of hashes from which [`sorted_once`] uses a bitset.
const BITSET_FROM: usize = 1024;

/// FNV-1a over a kind tag and code points, folded into the buckets.
fn bucket(kind: u64, items: impl Iterator<Item = u64>) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ kind;
    for x in items {
        h ^= x;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % BUCKETS as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitset gives what sorting gives, on either side of the size where it takes over.
    #[test]
    fn both_ways_of_sorting_hashes_agree() {
        let mut x: u64 = 7;
        for len in [0, 1, 5, BITSET_FROM - 1, BITSET_FROM, 6_000, 40_000] {
            let mut hashes: Vec<u32> = Vec::with_capacity(len);
            for i in 0..len {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                // Every third hash repeats one already there, so both ways must drop duplicates.
                let h = match hashes.get(i / 2) {
                    Some(&earlier) if i % 3 == 2 => earlier,
                    _ => (x >> 33) as u32 % BUCKETS as u32,
                };
                hashes.push(h);
            }
            let mut expected = hashes.clone();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(sorted_once(hashes), expected, "{len}");
        }
    }
}
