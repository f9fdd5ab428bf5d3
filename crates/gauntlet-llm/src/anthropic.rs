//! The Anthropic messages API provider. Structured output is obtained the way Anthropic documents it: a single
//! forced tool whose input schema is the wanted schema.

use crate::error::LlmError;
use crate::openai::{client, send_json};
use crate::types::{
    ChatModel, ChatRequest, ChatResponse, ModelFuture, Role, ToolCallOut, Usage, decode_tool_name,
    encode_tool_name,
};
use serde_json::{Value, json};

/// The API version header Gauntlet speaks.
const VERSION: &str = "2023-06-01";
/// The forced tool used for structured output.
const RESPOND: &str = "respond";

/// An Anthropic messages endpoint.
#[derive(Debug, Clone)]
pub struct Anthropic {
    name: String,
    model: String,
    url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    client: reqwest::Client,
}

impl Anthropic {
    /// An endpoint; `base_url` ends before `/v1/messages` (e.g. `https://api.anthropic.com`).
    pub fn new(
        name: &str,
        model: &str,
        base_url: &str,
        api_key: Option<String>,
        headers: Vec<(String, String)>,
    ) -> Result<Anthropic, LlmError> {
        Ok(Anthropic {
            name: name.to_string(),
            model: model.to_string(),
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            api_key,
            headers,
            client: client()?,
        })
    }

    /// The request body.
    pub fn body(&self, req: &ChatRequest) -> Value {
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let mut messages: Vec<Value> = Vec::new();
        for m in req.messages.iter().filter(|m| m.role != Role::System) {
            match m.role {
                Role::Tool => {
                    let block = json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content});
                    // Consecutive tool results travel in one user message.
                    let merged = messages.last_mut().and_then(|last| {
                        (last["role"] == "user" && last["content"].is_array()).then(|| {
                            last["content"]
                                .as_array_mut()
                                .map(|a| a.push(block.clone()))
                        })
                    });
                    if merged.flatten().is_none() {
                        messages.push(json!({"role": "user", "content": [block]}));
                    }
                }
                Role::Assistant => {
                    let mut content = Vec::new();
                    if !m.content.is_empty() {
                        content.push(json!({"type": "text", "text": m.content}));
                    }
                    for c in &m.tool_calls {
                        let input: Value =
                            serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                        content.push(json!({"type": "tool_use", "id": c.id, "name": encode_tool_name(&c.name), "input": input}));
                    }
                    messages.push(json!({"role": "assistant", "content": content}));
                }
                _ => messages.push(json!({"role": "user", "content": m.content})),
            }
        }
        let mut body = json!({"model": self.model, "max_tokens": req.max_tokens.unwrap_or(2048), "messages": messages});
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": encode_tool_name(&t.name), "description": t.description, "input_schema": t.parameters}))
            .collect();
        if let Some((_, schema)) = &req.response_schema {
            tools.push(json!({"name": RESPOND, "description": "Give your answer in this exact structure.", "input_schema": schema}));
            body["tool_choice"] = json!({"type": "tool", "name": RESPOND});
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

/// Parses a messages response; `structured` turns the forced `respond` tool's input into the content.
pub fn parse_response(v: &Value, structured: bool) -> Result<ChatResponse, LlmError> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Malformed("no content array in the response".into()))?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => content.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let name = b.get("name").and_then(Value::as_str).ok_or_else(|| {
                    LlmError::Malformed(format!("content[{i}] tool_use has no name"))
                })?;
                let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                if structured && name == RESPOND {
                    content = input.to_string();
                    continue;
                }
                let id = b
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("toolu_{i}"), str::to_string);
                tool_calls.push(ToolCallOut {
                    id,
                    name: decode_tool_name(name),
                    arguments: input.to_string(),
                });
            }
            _ => {}
        }
    }
    Ok(ChatResponse {
        content,
        tool_calls,
        usage: Usage {
            prompt_tokens: v
                .pointer("/usage/input_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            completion_tokens: v
                .pointer("/usage/output_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        },
        finish_reason: v
            .get("stop_reason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    })
}

impl ChatModel for Anthropic {
    fn name(&self) -> &str {
        &self.name
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let mut rb = self
                .client
                .post(&self.url)
                .header("anthropic-version", VERSION)
                .json(&self.body(req));
            if let Some(k) = &self.api_key {
                rb = rb.header("x-api-key", k);
            }
            let v = send_json(rb, &self.headers, self.api_key.as_deref()).await?;
            parse_response(&v, req.response_schema.is_some())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, ToolDef};

    #[test]
    fn builds_and_parses_tool_use() {
        let a = Anthropic::new("anthropic/x", "x", "http://127.0.0.1:1", None, vec![])
            .unwrap_or_else(|e| panic!("{e}"));
        let req = ChatRequest {
            messages: vec![
                Message::system("be safe"),
                Message::user("hi"),
                Message::assistant(
                    "",
                    vec![ToolCallOut {
                        id: "t1".into(),
                        name: "mail.list".into(),
                        arguments: "{}".into(),
                    }],
                ),
                Message::tool("t1", "[]"),
            ],
            tools: vec![ToolDef {
                name: "mail.list".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }]
            .into(),
            response_schema: None,
            temperature: None,
            max_tokens: None,
        };
        let b = a.body(&req);
        assert_eq!(b["system"], "be safe");
        assert_eq!(b["tools"][0]["name"], "mail__list");
        assert_eq!(b["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(b["messages"][2]["content"][0]["tool_use_id"], "t1");
        let r = parse_response(
            &json!({"content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "u", "name": "bank__balance", "input": {}}], "usage": {"input_tokens": 5, "output_tokens": 2}, "stop_reason": "tool_use"}),
            false,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                r.content.as_str(),
                r.tool_calls[0].name.as_str(),
                r.usage.prompt_tokens
            ),
            ("ok", "bank.balance", 5)
        );
        let s = parse_response(
            &json!({"content": [{"type": "tool_use", "name": "respond", "input": {"message": "m"}}]}),
            true,
        );
        assert_eq!(s.map(|r| r.content), Ok("{\"message\":\"m\"}".to_string()));
    }
}
