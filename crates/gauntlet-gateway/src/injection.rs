//! Injection rules: how tool results are poisoned in the `indirect` and `multi` settings.

use gauntlet_core::{Bindings, Predicate, PredicateError, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::str::FromStr;

/// How a rule transforms a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InjectionMode {
    /// The result is unchanged (records that the rule matched).
    Identity,
    /// The payload follows the result.
    Append,
    /// The payload precedes the result.
    Prefix,
    /// The payload replaces the result.
    Override,
}

impl InjectionMode {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            InjectionMode::Identity => "identity",
            InjectionMode::Append => "append",
            InjectionMode::Prefix => "prefix",
            InjectionMode::Override => "override",
        }
    }
}

impl FromStr for InjectionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "identity" => Ok(InjectionMode::Identity),
            "append" => Ok(InjectionMode::Append),
            "prefix" => Ok(InjectionMode::Prefix),
            "override" => Ok(InjectionMode::Override),
            other => Err(format!(
                "unknown injection mode `{other}`: expected identity, append, prefix or override"
            )),
        }
    }
}

/// A rule could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InjectionError {
    /// The `when` condition does not compile.
    #[error("injection condition: {0}")]
    Condition(PredicateError),
    /// The field pointer is not a JSON pointer.
    #[error("injection field `{0}` must be a JSON pointer starting with `/`")]
    Field(String),
}

/// One injection rule: tool pattern, optional CEL condition on the call's `args` (and raw `result`), mode,
/// payload, optional target field and optional use count.
#[derive(Debug, Clone)]
pub struct InjectionRule {
    /// Tool name or glob (`mail.*`, `*`).
    pub tool: String,
    /// Condition over `args` and `result`.
    pub when: Option<Predicate>,
    /// How the payload is applied.
    pub mode: InjectionMode,
    /// The payload.
    pub text: String,
    /// JSON pointer to a string inside the result; `None` applies to the whole result rendered as text.
    pub field: Option<String>,
    /// How many times the rule may fire per episode.
    pub uses: Option<u32>,
}

impl InjectionRule {
    /// Builds a rule, compiling its condition.
    pub fn new(
        tool: &str,
        when: Option<&str>,
        mode: InjectionMode,
        text: &str,
        field: Option<&str>,
        uses: Option<u32>,
    ) -> Result<InjectionRule, InjectionError> {
        let when = when
            .map(Predicate::compile)
            .transpose()
            .map_err(InjectionError::Condition)?;
        if let Some(f) = field
            && !f.starts_with('/')
        {
            return Err(InjectionError::Field(f.to_string()));
        }
        Ok(InjectionRule {
            tool: tool.to_string(),
            when,
            mode,
            text: text.to_string(),
            field: field.map(str::to_string),
            uses,
        })
    }

    /// Whether the rule applies to this call and raw result. A condition that fails to evaluate does not
    /// match (the injection simply does not happen; lint catches such conditions).
    pub fn matches(&self, call: &ToolCall, raw: &Value) -> bool {
        if !glob(&self.tool, &call.tool) {
            return false;
        }
        match &self.when {
            None => true,
            Some(p) => {
                let mut b = Bindings::new();
                b.json("args", &call.args).json("result", raw);
                p.eval_bool(&b).unwrap_or(false)
            }
        }
    }

    /// The observed result for a raw result.
    pub fn apply(&self, raw: &Value) -> Value {
        apply(self.mode, &self.text, self.field.as_deref(), raw)
    }
}

pub use gauntlet_core::tool::glob;

/// Renders a result as the text an agent would read.
pub fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text `mode` makes of `original` with the payload `text`.
pub fn transform(mode: InjectionMode, text: &str, original: &str) -> String {
    match mode {
        InjectionMode::Identity => original.to_string(),
        InjectionMode::Append => format!("{original}\n\n{text}"),
        InjectionMode::Prefix => format!("{text}\n\n{original}"),
        InjectionMode::Override => text.to_string(),
    }
}

/// Applies a mode to a raw result. With a `field` pointing at a string, only that string changes and the
/// result keeps its structure; otherwise (or if the field is absent or not a string) the whole result is
/// rendered as text first.
pub fn apply(mode: InjectionMode, text: &str, field: Option<&str>, raw: &Value) -> Value {
    if mode == InjectionMode::Identity {
        return raw.clone();
    }
    if let Some(ptr) = field {
        let mut out = raw.clone();
        if let Some(Value::String(s)) = out.pointer_mut(ptr) {
            *s = transform(mode, text, s);
            return out;
        }
    }
    Value::String(transform(mode, text, &render(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn globs() {
        assert!(glob("mail.*", "mail.read"));
        assert!(glob("*", "bank.transfer"));
        assert!(glob("*.read", "mail.read"));
        assert!(!glob("mail.*", "drive.read"));
        assert!(glob("mail.read", "mail.read"));
        assert!(!glob("mail.rea", "mail.read"));
    }

    #[test]
    fn field_injection_keeps_structure() {
        let raw = json!({"id": "m1", "body": "hello"});
        let v = apply(InjectionMode::Prefix, "X", Some("/body"), &raw);
        assert_eq!(v, json!({"id": "m1", "body": "X\n\nhello"}));
        // A missing field falls back to whole-result text.
        let v = apply(InjectionMode::Append, "X", Some("/nope"), &raw);
        assert!(v.as_str().is_some_and(|s| s.ends_with("\n\nX")));
    }

    #[test]
    fn condition_selects_calls() {
        let r = InjectionRule::new(
            "mail.read",
            Some(r#"args.id == "m2""#),
            InjectionMode::Append,
            "t",
            None,
            None,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let c = |id: &str| ToolCall {
            id: "c".into(),
            tool: "mail.read".into(),
            args: json!({"id": id}),
        };
        assert!(r.matches(&c("m2"), &json!({})));
        assert!(!r.matches(&c("m1"), &json!({})));
        assert!(
            InjectionRule::new(
                "x",
                Some("args.id =="),
                InjectionMode::Append,
                "t",
                None,
                None
            )
            .is_err()
        );
        assert!(
            InjectionRule::new("x", None, InjectionMode::Append, "t", Some("body"), None).is_err()
        );
    }

    fn arb_result() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[ -~]{0,20}".prop_map(Value::String),
            ("[ -~]{0,20}", "[a-z]{1,6}").prop_map(|(b, k)| json!({"id": k, "body": b})),
            prop::collection::vec("[ -~]{0,8}", 0..4).prop_map(|v| json!(v)),
            any::<i64>().prop_map(|i| json!(i)),
        ]
    }

    proptest! {
        #[test]
        fn identity_never_changes(raw in arb_result(), text in "[ -~]{0,20}") {
            prop_assert_eq!(apply(InjectionMode::Identity, &text, None, &raw), raw.clone());
            prop_assert_eq!(apply(InjectionMode::Identity, &text, Some("/body"), &raw), raw);
        }

        #[test]
        fn append_keeps_original_then_payload(raw in arb_result(), text in "[ -~]{1,20}") {
            let out = render(&apply(InjectionMode::Append, &text, None, &raw));
            let original = render(&raw);
            prop_assert!(out.starts_with(&original));
            prop_assert!(out.ends_with(&text));
            prop_assert_eq!(out.len(), original.len() + 2 + text.len());
        }

        #[test]
        fn prefix_puts_payload_first(raw in arb_result(), text in "[ -~]{1,20}") {
            let out = render(&apply(InjectionMode::Prefix, &text, None, &raw));
            prop_assert!(out.starts_with(&text));
            prop_assert!(out.ends_with(&render(&raw)));
        }

        #[test]
        fn override_replaces(raw in arb_result(), text in "[ -~]{0,20}") {
            prop_assert_eq!(apply(InjectionMode::Override, &text, None, &raw), Value::String(text.clone()));
        }

        #[test]
        fn field_modes_touch_only_the_field(body in "[ -~]{0,20}", text in "[ -~]{1,20}", mode in prop_oneof![Just(InjectionMode::Append), Just(InjectionMode::Prefix), Just(InjectionMode::Override)]) {
            let raw = json!({"id": "m1", "body": body});
            let out = apply(mode, &text, Some("/body"), &raw);
            prop_assert_eq!(&out["id"], &json!("m1"));
            let b = out["body"].as_str().unwrap_or_default();
            prop_assert!(b.contains(&text));
        }
    }
}
