//! The privilege job: what a defense *would* allow on the paths no run took.
//!
//! For every task (a built-in case's solution plan) and every decision point k (after the first k plan calls have
//! executed), generator families propose candidate calls ([`probe`]); the oracle labels each `allow` / `deny` /
//! `unknown` — confirmed by executing it on a copy of the world at that point and checking the case's verifier, or
//! asserted by rule — with its axis, fault class and harm tier; each defense then decides every probe through its
//! own policy, and [`score`] turns the decisions into sufficiency, harm-weighted over-privilege leakage per axis,
//! over-restriction, attack admission and an adequacy census.
//!
//! This crate reads the case format of `gauntlet-cases` (a sibling at the same layer: the cases are its adapter).

pub mod agentdojo;
pub mod probe;
pub mod score;

pub use probe::{Label, Probe, ProbeSuite, Source, generate};
pub use score::{DefenseScore, score, score_with};
