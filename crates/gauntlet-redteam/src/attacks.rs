//! The attack methods the red-team job applies: `none` (the seed as written) and the pure transforms of
//! `gauntlet-attacks`, the model-driven methods of `model_attacks`, and the multi-turn methods, which are named
//! here so frameworks can map them and are reported as not available until they are built.

/// Multi-turn methods (named in the framework mappings; not built yet).
pub const MULTI_TURN_METHODS: [&str; 3] = ["linear-jailbreak", "crescendo", "tree-jailbreak"];

/// Whether `id` names an attack method.
pub fn is_attack(id: &str) -> bool {
    id == "none"
        || gauntlet_attacks::transforms::is_transform(id)
        || crate::model_attacks::is_model_method(id)
        || MULTI_TURN_METHODS.contains(&id)
}
