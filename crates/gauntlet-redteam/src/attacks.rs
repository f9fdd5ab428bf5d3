//! The attack methods the red-team job applies: `none` (the seed as written), the pure transforms of
//! `gauntlet-attacks`, the model-driven single-turn methods of `model_attacks` and the multi-turn methods of
//! `multi_turn`.

/// Whether `id` names an attack method.
pub fn is_attack(id: &str) -> bool {
    id == "none"
        || gauntlet_attacks::transforms::is_transform(id)
        || crate::model_attacks::is_model_method(id)
        || crate::multi_turn::is_multi_turn(id)
}

/// Every attack method, in the order `--attacks` lists them.
pub fn all() -> Vec<&'static str> {
    std::iter::once("none")
        .chain(gauntlet_attacks::transforms::TRANSFORMS.iter().copied())
        .chain(crate::model_attacks::METHODS.iter().map(|(m, _, _)| *m))
        .chain(crate::multi_turn::METHODS.iter().copied())
        .collect()
}
