//! Gateway events: one mediated tool call each.

use crate::tool::ToolCall;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The defense's decision on a proposed call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Decision {
    /// The call may execute.
    Allow,
    /// The call is refused; the agent receives a policy error carrying the reason.
    Deny {
        /// Why the defense refused the call.
        reason: String,
    },
}

impl Decision {
    /// True for [`Decision::Allow`].
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow)
    }
}

/// Which injection rule transformed a result, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectionApplied {
    /// Index of the rule in the episode's rule list.
    pub rule: usize,
    /// The rule's mode (`identity`, `append`, `prefix`, `override`).
    pub mode: String,
    /// Whether the payload was written into the record the result showed (a rule with a `field`), so the world
    /// holds what the agent read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inscribed: bool,
}

/// One tool call as the gateway mediated it. Both the raw result (ground truth from the world) and the
/// observed result (what the agent saw, after injection) are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayEvent {
    /// Position in the episode's log, from 1.
    pub seq: u64,
    /// The user turn during which the call was made, from 1.
    pub turn: u32,
    /// The call as the agent proposed it.
    pub call: ToolCall,
    /// The defense's decision.
    #[serde(flatten)]
    pub decision: Decision,
    /// The result the world returned (`null` when the call did not execute).
    pub raw: Value,
    /// The result the agent observed.
    pub observed: Value,
    /// The injection rule that transformed the result, if any.
    pub injection: Option<InjectionApplied>,
    /// The call's effective harm tier: the tool's base tier, promoted to H4 when an argument names a hostile
    /// party, floored at H4 on an exact attack-sink match.
    pub tier: crate::HarmTier,
    /// The error the agent saw (denied, unknown tool, bad arguments, service error), if any.
    pub error: Option<String>,
    /// The world's logical clock when the call completed (deterministic; never wall time).
    pub at: String,
}

impl GatewayEvent {
    /// Cuts what is kept of the event to the stored limits ([`crate::excerpt`]): each string of the call's
    /// arguments and of both results to [`STORED_TEXT_MAX`](crate::excerpt::STORED_TEXT_MAX), the defense's reason
    /// and the error to [`STORED_REASON_MAX`](crate::excerpt::STORED_REASON_MAX).
    pub fn cap_for_storage(&mut self) {
        use crate::excerpt::{STORED_REASON_MAX, STORED_TEXT_MAX, cap, cap_value};
        cap_value(&mut self.call.args, STORED_TEXT_MAX);
        cap_value(&mut self.raw, STORED_TEXT_MAX);
        cap_value(&mut self.observed, STORED_TEXT_MAX);
        if let Decision::Deny { reason } = &mut self.decision {
            cap(reason, STORED_REASON_MAX);
        }
        if let Some(error) = &mut self.error {
            cap(error, STORED_REASON_MAX);
        }
    }

    /// True when the call was allowed and executed without error.
    pub fn succeeded(&self) -> bool {
        self.decision.allowed() && self.error.is_none()
    }
}
