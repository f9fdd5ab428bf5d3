//! Model specs (`provider/model`) and provider configuration: base URL, key variable, headers, prices.

#[cfg(feature = "http")]
use crate::anthropic::Anthropic;
use crate::error::LlmError;
#[cfg(feature = "http")]
use crate::openai::OpenAiCompatible;
#[cfg(feature = "http")]
use crate::types::ChatModel;
use serde::{Deserialize, Serialize};
#[cfg(feature = "http")]
use std::sync::Arc;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OpenAI-compatible chat completions.
    Openai,
    /// Anthropic messages.
    Anthropic,
}

/// How to reach a provider. Built-in providers have defaults; any field can be overridden in config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire protocol (default: openai, or anthropic for the `anthropic` provider).
    pub protocol: Option<Protocol>,
    /// Base URL (before `/chat/completions` or `/v1/messages`).
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (the key itself is never configured or stored).
    pub api_key_env: Option<String>,
    /// Extra request headers (no secrets: use `api_key_env`).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// USD per million prompt tokens.
    pub price_in: Option<f64>,
    /// USD per million completion tokens.
    pub price_out: Option<f64>,
}

/// A parsed `provider/model` spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// Provider (`openai`, `anthropic`, `ollama`, or a configured name).
    pub provider: String,
    /// Model name as the provider knows it (may itself contain `/`, as OpenRouter's do).
    pub model: String,
}

impl ModelSpec {
    /// Parses `provider/model`.
    pub fn parse(s: &str) -> Result<ModelSpec, LlmError> {
        match s.split_once('/') {
            Some((p, m)) if !p.is_empty() && !m.is_empty() => Ok(ModelSpec {
                provider: p.to_string(),
                model: m.to_string(),
            }),
            _ => Err(LlmError::Config(format!(
                "model `{s}`: expected `provider/model`, e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5, ollama/llama3.1"
            ))),
        }
    }

    /// `provider/model`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }
}

/// The defaults of the built-in providers: protocol, base URL, key variable — with the base URLs and the
/// organisation the official SDKs read from the environment (`OPENAI_BASE_URL` or `OPENAI_API_BASE`,
/// `OPENAI_ORG_ID`, `ANTHROPIC_BASE_URL`). A base URL in the config file still wins.
pub fn builtin_provider(name: &str) -> Option<ProviderConfig> {
    builtin_provider_with(name, &crate::env::var)
}

/// [`builtin_provider`] with the environment given as a lookup (for tests).
pub fn builtin_provider_with(
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ProviderConfig> {
    let from_env = |vars: &[&str]| {
        vars.iter()
            .filter_map(|v| env(v))
            .map(|v| v.trim().to_string())
            .find(|v| !v.is_empty())
    };
    let (protocol, url, key, url_vars): (_, _, _, &[&str]) = match name {
        "openai" => (
            Protocol::Openai,
            "https://api.openai.com/v1",
            Some("OPENAI_API_KEY"),
            &["OPENAI_BASE_URL", "OPENAI_API_BASE"],
        ),
        "anthropic" => (
            Protocol::Anthropic,
            "https://api.anthropic.com",
            Some("ANTHROPIC_API_KEY"),
            &["ANTHROPIC_BASE_URL"],
        ),
        "ollama" => (Protocol::Openai, "http://127.0.0.1:11434/v1", None, &[]),
        "openrouter" => (
            Protocol::Openai,
            "https://openrouter.ai/api/v1",
            Some("OPENROUTER_API_KEY"),
            &[],
        ),
        "lmstudio" => (Protocol::Openai, "http://127.0.0.1:1234/v1", None, &[]),
        "vllm" => (Protocol::Openai, "http://127.0.0.1:8000/v1", None, &[]),
        "llamacpp" => (Protocol::Openai, "http://127.0.0.1:8080/v1", None, &[]),
        _ => return None,
    };
    let mut headers = vec![];
    if name == "openai"
        && let Some(org) = from_env(&["OPENAI_ORG_ID", "OPENAI_ORGANIZATION"])
    {
        headers.push(("OpenAI-Organization".to_string(), org));
    }
    Some(ProviderConfig {
        protocol: Some(protocol),
        base_url: Some(from_env(url_vars).unwrap_or_else(|| url.to_string())),
        api_key_env: key.map(str::to_string),
        headers,
        price_in: None,
        price_out: None,
    })
}

/// Merges a configured provider over the built-in defaults (configured fields win).
pub fn resolve(
    provider: &str,
    configured: Option<&ProviderConfig>,
) -> Result<ProviderConfig, LlmError> {
    let base = builtin_provider(provider);
    let merged = match (base, configured) {
        (None, None) => {
            return Err(LlmError::Config(format!(
                "unknown provider `{provider}`: built-in providers are openai, anthropic, ollama, openrouter, lmstudio, vllm, llamacpp; \
                 configure others with a base_url in the config file (providers.{provider}.base_url)"
            )));
        }
        (Some(b), None) => b,
        (None, Some(c)) => c.clone(),
        (Some(b), Some(c)) => ProviderConfig {
            protocol: c.protocol.or(b.protocol),
            base_url: c.base_url.clone().or(b.base_url),
            api_key_env: c.api_key_env.clone().or(b.api_key_env),
            headers: if c.headers.is_empty() {
                b.headers
            } else {
                c.headers.clone()
            },
            price_in: c.price_in.or(b.price_in),
            price_out: c.price_out.or(b.price_out),
        },
    };
    if merged.base_url.is_none() {
        return Err(LlmError::Config(format!(
            "provider `{provider}` has no base_url: set providers.{provider}.base_url in the config file"
        )));
    }
    Ok(merged)
}

#[cfg(feature = "http")]
/// Builds a provider client for a spec. The API key is read from the environment now; a missing variable
/// is an error only for providers that name one.
pub fn build_model(spec: &ModelSpec, cfg: &ProviderConfig) -> Result<Arc<dyn ChatModel>, LlmError> {
    let url = cfg.base_url.clone().unwrap_or_default();
    let key = match &cfg.api_key_env {
        None => None,
        Some(var) => match crate::env::var(var) {
            Some(k) if !k.is_empty() => Some(k),
            _ => {
                return Err(LlmError::Config(format!(
                    "model {}: the API key variable {var} is not set",
                    spec.name()
                )));
            }
        },
    };
    let name = spec.name();
    Ok(match cfg.protocol.unwrap_or(Protocol::Openai) {
        Protocol::Openai => Arc::new(OpenAiCompatible::new(
            &name,
            &spec.model,
            &url,
            key,
            cfg.headers.clone(),
        )?),
        Protocol::Anthropic => Arc::new(Anthropic::new(
            &name,
            &spec.model,
            &url,
            key,
            cfg.headers.clone(),
        )?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_environment_variables_set_the_base_url_and_organisation() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let url = |name: &str, e: &dyn Fn(&str) -> Option<String>| {
            builtin_provider_with(name, e).and_then(|p| p.base_url)
        };
        let none = env(&[]);
        assert_eq!(
            url("openai", &none).as_deref(),
            Some("https://api.openai.com/v1")
        );
        let base = env(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]);
        assert_eq!(
            url("openai", &base).as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        let legacy = env(&[("OPENAI_BASE_URL", " "), ("OPENAI_API_BASE", "http://h/v1")]);
        assert_eq!(url("openai", &legacy).as_deref(), Some("http://h/v1"));
        let anthropic = env(&[("ANTHROPIC_BASE_URL", "http://a")]);
        assert_eq!(url("anthropic", &anthropic).as_deref(), Some("http://a"));
        assert_eq!(
            url("ollama", &base).as_deref(),
            Some("http://127.0.0.1:11434/v1")
        );
        let org = env(&[("OPENAI_ORG_ID", "org-1")]);
        let p = builtin_provider_with("openai", &org).unwrap_or_else(|| panic!("openai"));
        assert_eq!(
            p.headers,
            vec![("OpenAI-Organization".to_string(), "org-1".to_string())]
        );
    }

    #[test]
    fn specs_parse_and_resolve() {
        assert_eq!(
            ModelSpec::parse("openrouter/meta-llama/llama-3.1-8b").map(|s| s.model),
            Ok("meta-llama/llama-3.1-8b".to_string())
        );
        assert!(ModelSpec::parse("gpt-4").is_err());
        let o = resolve("ollama", None).unwrap_or_default();
        assert_eq!(o.api_key_env, None);
        assert!(
            resolve("acme", None).is_err_and(|e| e.to_string().contains("providers.acme.base_url"))
        );
        let c = ProviderConfig {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve("acme", Some(&c)).ok().and_then(|c| c.base_url),
            Some("http://127.0.0.1:9/v1".to_string())
        );
        let c = ProviderConfig {
            price_in: Some(0.4),
            ..Default::default()
        };
        let r = resolve("openai", Some(&c)).unwrap_or_default();
        assert_eq!(
            (r.price_in, r.api_key_env.as_deref()),
            (Some(0.4), Some("OPENAI_API_KEY"))
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_missing_key_is_named() {
        let spec = ModelSpec::parse("openai/gpt-x").unwrap_or_else(|e| panic!("{e}"));
        let cfg = ProviderConfig {
            api_key_env: Some("GAUNTLET_TEST_SURELY_UNSET_KEY".into()),
            base_url: Some("http://127.0.0.1:1".into()),
            ..Default::default()
        };
        let e = build_model(&spec, &cfg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("GAUNTLET_TEST_SURELY_UNSET_KEY is not set"),
            "{e}"
        );
    }
}
