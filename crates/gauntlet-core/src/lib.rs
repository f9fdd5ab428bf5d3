//! The shared vocabulary of Gauntlet: tools and their effects, harm tiers, calls, gateway events, traces,
//! settings and three-valued verdicts, the CEL predicate evaluator every verifier, success check and policy
//! uses, the metrics math (rates with Wilson intervals), and what the programs the harness starts inherit of its
//! environment.
//!
//! Everything above this crate (world, gateway, agents, cases, reports) speaks these types; this crate
//! depends on nothing of Gauntlet's.

pub mod attack_text;
mod automata;
pub mod encoding;
pub mod environment;
pub mod event;
pub mod excerpt;
pub mod harm;
pub mod metrics;
pub mod order;
pub mod predicate;
pub mod refusal;
pub mod rng;
pub mod setting;
pub mod tool;
pub mod trace;
pub mod utc;
pub mod verdict;

pub use event::{Decision, GatewayEvent, InjectionApplied};
pub use harm::{HarmContext, HarmTier};
pub use metrics::Rate;
pub use predicate::{Bindings, Predicate, PredicateError};
pub use rng::SplitMix64;
pub use setting::Setting;
pub use tool::{Effect, EffectKind, ToolCall, ToolSpec};
pub use trace::{Trace, Turn};
pub use verdict::{Evidence, LEVELS_DISAGREE, Level, Outcome, Verdict};
