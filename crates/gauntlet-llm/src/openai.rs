//! The OpenAI-compatible chat-completions provider (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio,
//! OpenRouter, the Gauntlet mock, …). Parsing is lenient: compatible servers omit fields, send arguments as
//! objects rather than strings, or add fields of their own.

use crate::error::LlmError;
use crate::types::{
    ChatModel, ChatRequest, ChatResponse, ModelFuture, Role, ToolCallOut, Usage, decode_tool_name,
    encode_tool_name,
};
use serde_json::{Value, json};
use std::time::Duration;

/// A chat-completions endpoint.
#[derive(Debug)]
pub struct OpenAiCompatible {
    name: String,
    model: String,
    url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    client: reqwest::Client,
    /// Encoded `tools` arrays of recent requests, keyed by the tool list they encode (held, so the key's
    /// address cannot be reused while cached). Agents send the same tools on every step.
    tools_json: std::sync::Mutex<Vec<EncodedTools>>,
}

/// A tool list and its encoded `tools` array.
type EncodedTools = (
    std::sync::Arc<[crate::types::ToolDef]>,
    std::sync::Arc<serde_json::value::RawValue>,
);

/// The request body, with the tools spliced in pre-encoded.
#[derive(serde::Serialize)]
struct Body<'a> {
    #[serde(flatten)]
    rest: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a serde_json::value::RawValue>,
}

/// Reads `Retry-After` (seconds) or OpenAI's `retry-after-ms`.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    if let Some(ms) = get("retry-after-ms") {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// Maps an HTTP failure to an error.
pub(crate) fn http_error(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: &str,
) -> LlmError {
    let body: String = body.chars().take(300).collect();
    match status {
        429 => LlmError::RateLimited {
            retry_after: retry_after(headers),
        },
        500..=599 => LlmError::Server {
            status,
            body,
            retry_after: retry_after(headers),
        },
        // Only a redirect to another origin reaches here (see `same_origin_redirects`).
        300..=399 => LlmError::Http {
            status,
            body: format!(
                "redirected to {}, another origin: not followed, so that the credentials stay with the endpoint configured",
                crate::redirect_origin(headers)
            ),
        },
        _ => LlmError::Http { status, body },
    }
}

/// Sends a request with extra headers and returns its JSON body, mapping HTTP failures, transport failures
/// and bodies that are not JSON to errors the pool knows how to retry.
/// `key` (the API key) and the values of `extra` are redacted from an error's body: a provider may echo what it was
/// sent, and its errors are stored and printed.
pub(crate) async fn send_json(
    mut rb: reqwest::RequestBuilder,
    extra: &[(String, String)],
    key: Option<&str>,
) -> Result<Value, LlmError> {
    for (k, v) in extra {
        rb = rb.header(k, v);
    }
    let resp = rb
        .send()
        .await
        .map_err(|e| LlmError::Connect(crate::error::describe_transport(&e)))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = crate::read_capped(resp).await.map_err(|e| match e {
        crate::ReadError::TooLong(m) => LlmError::Malformed(m),
        crate::ReadError::Transport(m) => LlmError::Connect(m),
    })?;
    if !(200..300).contains(&status) {
        // An error may quote what the request carried; a reply is left as it is (a header value can be an
        // ordinary word of the model's answer).
        let secrets = extra.iter().map(|(_, v)| v.as_str()).chain(key);
        return Err(http_error(
            status,
            &headers,
            &crate::error::redact(&text, secrets),
        ));
    }
    serde_json::from_str(&text).map_err(|e| LlmError::Malformed(format!("invalid JSON: {e}")))
}

pub(crate) fn client() -> Result<reqwest::Client, LlmError> {
    crate::install_crypto();
    reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .redirect(crate::same_origin_redirects())
        .build()
        .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))
}

impl OpenAiCompatible {
    /// An endpoint: `base_url` ends before `/chat/completions` (e.g. `https://api.openai.com/v1`).
    pub fn new(
        name: &str,
        model: &str,
        base_url: &str,
        api_key: Option<String>,
        headers: Vec<(String, String)>,
    ) -> Result<OpenAiCompatible, LlmError> {
        Ok(OpenAiCompatible {
            name: name.to_string(),
            model: model.to_string(),
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
            headers,
            client: client()?,
            tools_json: Default::default(),
        })
    }

    /// The encoded `tools` array of a request, from the cache when the same tool list was seen recently.
    fn tools_json(&self, req: &ChatRequest) -> Option<std::sync::Arc<serde_json::value::RawValue>> {
        if req.tools.is_empty() {
            return None;
        }
        if let Ok(cache) = self.tools_json.lock()
            && let Some((_, j)) = cache
                .iter()
                .find(|(t, _)| std::sync::Arc::ptr_eq(t, &req.tools))
        {
            return Some(j.clone());
        }
        let arr: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": encode_tool_name(&t.name), "description": t.description, "parameters": t.parameters}}))
            .collect();
        let raw: std::sync::Arc<serde_json::value::RawValue> =
            serde_json::value::to_raw_value(&arr).ok()?.into();
        if let Ok(mut cache) = self.tools_json.lock() {
            if cache.len() >= 8 {
                cache.remove(0);
            }
            cache.push((req.tools.clone(), raw.clone()));
        }
        Some(raw)
    }

    /// The request body (everything but the tools, which [`Self::chat`] splices in pre-encoded).
    pub fn body(&self, req: &ChatRequest) -> Value {
        let messages: Vec<Value> = req
            .messages
            .iter()
            .map(|m| match m.role {
                Role::Tool => json!({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}),
                Role::Assistant if !m.tool_calls.is_empty() => json!({
                    "role": "assistant",
                    "content": if m.content.is_empty() { Value::Null } else { Value::String(m.content.clone()) },
                    "tool_calls": m.tool_calls.iter().map(|c| json!({
                        "id": c.id, "type": "function",
                        "function": {"name": encode_tool_name(&c.name), "arguments": c.arguments},
                    })).collect::<Vec<_>>(),
                }),
                r => json!({"role": r, "content": m.content}),
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages});
        if let Some((name, schema)) = &req.response_schema {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": true}});
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = req.max_tokens {
            body["max_tokens"] = json!(m);
        }
        body
    }
}

/// Parses a chat-completions response.
pub fn parse_response(v: &Value) -> Result<ChatResponse, LlmError> {
    let choice = v
        .pointer("/choices/0")
        .ok_or_else(|| LlmError::Malformed("no choices[0] in the response".into()))?;
    let msg = choice
        .get("message")
        .ok_or_else(|| LlmError::Malformed("no choices[0].message".into()))?;
    let content = match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c
                .get("function")
                .ok_or_else(|| LlmError::Malformed(format!("tool_calls[{i}] has no function")))?;
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| LlmError::Malformed(format!("tool_calls[{i}] has no name")))?;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "{}".to_string(),
                Some(other) => other.to_string(),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_string);
            tool_calls.push(ToolCallOut {
                id,
                name: decode_tool_name(name),
                arguments,
            });
        }
    }
    let usage = Usage {
        prompt_tokens: v
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        completion_tokens: v
            .pointer("/usage/completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    };
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok(ChatResponse {
        content,
        tool_calls,
        usage,
        finish_reason,
    })
}

impl ChatModel for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.name
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let rest = self.body(req);
            let tools = self.tools_json(req);
            let mut rb = self.client.post(&self.url).json(&Body {
                rest: &rest,
                tools: tools.as_deref(),
            });
            if let Some(k) = &self.api_key {
                rb = rb.bearer_auth(k);
            }
            let v = send_json(rb, &self.headers, self.api_key.as_deref()).await?;
            parse_response(&v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lenient_responses() {
        let v = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "a", "function": {"name": "mail__send", "arguments": "{\"to\":[\"x@y.test\"]}"}},
            {"function": {"name": "bank__balance", "arguments": {}}}
        ]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}});
        let r = parse_response(&v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.tool_calls[0].name, "mail.send");
        assert_eq!(r.tool_calls[1].arguments, "{}");
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.usage.prompt_tokens, 10);
        assert!(parse_response(&json!({"oops": 1})).is_err());
    }

    #[test]
    fn retry_after_headers() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap_or_else(|_| panic!()));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap_or_else(|_| panic!()));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
    }
}
