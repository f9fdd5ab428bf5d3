//! The refusal screen's learned second opinion, as the build trained it (`build.rs`, on the development sets in
//! `catalog/refusals/`, never on a held-out set).
//!
//! The phrase tables recognise the declines they were written for; this model recognises the family resemblance
//! of declines they were not (other verbs, word orders, formal and impersonal forms, in every language of the
//! sets). It never decides alone: the screen asks it only about replies in which no phrase governs, and only after
//! the structural checks a phrase decline must pass (nothing complying, drafted or quoted around it).

use super::learn;
#[cfg(test)]
use super::learn::Row;

/// The weights the build script wrote: the bias, then one little-endian `f32` per bucket.
static WEIGHTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/refusal_model.bin"));

/// The development sets the build trained on, in order (its list, `SETS` in `build.rs`).
#[cfg(test)]
pub(super) fn set_names() -> Vec<&'static str> {
    include_str!(concat!(env!("OUT_DIR"), "/refusal_sets.txt"))
        .lines()
        .collect()
}

/// The text of a set of `catalog/refusals/`.
#[cfg(test)]
pub(super) fn set_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../catalog/refusals")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Weight of bucket `h` (0 for a weights file of the wrong size, which a test rules out).
fn weight(h: usize) -> f32 {
    let at = 4 * (h + 1);
    WEIGHTS
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0.0, f32::from_le_bytes)
}

/// The probability that the reply whose normal form is `n` is a refusal.
pub(super) fn probability(n: &str) -> f32 {
    let bias = WEIGHTS
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map_or(0.0, f32::from_le_bytes);
    learn::probability_with(weight, bias, &learn::features(n))
}

/// Every development row, in set order.
#[cfg(test)]
pub(super) fn development_set() -> Vec<Row> {
    set_names()
        .into_iter()
        .flat_map(|name| learn::rows(&set_text(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::normal::normal_form;
    use super::*;
    use learn::{BUCKETS, Trained};

    fn training_rows() -> Vec<(String, bool)> {
        development_set()
            .into_iter()
            .map(|r| (normal_form(&r.text), r.refusal))
            .collect()
    }

    #[test]
    fn rows_parse_every_line_of_every_set() {
        for name in set_names() {
            let src = set_text(name);
            let listed = src.lines().filter(|l| l.starts_with("- {")).count();
            assert_eq!(learn::rows(&src).len(), listed, "{name}");
        }
        let r = learn::rows(r#"- {lang: en, refusal: true, text: "He said \"no\" \\ twice."}"#);
        assert_eq!(r[0].text, r#"He said "no" \ twice."#);
        assert!(r[0].refusal);
    }

    #[test]
    fn the_built_weights_are_training_on_the_development_sets() {
        assert_eq!(WEIGHTS.len(), 4 * (BUCKETS + 1));
        assert!(WEIGHTS == Trained::train(&training_rows()).to_bytes().as_slice());
    }

    #[test]
    fn training_is_deterministic_and_learns_what_it_saw() {
        let data = training_rows();
        let (a, b) = (Trained::train(&data[..400]), Trained::train(&data[..400]));
        assert_eq!(a.to_bytes(), b.to_bytes());
        let right = data[..400]
            .iter()
            .filter(|(n, label)| (a.probability(n) >= 0.5) == *label)
            .count();
        assert!(right >= 390, "{right} of 400 training rows");
    }
}
