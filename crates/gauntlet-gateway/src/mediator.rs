//! The mediation every tool call goes through, whatever executes it — the simulated world in an episode
//! ([`crate::Gateway`]) or a real MCP server behind `gauntlet gateway proxy`: the defense's decision, the
//! injection rules in force, and the call's harm tier. One implementation, so the two cannot drift apart.
//!
//! The one rule for a defense that cannot decide (an error, a timeout, an answer that is not a decision): the call
//! is denied — fail closed — with the reason `defense failed: …`, and the failure is kept
//! ([`Mediator::defense_error`], [`Mediator::defense_failures`]). An episode with one is recorded as errored, never
//! as a defense that held; the proxy goes on serving and reports how many calls it denied that way.

use crate::injection::InjectionRule;
use gauntlet_core::{Decision, GatewayEvent, HarmContext, HarmTier, ToolCall};
use gauntlet_defense::{DefenseError, Policy};
use serde_json::{Value, json};
use std::sync::Arc;

/// The defense's policy, the injection rules with their uses, and the harm context of one episode or proxy.
pub struct Mediator {
    policy: Box<dyn Policy>,
    rules: Vec<InjectionRule>,
    fired: Vec<u32>,
    harm: Arc<HarmContext>,
    defense_error: Option<DefenseError>,
    defense_failures: u64,
}

impl std::fmt::Debug for Mediator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mediator")
            .field("rules", &self.rules.len())
            .field("defense_failures", &self.defense_failures)
            .finish()
    }
}

impl Mediator {
    /// Mediation by `policy`, applying `rules` (empty for untouched results).
    pub fn new(policy: Box<dyn Policy>, rules: Vec<InjectionRule>) -> Mediator {
        let fired = vec![0; rules.len()];
        Mediator {
            policy,
            rules,
            fired,
            harm: Default::default(),
            defense_error: None,
            defense_failures: 0,
        }
    }

    /// Sets the hostile parties and attack sinks used to rate each call's harm tier.
    pub fn with_harm(mut self, harm: Arc<HarmContext>) -> Mediator {
        self.harm = harm;
        self
    }

    /// Adds an injection rule from now on (a controller placing an injection mid-episode).
    pub fn add_rule(&mut self, rule: InjectionRule) {
        self.rules.push(rule);
        self.fired.push(0);
    }

    /// The injection rules, case's first, then those added.
    pub fn rules(&self) -> &[InjectionRule] {
        &self.rules
    }

    /// The defense's decision on `call`, with the calls so far (`history`) in view; a defense that cannot decide
    /// denies the call (see the module doc).
    pub fn decide(&mut self, call: &ToolCall, history: &[GatewayEvent]) -> Decision {
        match self.policy.decide(call, history) {
            Ok(d) => d,
            Err(e) => {
                let reason = format!("defense failed: {e}");
                self.defense_failures += 1;
                self.defense_error.get_or_insert(e);
                Decision::Deny { reason }
            }
        }
    }

    /// The first defense failure, if the defense failed to decide a call.
    pub fn defense_error(&self) -> Option<&DefenseError> {
        self.defense_error.as_ref()
    }

    /// How many calls were denied because the defense failed to decide them.
    pub fn defense_failures(&self) -> u64 {
        self.defense_failures
    }

    /// The first rule that matches `call` (whose raw result is `raw`) and still has uses left, skipping those
    /// `applied` says the result already carries; the rule's use is counted. Returns its index and the rule.
    pub fn fire(
        &mut self,
        call: &ToolCall,
        raw: &Value,
        applied: impl Fn(&InjectionRule) -> bool,
    ) -> Option<(usize, &InjectionRule)> {
        let i = self.rules.iter().enumerate().position(|(i, rule)| {
            rule.uses.is_none_or(|u| self.fired[i] < u) && rule.matches(call, raw) && !applied(rule)
        })?;
        self.fired[i] += 1;
        Some((i, &self.rules[i]))
    }

    /// The harm tier of `call` (`declared`: the tool's own tier, when the executor knows it).
    pub fn tier(&self, declared: Option<HarmTier>, call: &ToolCall) -> HarmTier {
        self.harm.tier(declared, &call.tool, &call.args)
    }
}

/// What a denied call shows: no raw result, the denial as the observed result, and the same text as the error.
pub fn denied(reason: &str) -> (Value, Value, String) {
    let msg = format!("denied by policy: {reason}");
    (Value::Null, json!({"error": msg}), msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::injection::InjectionMode;

    struct Broken;
    impl Policy for Broken {
        fn decide(&self, _: &ToolCall, _: &[GatewayEvent]) -> Result<Decision, DefenseError> {
            Err(DefenseError {
                defense: "broken".into(),
                message: "no answer".into(),
            })
        }
    }

    fn call(tool: &str) -> ToolCall {
        ToolCall {
            id: "call-1".into(),
            tool: tool.into(),
            args: json!({"id": "m1"}),
        }
    }

    #[test]
    fn a_defense_that_cannot_decide_denies_and_is_kept() {
        let mut m = Mediator::new(Box::new(Broken), Vec::new());
        for _ in 0..2 {
            let d = m.decide(&call("mail.send"), &[]);
            assert!(
                matches!(&d, Decision::Deny { reason } if reason.starts_with("defense failed:")),
                "{d:?}"
            );
        }
        assert_eq!(m.defense_failures(), 2);
        assert!(m.defense_error().is_some_and(|e| e.message == "no answer"));
    }

    #[test]
    fn rules_fire_in_order_within_their_uses() {
        let rule = |text: &str, uses| {
            InjectionRule::new("mail.read", None, InjectionMode::Append, text, None, uses)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let policy = Box::new(Broken);
        let mut m = Mediator::new(policy, vec![rule("A", Some(1)), rule("B", None)]);
        let raw = json!("hello");
        let first = m.fire(&call("mail.read"), &raw, |_| false).map(|(i, _)| i);
        let second = m.fire(&call("mail.read"), &raw, |_| false).map(|(i, _)| i);
        let skipped = m
            .fire(&call("mail.read"), &raw, |r| r.text == "B")
            .map(|(i, _)| i);
        assert_eq!((first, second, skipped), (Some(0), Some(1), None));
        assert!(m.fire(&call("mail.send"), &raw, |_| false).is_none());
    }
}
