//! The registry of every tool and setup operation, with their schemas compiled once.

use gauntlet_core::{Effect, EffectKind, HarmTier, ToolSpec};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::LazyLock;

/// A setup operation: how a case builds its initial state.
#[derive(Debug, Clone, Serialize)]
pub struct SetupSpec {
    /// `service.op`, e.g. `mail.deliver`.
    pub name: String,
    /// What the operation adds.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

pub(crate) struct Entry<S> {
    pub(crate) spec: S,
    validator: Option<jsonschema::Validator>,
    schema_error: Option<String>,
}

impl<S> Entry<S> {
    fn new(spec: S, schema: &Value) -> Entry<S> {
        match jsonschema::validator_for(schema) {
            Ok(v) => Entry {
                spec,
                validator: Some(v),
                schema_error: None,
            },
            Err(e) => Entry {
                spec,
                validator: None,
                schema_error: Some(format!("broken schema: {e}")),
            },
        }
    }

    /// Every schema violation of `args`, joined; `None` when valid.
    pub(crate) fn check(&self, args: &Value) -> Option<String> {
        let Some(v) = &self.validator else {
            return self.schema_error.clone();
        };
        if v.is_valid(args) {
            return None;
        }
        // The agent reads these: a few, each quoting the offending value only when it is short (an argument of
        // megabytes, or a list of a hundred thousand bad items, must not come back as a megabyte-long error).
        const SHOWN: usize = 8;
        let mut msgs: Vec<String> = Vec::new();
        let mut more = 0usize;
        for e in v.iter_errors(args) {
            if msgs.len() == SHOWN {
                more += 1;
                continue;
            }
            let text = if short(e.instance(), &mut 200) {
                e.to_string()
            } else {
                e.masked().to_string()
            };
            let path = e.instance_path().to_string();
            msgs.push(if path.is_empty() {
                text
            } else {
                format!("{path}: {text}")
            });
        }
        if more > 0 {
            msgs.push(format!("and {more} more"));
        }
        Some(msgs.join("; "))
    }
}

/// Whether `value` is at most `budget` bytes of text and numbers, counted until the budget runs out.
fn short(value: &Value, budget: &mut usize) -> bool {
    let cost = match value {
        Value::String(s) => s.len(),
        Value::Array(items) => return items.iter().all(|v| short(v, budget)),
        Value::Object(fields) => {
            return fields.iter().all(|(k, v)| {
                *budget = budget.saturating_sub(k.len());
                *budget > 0 && short(v, budget)
            });
        }
        _ => 8,
    };
    if cost > *budget {
        return false;
    }
    *budget -= cost;
    true
}

struct Registry {
    tools: Vec<ToolSpec>,
    tool_index: HashMap<String, Entry<ToolSpec>>,
    setups: Vec<SetupSpec>,
    setup_index: HashMap<String, Entry<SetupSpec>>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let mut tools = Vec::new();
    tools.extend(crate::mail::tools());
    tools.extend(crate::calendar::tools());
    tools.extend(crate::drive::tools());
    tools.extend(crate::repo::tools());
    tools.extend(crate::bank::tools());
    tools.extend(crate::chat::tools());
    tools.extend(crate::web::tools());
    tools.extend(crate::shell::tools());
    tools.extend(crate::crm::tools());
    tools.extend(crate::helpdesk::tools());
    let mut setups = vec![setup(
        "world.clock",
        "Advance the logical clock before the episode starts.",
        json!({"advance_minutes": {"type": "integer", "minimum": 0}}),
        &["advance_minutes"],
    )];
    setups.extend(crate::mail::setups());
    setups.extend(crate::calendar::setups());
    setups.extend(crate::drive::setups());
    setups.extend(crate::repo::setups());
    setups.extend(crate::bank::setups());
    setups.extend(crate::chat::setups());
    setups.extend(crate::web::setups());
    setups.extend(crate::shell::setups());
    setups.extend(crate::crm::setups());
    setups.extend(crate::helpdesk::setups());
    let tool_index = tools
        .iter()
        .map(|t| (t.name.clone(), Entry::new(t.clone(), &t.parameters)))
        .collect();
    let setup_index = setups
        .iter()
        .map(|s| (s.name.clone(), Entry::new(s.clone(), &s.parameters)))
        .collect();
    Registry {
        tools,
        tool_index,
        setups,
        setup_index,
    }
});

/// Every tool of every service, in catalogue order.
pub fn tool_specs() -> &'static [ToolSpec] {
    &REGISTRY.tools
}

/// One line per tool: name, harm tier, effect, description (what `gauntlet tools` prints).
pub fn tools_text() -> String {
    tool_specs()
        .iter()
        .map(|t| {
            format!(
                "{:<26} {:?} {:<5} {}\n",
                t.name,
                t.effect.tier,
                format!("{:?}", t.effect.kind).to_lowercase(),
                t.description
            )
        })
        .collect()
}

/// The tool named `name` (`service.tool`), if any.
pub fn tool_spec(name: &str) -> Option<&'static ToolSpec> {
    REGISTRY.tool_index.get(name).map(|e| &e.spec)
}

/// Every setup operation, in catalogue order.
pub fn setup_specs() -> &'static [SetupSpec] {
    &REGISTRY.setups
}

/// Checks arguments against a tool's schema without running it: `Some(message)` when invalid.
pub fn check_tool_args(name: &str, args: &Value) -> Option<String> {
    tool_entry(name).and_then(|e| e.check(args))
}

/// Checks arguments against a setup operation's schema: `Some(message)` when invalid.
pub fn check_setup_args(name: &str, args: &Value) -> Option<String> {
    setup_entry(name).and_then(|e| e.check(args))
}

pub(crate) fn tool_entry(name: &str) -> Option<&'static Entry<ToolSpec>> {
    REGISTRY.tool_index.get(name)
}

pub(crate) fn setup_entry(name: &str) -> Option<&'static Entry<SetupSpec>> {
    REGISTRY.setup_index.get(name)
}

/// An object schema with `properties`, `required`, and no other keys allowed.
pub(crate) fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A tool spec.
pub(crate) fn tool(
    name: &str,
    kind: EffectKind,
    tier: HarmTier,
    description: &str,
    properties: Value,
    required: &[&str],
) -> ToolSpec {
    let domain = name.split_once('.').map_or(name, |(s, _)| s).to_string();
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters: object(properties, required),
        effect: Effect { kind, domain, tier },
    }
}

/// A setup-operation spec.
pub(crate) fn setup(
    name: &str,
    description: &str,
    properties: Value,
    required: &[&str],
) -> SetupSpec {
    SetupSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters: object(properties, required),
    }
}

/// Schema of a list of email addresses.
pub(crate) fn emails() -> Value {
    json!({"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 1})
}
