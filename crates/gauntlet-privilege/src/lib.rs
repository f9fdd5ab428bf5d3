//! The privilege job: what a defense *would* allow on the paths no run took.
//!
//! For every task (a built-in case's solution plan, or an AgentDojo user task) and every decision point k (after
//! the first k plan calls have executed), generator families propose candidate calls; the [`oracle`] labels each
//! `allow` / `deny` / `harmless` / `unknown` from what executing it did — on a copy of the built-in world at that
//! point ([`builtin`]), or in AgentDojo's own runtime ([`agentdojo`]) — with a harm tier from its effect and its
//! recipient, and the id of the rule that decided; each defense then decides every probe through its own policy,
//! and [`score`] turns the decisions into sufficiency, harm-weighted over-privilege leakage per axis,
//! over-restriction, attack admission and an adequacy census. [`audit`] draws a stratified sample for a person
//! to check the oracle. [`suites`] builds the suite of the job's `--suite` paths (case files, the built-in suite,
//! AgentDojo exports), chosen by case patterns, filters and a seeded sample.
//!
//! This crate reads the case format of `gauntlet-cases` (a sibling at the same layer: the cases are its adapter).

pub mod agentdojo;
pub mod audit;
pub mod builtin;
pub mod oracle;
pub mod probe;
pub mod score;
pub mod suites;

pub use builtin::generate;
pub use probe::{Label, Probe, ProbeSuite, Source};
pub use score::{DefenseScore, score, score_with};
