//! Traces: only externally observable behaviour, turn by turn.

use crate::event::GatewayEvent;
use serde::{Deserialize, Serialize};

/// One user turn: the message, the tool calls the agent made, and its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Turn number, from 1.
    pub index: u32,
    /// What the user channel said.
    pub user: String,
    /// The gateway events of this turn, in order.
    pub events: Vec<GatewayEvent>,
    /// The agent's reply.
    pub reply: String,
}

/// The whole observable conversation of an episode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Turns in order.
    pub turns: Vec<Turn>,
}

impl Trace {
    /// All gateway events of all turns, in order.
    pub fn events(&self) -> impl Iterator<Item = &GatewayEvent> {
        self.turns.iter().flat_map(|t| t.events.iter())
    }

    /// The last reply, or "" before any turn.
    pub fn last_reply(&self) -> &str {
        self.turns.last().map_or("", |t| t.reply.as_str())
    }
}
