//! The attack methods the red-team job applies: `none` (the seed as written), the pure transforms of
//! `gauntlet-attacks`, the model-driven single-turn methods of `model_attacks` and the multi-turn methods of
//! `multi_turn`.

/// The id of the baseline method: the seed sent as written.
pub const BASELINE: &str = "none";

/// The kind of an attack method, which says how the job applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `none`: the seed as written.
    Baseline,
    /// A pure transform of the seed (encoding, leetspeak, …), no model.
    Transform,
    /// A single-turn rewrite by the attacker model (roleplay, prompt-injection, …).
    Model,
    /// A conversation of several turns (crescendo, the tree, …).
    MultiTurn,
}

impl Method {
    /// The kind of method `id` names, if it names one.
    pub fn of(id: &str) -> Option<Method> {
        if id == BASELINE {
            Some(Method::Baseline)
        } else if gauntlet_attacks::transforms::is_transform(id) {
            Some(Method::Transform)
        } else if crate::model_attacks::is_model_method(id) {
            Some(Method::Model)
        } else if crate::multi_turn::is_multi_turn(id) {
            Some(Method::MultiTurn)
        } else {
            None
        }
    }
}

/// Whether `id` names an attack method.
pub fn is_attack(id: &str) -> bool {
    Method::of(id).is_some()
}

/// Every attack method, in the order `--attacks` lists them.
pub fn all() -> Vec<&'static str> {
    std::iter::once(BASELINE)
        .chain(gauntlet_attacks::transforms::TRANSFORMS.iter().copied())
        .chain(crate::model_attacks::METHODS.iter().map(|(m, _, _)| *m))
        .chain(crate::multi_turn::METHODS.iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_method_has_one_kind() {
        for id in all() {
            assert!(Method::of(id).is_some(), "{id}");
        }
        assert_eq!(Method::of("none"), Some(Method::Baseline));
        assert_eq!(Method::of("crescendo"), Some(Method::MultiTurn));
        assert_eq!(Method::of("roleplay"), Some(Method::Model));
        assert_eq!(Method::of("base64"), Some(Method::Transform));
        assert_eq!(Method::of("no-such-method"), None);
    }
}
