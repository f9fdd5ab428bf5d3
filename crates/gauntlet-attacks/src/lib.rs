//! Attack methods and controllers. A controller plays the user channel of an episode: benign and indirect
//! settings send the task; direct and multi escalate adaptively through a ladder of attack rungs, watching
//! each reply and the new gateway events. The verdict never comes from the controller: the harness runs the
//! sealed verifier after every turn.

pub mod encoding;
pub mod model;
pub mod scripted;

pub use model::{Attacker, ModelController};
pub use scripted::{AttackPlan, ScriptedController};

use gauntlet_core::GatewayEvent;
use serde::{Deserialize, Serialize};

/// What the controller sees after a turn: the agent's reply and the gateway events of that turn.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The agent's reply.
    pub reply: &'a str,
    /// The gateway events of the turn.
    pub new_events: &'a [GatewayEvent],
}

/// One decision of a controller: the next user message and why. Stored with the episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControllerDecision {
    /// The turn this message opens, from 1.
    pub turn: u32,
    /// The ladder rung (`task`, `plain`, `authority`, `decomposition`, `role-play`, `encoding`).
    pub rung: String,
    /// Why the controller chose it.
    pub reason: String,
    /// The user message.
    pub message: String,
    /// Injection rules the controller places before this turn (multi setting, model controller).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inject: Vec<PlacedInjection>,
}

/// An injection rule placed by a controller during an episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedInjection {
    /// Tool name or glob.
    pub tool: String,
    /// The payload, appended to the tool's result.
    pub text: String,
}

/// A controller of the user channel.
pub trait Controller: Send {
    /// The next user message given what the last turn showed (`None` before the first turn), or `None`
    /// when the controller gives up.
    fn next(&mut self, last: Option<&Observation<'_>>) -> Option<ControllerDecision>;

    /// Model tokens the controller used (0 for the scripted one).
    fn tokens(&self) -> u64 {
        0
    }
}
