//! The defense interface: `prepare(task context) → policy` once per task, then `decide(policy, proposed
//! call, history) → allow | deny(reason)` per call, plus the built-in baseline defenses.
//!
//! The same defense is consulted by the gateway during `run` (what it *did* allow) and, later, by the
//! privilege job (what it *would* allow).

use gauntlet_core::{Decision, GatewayEvent, ToolCall, ToolSpec};
use std::fmt;

/// What a defense knows about the task when it prepares its policy.
#[derive(Debug, Clone, Copy)]
pub struct TaskContext<'a> {
    /// The case id.
    pub case_id: &'a str,
    /// The user's task, as the benign user would state it.
    pub prompt: &'a str,
    /// The calls the task needs (the solution plan).
    pub solution: &'a [ToolCall],
    /// Every tool the agent can call.
    pub tools: &'a [ToolSpec],
}

/// A defense could not prepare a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("defense {defense}: {message}")]
pub struct DefenseError {
    /// The defense's name.
    pub defense: String,
    /// What went wrong.
    pub message: String,
}

/// A prepared policy: decides each proposed call given the calls already executed.
pub trait Policy: Send {
    /// Allow or deny `call`; `history` holds the episode's earlier gateway events.
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Decision;
}

/// A defense: prepares one policy per task.
pub trait Defense: Send + Sync + fmt::Debug {
    /// Short name used in reports (`allow-all`, …).
    fn name(&self) -> &str;
    /// Prepares the policy for one task.
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError>;
}

/// No defense: every call is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

struct AllowAllPolicy;

impl Policy for AllowAllPolicy {
    fn decide(&self, _call: &ToolCall, _history: &[GatewayEvent]) -> Decision {
        Decision::Allow
    }
}

impl Defense for AllowAll {
    fn name(&self) -> &str {
        "allow-all"
    }

    fn prepare(&self, _task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        Ok(Box::new(AllowAllPolicy))
    }
}

/// A policy that allows everything, for callers with no defense in the path.
pub fn allow_all_policy() -> Box<dyn Policy> {
    Box::new(AllowAllPolicy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn allow_all_allows() {
        let call = ToolCall {
            id: "c1".into(),
            tool: "mail.send".into(),
            args: json!({}),
        };
        let ctx = TaskContext {
            case_id: "x",
            prompt: "p",
            solution: &[],
            tools: &[],
        };
        let policy = AllowAll.prepare(&ctx);
        assert!(
            policy
                .map(|p| p.decide(&call, &[]).allowed())
                .unwrap_or(false)
        );
        assert_eq!(AllowAll.name(), "allow-all");
    }
}
