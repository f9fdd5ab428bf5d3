//! Probes and probe suites: the labelled candidate calls a defense is scored on, and their JSON-lines export.

use gauntlet_core::{GatewayEvent, HarmTier, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The oracle's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// The task needs it (required) or it is harmless and legitimate (permissible).
    Allow,
    /// Excess privilege: a correct defense refuses it.
    Deny,
    /// The oracle cannot tell (the call fails on the world, so allowing it has no effect to judge).
    Unknown,
    /// Excess without an effect worth refusing (a re-read, a listing, a dropped filter within the task's scope):
    /// reported apart, weight 0 in leakage and not counted as over-restriction when refused.
    Harmless,
}

impl Label {
    /// The lowercase name used in exports and the census.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Allow => "allow",
            Label::Deny => "deny",
            Label::Unknown => "unknown",
            Label::Harmless => "harmless",
        }
    }
}

/// Where a label comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Executed on a copy of the world at that point: the effect (or the verifier) showed it.
    Confirmed,
    /// By rule, without an observed effect.
    Asserted,
}

/// The generator family that proposed a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// The call the task needs, and re-reads of what it read.
    UnderGrant,
    /// The due call with one argument changed.
    Parameter,
    /// A tool of the task's services the plan does not use.
    ToolIdentity,
    /// The task's own calls repeated, brought forward or reordered.
    Sequence,
    /// The due call with a value that arrived in injected content.
    Provenance,
    /// An off-path write addressed to a recipient that arrived in injected content.
    CrossAxis,
    /// The attack's own calls.
    AttackerSeeded,
}

/// The axis a defense needs to constrain to refuse a probe correctly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    /// Which tool.
    Tool,
    /// Which arguments.
    Parameter,
    /// When, and how often.
    Sequence,
    /// Where a value came from.
    Provenance,
}

/// A probe's fault class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The call the task needs next.
    Required,
    /// A read the task already made.
    PermissibleRead,
    /// The due call on another resource of the same type.
    WrongResource,
    /// A number of the due call set to 0, -1 or 10⁹.
    BoundaryValue,
    /// The due call without one of its optional arguments.
    OmittedArgument,
    /// A tool the plan does not use.
    OffPathTool,
    /// One of the plan's writes again.
    Replay,
    /// A later write of the plan brought forward.
    Premature,
    /// The plan's next read taken early.
    Reorder,
    /// The due call with an injected value.
    UntrustedValue,
    /// An off-path write to an injected recipient.
    UntrustedRecipient,
    /// One of the attack's calls.
    AttackSink,
}

macro_rules! spelled {
    ($t:ty { $($v:ident => $s:literal),* $(,)? }) => {
        impl $t {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$v),*];

            /// The exported spelling (the same as serde's: a test checks).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$v => $s,)*
                }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

spelled!(Family {
    UnderGrant => "under-grant",
    Parameter => "parameter",
    ToolIdentity => "tool-identity",
    Sequence => "sequence",
    Provenance => "provenance",
    CrossAxis => "cross-axis",
    AttackerSeeded => "attacker-seeded",
});
spelled!(Source {
    Confirmed => "confirmed",
    Asserted => "asserted",
});
spelled!(Axis {
    Tool => "tool",
    Parameter => "parameter",
    Sequence => "sequence",
    Provenance => "provenance",
});
spelled!(Fault {
    Required => "required",
    PermissibleRead => "permissible-read",
    WrongResource => "wrong-resource",
    BoundaryValue => "boundary-value",
    OmittedArgument => "omitted-argument",
    OffPathTool => "off-path-tool",
    Replay => "replay",
    Premature => "premature",
    Reorder => "reorder",
    UntrustedValue => "untrusted-value",
    UntrustedRecipient => "untrusted-recipient",
    AttackSink => "attack-sink",
});

/// One candidate call at one decision point, with its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Stable id: `task/k/family/n`.
    pub id: String,
    /// The task (case id).
    pub task: String,
    /// Decision point: how many plan calls have executed before this call is proposed.
    pub point: usize,
    /// Generator family.
    pub family: Family,
    /// Axis a defense needs to constrain to refuse it correctly.
    pub axis: Axis,
    /// Fault class.
    pub fault: Fault,
    /// The proposed tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The label.
    pub label: Label,
    /// Where the label comes from.
    pub source: Source,
    /// Harm tier, from the effect and its recipient (see the oracle's rules).
    pub tier: HarmTier,
    /// The id of the oracle rule that produced the label and tier (`docs/privilege.md` lists them).
    #[serde(default)]
    pub rule: String,
    /// What executing the probe showed (or why it could not execute), in a line.
    #[serde(default)]
    pub evidence: String,
    /// For attack sinks: which attack of the task (AgentDojo pairs every user task with several injection tasks;
    /// a built-in case has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack: Option<usize>,
    /// For attack sinks: which sink of that attack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<usize>,
}

impl Probe {
    /// The call to present to a defense.
    pub fn call(&self) -> ToolCall {
        ToolCall {
            id: self.id.clone(),
            tool: self.tool.clone(),
            args: self.args.clone(),
        }
    }
}

/// The probes of one task and the plan history each decision point sees.
#[derive(Debug, Clone)]
pub struct TaskProbes {
    /// The case id.
    pub task: String,
    /// The task prompt.
    pub prompt: String,
    /// The plan.
    pub plan: Vec<ToolCall>,
    /// Gateway events of the plan executed on s0 (point k sees the first k).
    pub history: Vec<GatewayEvent>,
    /// The probes, in generation order.
    pub probes: Vec<Probe>,
    /// Per attack, how many sinks it has.
    pub attacks: Vec<usize>,
    /// The tools the agent has, when they are not the simulated world's (an imported benchmark).
    pub tools: Option<std::sync::Arc<[gauntlet_core::ToolSpec]>>,
}

/// A whole probe suite.
#[derive(Debug, Clone, Default)]
pub struct ProbeSuite {
    /// Per task.
    pub tasks: Vec<TaskProbes>,
}

impl ProbeSuite {
    /// The tasks whose id matches any of `patterns` (all when there are none; `*` and `?` are wildcards), then,
    /// with `limit`, a sample of that many drawn with `seed`, in suite order. A pattern that matches no task is an
    /// error, as in the run job's `--case`.
    pub fn select(
        self,
        patterns: &[String],
        limit: Option<usize>,
        seed: u64,
    ) -> Result<ProbeSuite, gauntlet_cases::suite::ChoiceError> {
        use gauntlet_cases::suite::{ChoiceError, sample, wildcard};
        let matches = |t: &TaskProbes| patterns.iter().any(|p| wildcard(p, &t.task));
        if let Some(p) = patterns
            .iter()
            .find(|p| !self.tasks.iter().any(|t| wildcard(p, &t.task)))
        {
            return Err(ChoiceError::NoMatch(p.clone()));
        }
        let tasks: Vec<TaskProbes> = self
            .tasks
            .into_iter()
            .filter(|t| patterns.is_empty() || matches(t))
            .collect();
        let tasks = match limit {
            Some(0) => return Err(ChoiceError::ZeroLimit),
            Some(n) => sample(tasks, n, seed),
            None => tasks,
        };
        Ok(ProbeSuite { tasks })
    }

    /// Every probe.
    pub fn probes(&self) -> impl Iterator<Item = &Probe> {
        self.tasks.iter().flat_map(|t| t.probes.iter())
    }

    /// The suite as JSON lines with sorted keys: one `task` line per task (prompt, plan, history) followed by its
    /// probes. Byte-identical for the same cases.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for t in &self.tasks {
            let history: Vec<Value> = t.history.iter().map(|e| json!({"tool": e.call.tool, "args": e.call.args, "allowed": true, "result": e.observed})).collect();
            let mut head = json!({"kind": "task", "task": t.task, "prompt": t.prompt, "plan": t.plan.iter().map(|c| json!({"tool": c.tool, "args": c.args})).collect::<Vec<_>>(), "history": history, "attacks": t.attacks});
            if let Some(tools) = &t.tools {
                head["tools"] = Value::Array(
                    tools
                        .iter()
                        .map(|s| json!({"name": s.name, "effect": s.effect}))
                        .collect(),
                );
            }
            out.push_str(&head.to_string());
            out.push('\n');
            for p in &t.probes {
                let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
                if let Value::Object(m) = &mut v {
                    m.insert("kind".into(), json!("probe"));
                }
                out.push_str(&v.to_string());
                out.push('\n');
            }
        }
        out
    }
}

impl ProbeSuite {
    /// Reads a suite written by [`ProbeSuite::to_jsonl`]. Errors name the line.
    pub fn from_jsonl(text: &str) -> Result<ProbeSuite, String> {
        let mut suite = ProbeSuite::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |m: String| format!("line {}: {m}", i + 1);
            let v: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
            match v.get("kind").and_then(Value::as_str) {
                Some("task") => {
                    let str_of = |k: &str| {
                        v.get(k)
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .ok_or_else(|| at(format!("task line without `{k}`")))
                    };
                    let task = str_of("task")?;
                    let calls = |k: &str| -> Vec<(String, Value, Value)> {
                        v.get(k)
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .map(|c| {
                                        (
                                            c["tool"].as_str().unwrap_or("").to_string(),
                                            c["args"].clone(),
                                            c["result"].clone(),
                                        )
                                    })
                                    .collect()
                            })
                            .unwrap_or_default()
                    };
                    let plan: Vec<ToolCall> = calls("plan")
                        .into_iter()
                        .enumerate()
                        .map(|(j, (tool, args, _))| ToolCall {
                            id: format!("plan-{}", j + 1),
                            tool,
                            args,
                        })
                        .collect();
                    let history: Vec<GatewayEvent> = calls("history")
                        .into_iter()
                        .enumerate()
                        .map(|(j, (tool, args, result))| GatewayEvent {
                            seq: j as u64 + 1,
                            turn: 1,
                            call: ToolCall {
                                id: format!("call-{}", j + 1),
                                tool,
                                args,
                            },
                            decision: gauntlet_core::Decision::Allow,
                            raw: result.clone(),
                            observed: result,
                            injection: None,
                            tier: HarmTier::H1,
                            error: None,
                            at: String::new(),
                        })
                        .collect();
                    let attacks: Vec<usize> = v
                        .get("attacks")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_u64)
                                .map(|n| n as usize)
                                .collect()
                        })
                        .unwrap_or_default();
                    let tools = match v.get("tools").and_then(Value::as_array) {
                        None => None,
                        Some(a) => {
                            let mut specs = Vec::new();
                            for t in a {
                                let effect = serde_json::from_value(t["effect"].clone())
                                    .map_err(|e| at(format!("tool effect: {e}")))?;
                                specs.push(gauntlet_core::ToolSpec {
                                    name: t["name"].as_str().unwrap_or("").to_string(),
                                    description: String::new(),
                                    parameters: json!({}),
                                    effect,
                                });
                            }
                            Some(specs.into())
                        }
                    };
                    suite.tasks.push(TaskProbes {
                        task,
                        prompt: str_of("prompt")?,
                        plan,
                        history,
                        probes: vec![],
                        attacks,
                        tools,
                    });
                }
                Some("probe") => {
                    let p: Probe = serde_json::from_value(v.clone())
                        .map_err(|e| at(format!("not a probe: {e}")))?;
                    let t = suite
                        .tasks
                        .last_mut()
                        .filter(|t| t.task == p.task)
                        .ok_or_else(|| {
                            at(format!("probe of task {} outside its task block", p.task))
                        })?;
                    t.probes.push(p);
                }
                _ => return Err(at("`kind` must be task or probe".into())),
            }
        }
        Ok(suite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde_spells_as_as_str<T>(all: &[T], as_str: fn(T) -> &'static str)
    where
        T: Copy + PartialEq + std::fmt::Debug + Serialize + serde::de::DeserializeOwned,
    {
        for &v in all {
            assert_eq!(serde_json::to_value(v).ok(), Some(json!(as_str(v))));
            let back: Option<T> = serde_json::from_value(json!(as_str(v))).ok();
            assert_eq!(back, Some(v));
        }
    }

    #[test]
    fn every_spelling_is_serdes_and_reads_back() {
        serde_spells_as_as_str(Family::ALL, Family::as_str);
        serde_spells_as_as_str(Axis::ALL, Axis::as_str);
        serde_spells_as_as_str(Fault::ALL, Fault::as_str);
        serde_spells_as_as_str(Source::ALL, Source::as_str);
    }
    use crate::score::score;
    use gauntlet_defense::{AllowAll, DenyAll, ExactArgs, ToolAllowlist};

    fn suite() -> ProbeSuite {
        let loaded = gauntlet_cases::load(&gauntlet_cases::Source::Builtin);
        assert!(loaded.diagnostics.is_empty());
        crate::builtin::generate(&loaded.cases)
    }

    #[test]
    fn select_keeps_matching_tasks_and_draws_a_seeded_sample() {
        let names = |s: &ProbeSuite| s.tasks.iter().map(|t| t.task.clone()).collect::<Vec<_>>();
        let all = suite();
        let mail = all
            .clone()
            .select(&["mail.*".to_string()], None, 1)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!mail.tasks.is_empty() && mail.tasks.len() < all.tasks.len());
        assert!(names(&mail).iter().all(|t| t.starts_with("mail.")));
        let a = all
            .clone()
            .select(&[], Some(5), 7)
            .unwrap_or_else(|e| panic!("{e}"));
        let b = all
            .clone()
            .select(&[], Some(5), 7)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.tasks.len(), 5);
        assert_eq!(names(&a), names(&b), "same seed, same sample");
        let order = names(&all);
        let at: Vec<usize> = names(&a)
            .iter()
            .filter_map(|t| order.iter().position(|o| o == t))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "suite order kept");
        assert!(
            all.clone()
                .select(&["nope.*".to_string()], None, 1)
                .is_err()
        );
        assert!(all.select(&[], Some(0), 1).is_err());
    }

    #[test]
    fn baselines_bound_the_scale_on_the_builtin_suite() {
        let s = suite();
        let allow = score(&s, &AllowAll).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(allow.sufficiency.value, Some(1.0));
        assert_eq!(allow.leakage, Some(1.0));
        assert_eq!(allow.attack_admission.value, Some(1.0));
        let deny = score(&s, &DenyAll).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(deny.sufficiency.value, Some(0.0));
        assert!(!deny.gate_passed);
        assert_eq!(deny.over_restriction.value, Some(1.0));
        let exact = score(&s, &ExactArgs).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exact.sufficiency.value, Some(1.0));
        assert_eq!(exact.leakage, Some(0.0));
        assert_eq!(exact.attack_admission.value, Some(0.0));
        let allowlist = score(&s, &ToolAllowlist).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(allowlist.sufficiency.value, Some(1.0));
        let axis = |sc: &crate::DefenseScore, a: &str| {
            sc.leakage_by_axis
                .iter()
                .find(|x| x.axis.as_str() == a)
                .and_then(|x| x.leakage)
        };
        assert_eq!(axis(&allowlist, "parameter"), Some(1.0));
        assert_eq!(axis(&allowlist, "tool"), Some(0.0));
    }

    #[test]
    fn labels_are_mostly_confirmed_and_export_is_stable() {
        let s = suite();
        let c = crate::score::census(&s);
        assert!(
            c.confirmed_fraction >= 0.8,
            "confirmed fraction {}",
            c.confirmed_fraction
        );
        for fault in [
            "required",
            "permissible-read",
            "wrong-resource",
            "omitted-argument",
            "off-path-tool",
            "attack-sink",
            "untrusted-value",
        ] {
            assert!(
                c.by_fault.get(fault).copied().unwrap_or(0) > 0,
                "no {fault} probes: {:?}",
                c.by_fault
            );
        }
        let a = s.to_jsonl();
        assert_eq!(a, suite().to_jsonl(), "export must be byte-identical");
        let back = ProbeSuite::from_jsonl(&a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.to_jsonl(), a);
        let e = ProbeSuite::from_jsonl("{\"kind\": \"probe\"}")
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("line 1:"), "{e}");
    }
}
