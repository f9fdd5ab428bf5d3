//! Provider-neutral chat types.

use crate::error::LlmError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user channel.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text the model produced (it may be invalid:
/// the agent loop reports that back to the model as a tool error, as real runtimes do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallOut {
    /// The provider's call id.
    pub id: String,
    /// Canonical tool name (`service.tool`), decoded from the provider's encoding.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// Tool calls (assistant messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallOut>,
    /// The call this message answers (tool messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: text.into(),
            tool_calls: vec![],
            tool_call_id: None,
        }
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: text.into(),
            tool_calls: vec![],
            tool_call_id: None,
        }
    }

    /// An assistant message, possibly with tool calls.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCallOut>) -> Message {
        Message {
            role: Role::Assistant,
            content: text.into(),
            tool_calls,
            tool_call_id: None,
        }
    }

    /// A tool result answering `call_id`.
    pub fn tool(call_id: impl Into<String>, text: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: text.into(),
            tool_calls: vec![],
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Canonical name (`service.tool`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// A request to a chat model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools offered. Shared: an agent offers the same tools on every step, and providers encode them once.
    #[serde(default, skip_serializing_if = "<[ToolDef]>::is_empty")]
    pub tools: std::sync::Arc<[ToolDef]>,
    /// Structured output: the reply must be a JSON object matching this schema (`name`, `schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<(String, Value)>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Maximum tokens to generate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// Token counts of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Text (for structured output: the JSON text).
    pub content: String,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallOut>,
    /// Token usage.
    #[serde(default)]
    pub usage: Usage,
    /// Why generation stopped, as the provider said.
    #[serde(default)]
    pub finish_reason: String,
}

/// The future a [`ChatModel`] returns.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ChatResponse, LlmError>> + Send + 'a>>;

/// A chat model: one request, one response. Providers implement it; [`crate::Pool`] wraps one with limits,
/// retries, ledger and cache, and implements it too.
pub trait ChatModel: Send + Sync {
    /// The model's display name (`openai/gpt-4.1-mini`).
    fn name(&self) -> &str;
    /// Sends one request.
    fn chat<'a>(&'a self, request: &'a ChatRequest) -> ModelFuture<'a>;
}

/// Encodes a canonical tool name for providers whose function names allow only letters, digits, `_` and `-`
/// (up to 64 characters): `.` becomes `__`. Reversible because canonical names never contain `__`.
pub fn encode_tool_name(name: &str) -> String {
    name.replace('.', "__")
}

/// Decodes [`encode_tool_name`].
pub fn decode_tool_name(name: &str) -> String {
    name.replace("__", ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_round_trip() {
        for n in ["mail.send", "repo.add_deploy_key", "x"] {
            let e = encode_tool_name(n);
            assert!(
                e.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
            assert_eq!(decode_tool_name(&e), n);
        }
    }
}
