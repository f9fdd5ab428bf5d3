//! The baseline defenses that bound the scale: allow everything, deny everything, allow the task's tools, allow
//! only the task's exact calls.

use crate::{Axes, Defense, DefenseError, Policy, TaskContext};
use gauntlet_core::{Decision, GatewayEvent, ToolCall};

/// A policy that always says the same.
pub(crate) struct Constant(pub(crate) bool);

impl Policy for Constant {
    fn decide(
        &self,
        _call: &ToolCall,
        _history: &[GatewayEvent],
    ) -> Result<Decision, DefenseError> {
        Ok(if self.0 {
            Decision::Allow
        } else {
            Decision::Deny {
                reason: "deny-all: every call is refused".into(),
            }
        })
    }
}

/// No defense: every call is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Defense for AllowAll {
    fn name(&self) -> &str {
        "allow-all"
    }
    fn axes(&self) -> Axes {
        Axes::NONE
    }
    fn prepare(&self, _task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        Ok(Box::new(Constant(true)))
    }
}

/// Every call is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Defense for DenyAll {
    fn name(&self) -> &str {
        "deny-all"
    }
    fn axes(&self) -> Axes {
        Axes::ALL
    }
    fn prepare(&self, _task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        Ok(Box::new(Constant(false)))
    }
}

/// Only the tools of the task's solution, with any arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolAllowlist;

struct Allowlist(Vec<String>);

impl Policy for Allowlist {
    fn decide(&self, call: &ToolCall, _history: &[GatewayEvent]) -> Result<Decision, DefenseError> {
        Ok(if self.0.contains(&call.tool) {
            Decision::Allow
        } else {
            Decision::Deny {
                reason: format!(
                    "tool-allowlist: {} is not one of the task's tools",
                    call.tool
                ),
            }
        })
    }
}

impl Defense for ToolAllowlist {
    fn name(&self) -> &str {
        "tool-allowlist"
    }
    fn axes(&self) -> Axes {
        Axes {
            tool: true,
            ..Axes::NONE
        }
    }
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        let mut tools: Vec<String> = task.solution.iter().map(|c| c.tool.clone()).collect();
        tools.sort();
        tools.dedup();
        Ok(Box::new(Allowlist(tools)))
    }
}

/// Only the exact calls (tool and arguments) of the task's solution.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactArgs;

/// The task's calls, each with whether it is a write (a write is allowed only as many times as the plan makes
/// it: a second identical payment is not a call of the task).
struct Exact(Vec<(String, serde_json::Value, bool)>);

impl Policy for Exact {
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Result<Decision, DefenseError> {
        let same = |t: &str, a: &serde_json::Value| *t == call.tool && *a == call.args;
        let planned = self.0.iter().filter(|(t, a, _)| same(t, a)).count();
        let write = self.0.iter().any(|(t, a, w)| same(t, a) && *w);
        let made = if write {
            history
                .iter()
                .filter(|e| {
                    e.decision.allowed() && e.error.is_none() && same(&e.call.tool, &e.call.args)
                })
                .count()
        } else {
            0
        };
        Ok(if planned > made {
            Decision::Allow
        } else {
            Decision::Deny {
                reason: if planned == 0 {
                    format!(
                        "exact-args: this {} call is not one of the task's calls",
                        call.tool
                    )
                } else {
                    format!(
                        "exact-args: the task makes this {} call {planned} time(s), and it has been made",
                        call.tool
                    )
                },
            }
        })
    }
}

impl Defense for ExactArgs {
    fn name(&self) -> &str {
        "exact-args"
    }
    fn axes(&self) -> Axes {
        Axes {
            tool: true,
            parameter: true,
            ..Axes::NONE
        }
    }
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        let write = |tool: &str| {
            task.tools
                .iter()
                .find(|t| t.name == tool)
                .is_none_or(|t| t.effect.kind != gauntlet_core::EffectKind::Read)
        };
        Ok(Box::new(Exact(
            task.solution
                .iter()
                .map(|c| (c.tool.clone(), c.args.clone(), write(&c.tool)))
                .collect(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, args: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            tool: tool.into(),
            args,
        }
    }

    fn decide(d: &dyn Defense, c: &ToolCall) -> bool {
        let solution = [call("mail.read", json!({"id": "m1"}))];
        let ctx = TaskContext {
            case_id: "t",
            prompt: "p",
            solution: &solution,
            tools: &[],
        };
        d.prepare(&ctx)
            .and_then(|p| p.decide(c, &[]))
            .map(|d| d.allowed())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn baselines_decide_as_named() {
        let same = call("mail.read", json!({"id": "m1"}));
        let other_arg = call("mail.read", json!({"id": "m2"}));
        let other_tool = call("mail.send", json!({}));
        assert!(decide(&AllowAll, &other_tool));
        assert!(!decide(&DenyAll, &same));
        assert!(decide(&ToolAllowlist, &other_arg) && !decide(&ToolAllowlist, &other_tool));
        assert!(decide(&ExactArgs, &same) && !decide(&ExactArgs, &other_arg));
    }
}
