//! The attack methods the red-team job applies: `none` (the seed as written) and the pure transforms of
//! `gauntlet-attacks`. Model-driven and multi-turn methods are named here so frameworks can map them; the job
//! reports them as not available until they are built.

/// Model-driven single-turn and multi-turn methods (named in the framework mappings).
pub const MODEL_METHODS: [&str; 11] = [
    "prompt-injection",
    "roleplay",
    "authority-escalation",
    "hypothetical",
    "multilingual",
    "math-problem",
    "gray-box",
    "emotional-manipulation",
    "linear-jailbreak",
    "crescendo",
    "tree-jailbreak",
];

/// Whether `id` names an attack method.
pub fn is_attack(id: &str) -> bool {
    id == "none" || gauntlet_attacks::transforms::is_transform(id) || MODEL_METHODS.contains(&id)
}
