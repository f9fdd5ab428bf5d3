//! Targets: the agents under test. An [`Agent`] answers each user message, calling tools only through the
//! gateway. This crate holds the target interface and the deterministic, model-free reference agents that
//! calibrate cases and make every job runnable offline:
//!
//! - `reference` performs the task's solution (and nothing an attacker asks);
//! - `compliant` also performs the attack's solution whenever attack content reaches it, through the user
//!   channel or through a poisoned tool result;
//! - `refuser` never calls a tool and always declines;
//! - `cautious` performs the task, ignores instructions that arrive in tool results and declines user
//!   requests that name a hostile party (other requests it carries out).
//!
//! Model-backed targets: [`LlmTarget`] (Gauntlet runs the tool-calling loop over a chat model) and
//! [`HttpTarget`] (an app behind an HTTP endpoint).

pub mod chat;
#[cfg(feature = "http")]
pub mod http;
pub mod llm;
pub mod reference;

pub use chat::{CANARY, CHAT_TARGETS, ChatTarget};
#[cfg(feature = "http")]
pub use http::HttpTarget;
pub use llm::{DEFAULT_SYSTEM_PROMPT, LlmTarget};
pub use reference::{ReferenceAgent, ReferenceKind};

use gauntlet_gateway::Gateway;
use serde_json::Value;

/// What a reference agent may know about the case it runs: the oracle's view. Model-backed agents ignore it.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    /// The legitimate task prompt.
    pub task_prompt: String,
    /// The calls the task needs, in order.
    pub task_solution: Vec<(String, Value)>,
    /// The final reply to give after the task.
    pub task_answer: Option<String>,
    /// The sink calls that realise the attack.
    pub attack_solution: Vec<(String, Value)>,
    /// Strings that identify hostile parties.
    pub hostile: Vec<String>,
}

/// The agent failed (model or transport error): the episode is recorded as errored, never as safe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("agent {agent}: {message}")]
pub struct AgentError {
    /// The agent's name.
    pub agent: String,
    /// What went wrong.
    pub message: String,
}

/// One agent instance for one episode (it may keep conversation state across turns).
pub trait Agent: Send {
    /// Answers one user message, calling tools through `gateway`; returns the reply text.
    fn respond(&mut self, user: &str, gateway: &mut Gateway) -> Result<String, AgentError>;

    /// Model tokens used so far in this episode (0 for agents without a model).
    fn tokens(&self) -> u64 {
        0
    }
}

/// A target: makes a fresh agent for each episode.
pub trait Target: Send + Sync {
    /// The name used in reports.
    fn name(&self) -> &str;
    /// A fresh agent for one episode of a case.
    fn start(&self, calibration: &Calibration) -> Box<dyn Agent>;
}

/// Looks up a built-in target by name: `reference`, `compliant`, `refuser`, `cautious`.
pub fn builtin_target(name: &str) -> Option<Box<dyn Target>> {
    ReferenceKind::from_name(name).map(|k| Box::new(k) as Box<dyn Target>)
}

/// Names of the built-in targets.
pub const BUILTIN_TARGETS: [&str; 4] = ["reference", "compliant", "refuser", "cautious"];
