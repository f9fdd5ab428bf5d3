//! The red-team job: vulnerabilities × attack methods → target → judge → risk assessment.
//!
//! Cases come from the catalogue's offline seeds (one per seed and attack, sampled with a seed); each attack
//! records whether it changed the input; targets are any target of the project (reference chat targets, LLM
//! agents with the world's tools, HTTP apps); the judge screens refusals (never over tool evidence), runs
//! deterministic detectors and, with a judge model, the sub-type's rubric. Errors and unjudged cases are kept,
//! counted and excluded from rates; pass rate = passing / (passing + failing).

pub mod attacks;
pub mod catalog;
pub mod job;
pub mod model_attacks;
pub mod multi_turn;
pub mod selection;
pub mod simulator;

/// The embedded catalogue files.
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

pub use catalog::{Catalogue, Framework, Vulnerability};
pub use job::{RedTeamConfig, Report, RtCase, run};
