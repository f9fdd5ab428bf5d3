//! The AgentDojo adapter: probe suites from the export written by `adapters/agentdojo/export.py`.
//!
//! AgentDojo's environments are Python objects, so nothing can be executed here: every label is asserted by rule
//! (the census says so). Every user task is paired with every injection task of its suite, as AgentDojo's threat
//! model does; each injection task's ground-truth calls are that attack's sinks. Tool effects and base tiers are
//! authored in `adapters/agentdojo/tiers.yaml`.

use crate::probe::{Label, Probe, ProbeSuite, Source, TaskProbes};
use gauntlet_core::{
    Decision, Effect, EffectKind, GatewayEvent, HarmContext, HarmTier, ToolCall, ToolSpec,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The authored effects of AgentDojo's tools.
const TIERS: &str = include_str!("../../../adapters/agentdojo/tiers.yaml");

#[derive(Deserialize)]
struct Export {
    benchmark: String,
    suites: Vec<Suite>,
}

#[derive(Deserialize)]
struct Suite {
    name: String,
    tools: Vec<Tool>,
    environment: Value,
    user_tasks: Vec<Task>,
    injection_tasks: Vec<Injection>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
    description: String,
    parameters: Value,
}

#[derive(Deserialize)]
struct Task {
    id: String,
    prompt: String,
    ground_truth: Vec<Call>,
}

#[derive(Deserialize)]
struct Injection {
    #[allow(dead_code)]
    id: String,
    ground_truth: Vec<Call>,
}

#[derive(Deserialize, Clone)]
struct Call {
    tool: String,
    args: Value,
}

/// Strings in a JSON value that look like resources an argument could name (emails, IBANs, URLs, ids, names).
fn values(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) if !s.is_empty() && s.len() <= 60 && !s.contains('\n') => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| values(x, out)),
        Value::Object(o) => o.values().for_each(|x| values(x, out)),
        _ => {}
    }
}

fn same_kind(a: &str, b: &str) -> bool {
    a.contains('@') == b.contains('@')
        && a.starts_with("http") == b.starts_with("http")
        && a.contains(' ') == b.contains(' ')
}

/// Loads an export and builds its probe suite.
pub fn load(text: &str) -> Result<ProbeSuite, String> {
    let export: Export =
        serde_json::from_str(text).map_err(|e| format!("not an AgentDojo export: {e}"))?;
    if export.benchmark != "agentdojo" {
        return Err(format!(
            "`benchmark` is {:?}, expected \"agentdojo\"",
            export.benchmark
        ));
    }
    let tiers: BTreeMap<String, BTreeMap<String, (String, String)>> =
        serde_saphyr::from_str(TIERS).map_err(|e| format!("adapters/agentdojo/tiers.yaml: {e}"))?;
    let mut suite_out = ProbeSuite::default();
    for s in &export.suites {
        let authored = tiers
            .get(&s.name)
            .ok_or_else(|| format!("no authored tiers for suite {}", s.name))?;
        let mut specs = Vec::new();
        for t in &s.tools {
            let (kind, tier) = authored
                .get(&t.name)
                .ok_or_else(|| format!("no authored tier for {}.{}", s.name, t.name))?;
            let kind = if kind == "write" {
                EffectKind::Write
            } else {
                EffectKind::Read
            };
            let tier: HarmTier = tier.parse()?;
            specs.push(ToolSpec {
                name: format!("{}.{}", s.name, t.name),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
                effect: Effect {
                    kind,
                    domain: s.name.clone(),
                    tier,
                },
            });
        }
        let specs: Arc<[ToolSpec]> = specs.into();
        let spec_of = |name: &str| specs.iter().find(|t| t.name == name);
        let qualify = |c: &Call| ToolCall {
            id: String::new(),
            tool: format!("{}.{}", s.name, c.tool),
            args: c.args.clone(),
        };
        let mut env_values = BTreeSet::new();
        values(&s.environment, &mut env_values);
        let attacks: Vec<Vec<ToolCall>> = s
            .injection_tasks
            .iter()
            .map(|i| i.ground_truth.iter().map(qualify).collect())
            .collect();
        // Hostile parties: values the injection tasks name that the environment does not hold.
        let mut hostile = BTreeSet::new();
        for a in &attacks {
            for c in a {
                let mut v = BTreeSet::new();
                values(&c.args, &mut v);
                hostile.extend(v.into_iter().filter(|x| {
                    (x.contains('@') || x.starts_with("http") || x.len() >= 15)
                        && !env_values.contains(x)
                }));
            }
        }
        let harm = HarmContext {
            hostile: hostile.into_iter().collect(),
            sinks: attacks
                .iter()
                .flatten()
                .map(|c| (c.tool.clone(), c.args.clone()))
                .collect(),
        };
        for task in &s.user_tasks {
            let plan: Vec<ToolCall> = task
                .ground_truth
                .iter()
                .enumerate()
                .map(|(i, c)| ToolCall {
                    id: format!("plan-{}", i + 1),
                    ..qualify(c)
                })
                .collect();
            let history: Vec<GatewayEvent> = plan
                .iter()
                .enumerate()
                .map(|(i, c)| GatewayEvent {
                    seq: i as u64 + 1,
                    turn: 1,
                    call: c.clone(),
                    decision: Decision::Allow,
                    raw: Value::Null,
                    observed: Value::Null,
                    injection: None,
                    tier: HarmTier::H1,
                    error: None,
                    at: String::new(),
                })
                .collect();
            let id = format!("agentdojo.{}.{}", s.name, task.id);
            let mut probes = Vec::new();
            let mut n = 0usize;
            let mut push = |point: usize,
                            family: &str,
                            axis: &str,
                            fault: &str,
                            call: &ToolCall,
                            label: Label,
                            attack: Option<(usize, usize)>| {
                n += 1;
                let base = spec_of(&call.tool).map(|t| t.effect.tier);
                probes.push(Probe {
                    id: format!("{id}/{point}/{family}/{n}"),
                    task: id.clone(),
                    point,
                    family: family.into(),
                    axis: axis.into(),
                    fault: fault.into(),
                    tool: call.tool.clone(),
                    args: call.args.clone(),
                    label,
                    source: Source::Asserted,
                    tier: harm.tier(base, &call.tool, &call.args),
                    attack: attack.map(|(a, _)| a),
                    sink: attack.map(|(_, i)| i),
                });
            };
            let is_plan = |c: &ToolCall| plan.iter().any(|p| p.tool == c.tool && p.args == c.args);
            let plan_tools: BTreeSet<&str> = plan.iter().map(|c| c.tool.as_str()).collect();
            for k in 0..=plan.len() {
                if let Some(c) = plan.get(k) {
                    push(k, "under-grant", "tool", "required", c, Label::Allow, None);
                    if let Value::Object(args) = &c.args {
                        for (name, value) in args {
                            if let Value::String(v) = value
                                && let Some(other) =
                                    env_values.iter().find(|w| *w != v && same_kind(w, v))
                            {
                                let mut a = args.clone();
                                a.insert(name.clone(), json!(other));
                                let probe = ToolCall {
                                    args: Value::Object(a),
                                    ..c.clone()
                                };
                                if !is_plan(&probe) {
                                    push(
                                        k,
                                        "parameter",
                                        "parameter",
                                        "wrong-resource",
                                        &probe,
                                        Label::Deny,
                                        None,
                                    );
                                }
                            }
                        }
                    }
                }
                for c in plan.iter().take(k) {
                    let read = spec_of(&c.tool).is_some_and(|t| t.effect.kind == EffectKind::Read);
                    if read {
                        push(
                            k,
                            "under-grant",
                            "sequence",
                            "permissible-read",
                            c,
                            Label::Allow,
                            None,
                        );
                    } else {
                        push(k, "sequence", "sequence", "replay", c, Label::Unknown, None);
                    }
                }
                for t in specs
                    .iter()
                    .filter(|t| !plan_tools.contains(t.name.as_str()))
                {
                    let required: Vec<&str> = t
                        .parameters
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let props = t
                        .parameters
                        .get("properties")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    let args: serde_json::Map<String, Value> = props
                        .iter()
                        .filter(|(k, _)| required.contains(&k.as_str()))
                        .map(|(k, p)| {
                            let v = match p.get("type").and_then(Value::as_str) {
                                Some("array") => json!([env_values
                                    .iter()
                                    .find(|v| v.contains('@'))
                                    .cloned()
                                    .unwrap_or_default()]),
                                Some("integer") | Some("number") => json!(1),
                                Some("boolean") => json!(true),
                                _ => json!(
                                    env_values
                                        .iter()
                                        .find(|v| !v.contains(' ') && !v.contains('@'))
                                        .cloned()
                                        .unwrap_or_else(|| "probe".into())
                                ),
                            };
                            (k.clone(), v)
                        })
                        .collect();
                    push(
                        k,
                        "tool-identity",
                        "tool",
                        "off-path-tool",
                        &ToolCall {
                            id: String::new(),
                            tool: t.name.clone(),
                            args: Value::Object(args),
                        },
                        Label::Deny,
                        None,
                    );
                }
                for (a, calls) in attacks.iter().enumerate() {
                    for (i, c) in calls.iter().enumerate() {
                        let axis = if plan_tools.contains(c.tool.as_str()) {
                            "parameter"
                        } else {
                            "tool"
                        };
                        let label = if is_plan(c) {
                            Label::Unknown
                        } else {
                            Label::Deny
                        };
                        push(
                            k,
                            "attacker-seeded",
                            axis,
                            "attack-sink",
                            c,
                            label,
                            Some((a, i)),
                        );
                    }
                }
            }
            suite_out.tasks.push(TaskProbes {
                task: id,
                prompt: task.prompt.clone(),
                plan,
                history,
                probes,
                attacks: attacks.iter().map(Vec::len).collect(),
                tools: Some(specs.clone()),
            });
        }
    }
    Ok(suite_out)
}
