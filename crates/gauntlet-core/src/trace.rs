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

    /// Cuts what is kept of the trace to the stored limits ([`crate::excerpt`]): each user turn, reply and string
    /// of a call's arguments or results to [`STORED_TEXT_MAX`](crate::excerpt::STORED_TEXT_MAX), each defense
    /// reason and error to [`STORED_REASON_MAX`](crate::excerpt::STORED_REASON_MAX), head and tail kept and the
    /// cut marked. For after the verdict: an agent or a defense that answers in megabytes cannot fill the store.
    pub fn cap_for_storage(&mut self) {
        use crate::excerpt::{STORED_TEXT_MAX, cap};
        for t in &mut self.turns {
            cap(&mut t.user, STORED_TEXT_MAX);
            cap(&mut t.reply, STORED_TEXT_MAX);
            t.events.iter_mut().for_each(GatewayEvent::cap_for_storage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::excerpt::{STORED_REASON_MAX, STORED_TEXT_MAX};
    use crate::{Decision, HarmTier, ToolCall};
    use serde_json::json;

    #[test]
    fn what_is_stored_of_a_trace_is_cut_to_its_limits_and_small_parts_are_untouched() {
        let huge = "A".repeat(3 * STORED_TEXT_MAX);
        let event = GatewayEvent {
            seq: 1,
            turn: 1,
            call: ToolCall {
                id: "call-1".into(),
                tool: "shell.run".into(),
                args: json!({"command": huge, "cwd": "/home"}),
            },
            decision: Decision::Deny {
                reason: "R".repeat(1 << 22),
            },
            raw: json!({"stdout": huge, "code": 0}),
            observed: json!([huge]),
            injection: None,
            tier: HarmTier::H0,
            error: Some("E".repeat(1 << 21)),
            at: "t".into(),
        };
        let mut trace = Trace {
            turns: vec![Turn {
                index: 1,
                user: "hi".into(),
                events: vec![event],
                reply: huge.clone(),
            }],
        };
        trace.cap_for_storage();
        let t = &trace.turns[0];
        let e = &t.events[0];
        let bounded = |s: &str, max: usize| s.len() <= max + 64 && s.contains("bytes cut");
        assert!(bounded(&t.reply, STORED_TEXT_MAX));
        assert!(bounded(
            e.call.args["command"].as_str().unwrap_or(""),
            STORED_TEXT_MAX
        ));
        assert!(bounded(
            e.raw["stdout"].as_str().unwrap_or(""),
            STORED_TEXT_MAX
        ));
        assert!(bounded(
            e.observed[0].as_str().unwrap_or(""),
            STORED_TEXT_MAX
        ));
        let Decision::Deny { reason } = &e.decision else {
            panic!("the decision changed")
        };
        assert!(bounded(reason, STORED_REASON_MAX));
        assert!(bounded(e.error.as_deref().unwrap_or(""), STORED_REASON_MAX));
        assert_eq!(
            (t.user.as_str(), &e.call.args["cwd"], &e.raw["code"]),
            ("hi", &json!("/home"), &json!(0))
        );
    }
}
