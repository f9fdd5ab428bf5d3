//! Tools and calls.

use crate::harm::HarmTier;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a tool only reads or also changes state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EffectKind {
    /// Reads state; never changes it.
    Read,
    /// Changes state (or sends something out of the world).
    Write,
}

/// What a tool does to the world: read or write, the service it acts on, and its base harm tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// Read or write.
    pub kind: EffectKind,
    /// The resource domain: the service name (`mail`, `bank`, …).
    pub domain: String,
    /// The authored base harm tier of any call to this tool.
    pub tier: HarmTier,
}

/// A tool as agents see it: `service.tool` name, description and JSON-Schema parameters, plus its effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Canonical name, `service.tool`.
    pub name: String,
    /// What the tool does, as shown to the agent.
    pub description: String,
    /// JSON Schema (an object schema) for the arguments.
    pub parameters: Value,
    /// Read/write, domain and base harm tier.
    pub effect: Effect,
}

impl ToolSpec {
    /// The service part of the name (`mail` in `mail.send`).
    pub fn service(&self) -> &str {
        self.name
            .split_once('.')
            .map_or(self.name.as_str(), |(s, _)| s)
    }

    /// The names of the required arguments.
    pub fn required_args(&self) -> Vec<&str> {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The required arguments with their schemas, in the order the schema lists its properties.
    pub fn required_properties(&self) -> Vec<(&String, &Value)> {
        let required = self.required_args();
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter(|(n, _)| required.contains(&n.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One proposed call: an id unique in its episode, the canonical tool name and JSON arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id, unique within an episode (`call-1`, …).
    pub id: String,
    /// Canonical tool name, `service.tool`.
    pub tool: String,
    /// Arguments as a JSON object.
    pub args: Value,
}

/// Tool-name patterns: `*` matches any run of characters, everything else literally (`mail.*`, `*.read`, `*`).
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(mut tail) = name.strip_prefix(head) else {
                return false;
            };
            loop {
                if glob(rest, tail) {
                    return true;
                }
                let mut chars = tail.chars();
                if chars.next().is_none() {
                    return false;
                }
                tail = chars.as_str();
            }
        }
    }
}
