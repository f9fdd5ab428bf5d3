//! Attack methods and controllers. A controller plays the user channel of an episode: benign and indirect
//! settings send the task; direct and multi escalate adaptively through a ladder of attack rungs, watching
//! each reply and the new gateway events. The verdict never comes from the controller: the harness runs the
//! sealed verifier after every turn.

pub mod encoding;
pub mod model;
pub mod scripted;
pub mod transforms;

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
    /// What the turn changed in the world, one `path: before → after` line per changed value (computed only
    /// for controllers that read it).
    pub state_diff: &'a [String],
}

/// The changed leaves between two JSON states, as `path: before → after` lines (at most `limit`, values
/// shortened), in path order.
pub fn state_diff(
    before: &serde_json::Value,
    after: &serde_json::Value,
    limit: usize,
) -> Vec<String> {
    fn short(v: &serde_json::Value) -> String {
        let s = v.to_string();
        if s.chars().count() > 80 {
            format!("{}…", s.chars().take(80).collect::<String>())
        } else {
            s
        }
    }
    fn walk(
        path: &str,
        a: Option<&serde_json::Value>,
        b: Option<&serde_json::Value>,
        out: &mut Vec<String>,
        limit: usize,
    ) {
        use serde_json::Value::{Array, Object};
        if out.len() >= limit || a == b {
            return;
        }
        match (a, b) {
            (Some(Object(x)), Some(Object(y))) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    walk(&format!("{path}.{k}"), x.get(k), y.get(k), out, limit);
                }
            }
            (Some(Array(x)), Some(Array(y))) => {
                for i in 0..x.len().max(y.len()) {
                    walk(&format!("{path}[{i}]"), x.get(i), y.get(i), out, limit);
                }
            }
            _ => {
                let show = |v: Option<&serde_json::Value>| v.map_or("(none)".to_string(), short);
                out.push(format!(
                    "{}: {} → {}",
                    path.trim_start_matches('.'),
                    show(a),
                    show(b)
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk("", Some(before), Some(after), &mut out, limit);
    out
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
    /// Why the scripted ladder's step stood in for the attacker model's (it failed, gave up before
    /// attacking, or wrote something unusable); `None` when the model's message was used or there is no model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_diff_lists_changed_leaves() {
        let a = json!({"bank": {"balance": 10.0, "payees": [{"iban": "X"}]}, "now": "t0"});
        let b = json!({"bank": {"balance": 5.0, "payees": [{"iban": "Y"}, {"iban": "Z"}]}, "now": "t0"});
        assert_eq!(
            state_diff(&a, &b, 10),
            vec![
                "bank.balance: 10.0 → 5.0",
                "bank.payees[0].iban: \"X\" → \"Y\"",
                "bank.payees[1]: (none) → {\"iban\":\"Z\"}"
            ]
        );
        assert_eq!(state_diff(&a, &b, 1).len(), 1);
        assert!(state_diff(&a, &a, 10).is_empty());
    }
}
