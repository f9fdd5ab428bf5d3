//! `policy:FILE`: per-tool allow/deny rules in CEL, in the spirit of Progent's privilege policies.
//!
//! ```yaml
//! axes: [tool, parameter]        # what the policy constrains (default: tool, parameter)
//! default: deny                  # tools without a rule (default: deny)
//! tools:
//!   mail.read: {allow: 'true'}
//!   mail.send:
//!     allow: 'args.to.all(a, a.endsWith("@acme.test"))'
//!     deny: 'args.body.contains("password")'
//!   "bank.*": {allow: 'args.amount <= 100.0'}
//! ```
//!
//! Rules see `tool`, `args`, `history` (earlier calls: `{tool, args, allowed}`) and `task` (`{id, prompt,
//! solution: [{tool, args}]}`). A `deny` that holds wins; otherwise the call needs an `allow` that holds. A rule that
//! cannot be evaluated (a missing key) counts against the call: allow fails, deny holds.

use crate::{Axes, Defense, DefenseError, Policy, TaskContext};
use gauntlet_core::tool::glob;
use gauntlet_core::{Bindings, Decision, GatewayEvent, Predicate, ToolCall};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    axes: Option<Vec<String>>,
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    tools: BTreeMap<String, RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    allow: Option<String>,
    deny: Option<String>,
}

struct Rule {
    pattern: String,
    allow: Option<Predicate>,
    deny: Option<Predicate>,
}

/// A policy file, compiled.
pub struct PolicyFile {
    name: String,
    axes: Axes,
    default_allow: bool,
    rules: Arc<Vec<Rule>>,
}

impl std::fmt::Debug for PolicyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyFile")
            .field("name", &self.name)
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl PolicyFile {
    /// Loads and compiles a policy file; errors name the file, and the rule and position for CEL.
    pub fn load(path: &Path) -> Result<PolicyFile, DefenseError> {
        let name = format!("policy:{}", path.display());
        let err = |m: String| DefenseError {
            defense: name.clone(),
            message: m,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
        PolicyFile::parse(&name, &text)
    }

    /// Compiles a policy from its YAML text.
    pub fn parse(name: &str, text: &str) -> Result<PolicyFile, DefenseError> {
        let err = |m: String| DefenseError {
            defense: name.to_string(),
            message: m,
        };
        let raw: RawPolicy = serde_saphyr::from_str(text).map_err(|e| {
            let at = e
                .location()
                .map_or(String::new(), |l| format!("{}:{}: ", l.line(), l.column()));
            err(format!(
                "{at}{}",
                e.without_snippet()
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("invalid YAML")
            ))
        })?;
        let axes = match raw.axes {
            None => Axes {
                tool: true,
                parameter: true,
                ..Axes::NONE
            },
            Some(a) => {
                Axes::parse(a.iter().map(String::as_str)).map_err(|e| err(format!("axes: {e}")))?
            }
        };
        let default_allow = match raw.default.as_deref() {
            None | Some("deny") => false,
            Some("allow") => true,
            Some(other) => return Err(err(format!("default: `{other}` must be allow or deny"))),
        };
        let compile = |tool: &str,
                       which: &str,
                       src: &Option<String>|
         -> Result<Option<Predicate>, DefenseError> {
            src.as_deref()
                .map(Predicate::compile)
                .transpose()
                .map_err(|e| err(format!("tools.{tool}.{which}: CEL does not compile: {e}")))
        };
        let mut rules = Vec::new();
        for (pattern, r) in &raw.tools {
            if r.allow.is_none() && r.deny.is_none() {
                return Err(err(format!(
                    "tools.{pattern}: give `allow`, `deny` or both"
                )));
            }
            rules.push(Rule {
                pattern: pattern.clone(),
                allow: compile(pattern, "allow", &r.allow)?,
                deny: compile(pattern, "deny", &r.deny)?,
            });
        }
        // Exact names before globs, so a specific rule overrides a family one.
        rules.sort_by_key(|r| r.pattern.contains('*'));
        Ok(PolicyFile {
            name: name.to_string(),
            axes,
            default_allow,
            rules: Arc::new(rules),
        })
    }
}

struct Prepared {
    rules: Arc<Vec<Rule>>,
    default_allow: bool,
    task: Value,
}

impl Policy for Prepared {
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Result<Decision, DefenseError> {
        let Some(rule) = self.rules.iter().find(|r| glob(&r.pattern, &call.tool)) else {
            return Ok(if self.default_allow {
                Decision::Allow
            } else {
                Decision::Deny {
                    reason: format!("policy: no rule allows {}", call.tool),
                }
            });
        };
        let hist: Vec<Value> = history.iter().map(|e| json!({"tool": e.call.tool, "args": e.call.args, "allowed": e.decision.allowed()})).collect();
        let mut b = Bindings::new();
        b.string("tool", &call.tool)
            .json("args", &call.args)
            .owned("history", Value::Array(hist))
            .json("task", &self.task);
        if let Some(d) = &rule.deny {
            match d.eval_bool(&b) {
                Ok(false) => {}
                Ok(true) => {
                    return Ok(Decision::Deny {
                        reason: format!("policy {}: deny rule holds: {}", rule.pattern, d.source()),
                    });
                }
                Err(e) => {
                    return Ok(Decision::Deny {
                        reason: format!(
                            "policy {}: deny rule cannot be evaluated ({e}); denied",
                            rule.pattern
                        ),
                    });
                }
            }
        }
        Ok(match &rule.allow {
            None => Decision::Allow,
            Some(a) => match a.eval_bool(&b) {
                Ok(true) => Decision::Allow,
                Ok(false) => Decision::Deny {
                    reason: format!(
                        "policy {}: allow rule does not hold: {}",
                        rule.pattern,
                        a.source()
                    ),
                },
                Err(e) => Decision::Deny {
                    reason: format!(
                        "policy {}: allow rule cannot be evaluated ({e}); denied",
                        rule.pattern
                    ),
                },
            },
        })
    }
}

impl Defense for PolicyFile {
    fn name(&self) -> &str {
        &self.name
    }
    fn axes(&self) -> Axes {
        self.axes
    }
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        let solution: Vec<Value> = task
            .solution
            .iter()
            .map(|c| json!({"tool": c.tool, "args": c.args}))
            .collect();
        Ok(Box::new(Prepared {
            rules: self.rules.clone(),
            default_allow: self.default_allow,
            task: json!({"id": task.case_id, "prompt": task.prompt, "solution": solution}),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"
default: deny
tools:
  mail.read: {allow: 'true'}
  mail.send:
    allow: 'args.to.all(a, a.endsWith("@acme.test"))'
    deny: 'args.body.contains("password")'
  "bank.*": {allow: 'args.amount <= 100.0'}
  bank.balance: {allow: 'true'}
  drive.share: {allow: 'task.solution.exists(c, c.tool == "drive.share" && c.args == args)'}
"#;

    fn allowed(tool: &str, args: Value) -> bool {
        let p = PolicyFile::parse("policy:t", RULES).unwrap_or_else(|e| panic!("{e}"));
        let sol = [ToolCall {
            id: "s".into(),
            tool: "drive.share".into(),
            args: json!({"id": "f1", "email": "a@acme.test", "role": "reader"}),
        }];
        let ctx = TaskContext {
            case_id: "c",
            prompt: "p",
            solution: &sol,
            tools: &[],
        };
        let call = ToolCall {
            id: "c".into(),
            tool: tool.into(),
            args,
        };
        p.prepare(&ctx)
            .and_then(|p| p.decide(&call, &[]))
            .map(|d| d.allowed())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn rules_allow_deny_and_default() {
        assert!(allowed("mail.read", json!({"id": "m1"})));
        assert!(allowed(
            "mail.send",
            json!({"to": ["bo@acme.test"], "body": "hi"})
        ));
        assert!(!allowed(
            "mail.send",
            json!({"to": ["eve@evil.test"], "body": "hi"})
        ));
        assert!(!allowed(
            "mail.send",
            json!({"to": ["bo@acme.test"], "body": "my password"})
        ));
        assert!(allowed(
            "bank.transfer",
            json!({"amount": 50.0, "iban": "X"})
        ));
        assert!(!allowed(
            "bank.transfer",
            json!({"amount": 5000.0, "iban": "X"})
        ));
        // The exact rule wins over the glob; a missing key denies.
        assert!(allowed("bank.balance", json!({})));
        assert!(!allowed("bank.schedule", json!({"iban": "X"})));
        assert!(allowed(
            "drive.share",
            json!({"id": "f1", "email": "a@acme.test", "role": "reader"})
        ));
        assert!(!allowed(
            "drive.share",
            json!({"id": "f1", "email": "eve@evil.test", "role": "reader"})
        ));
        assert!(!allowed("shell.run", json!({"command": "ls"})));
    }

    #[test]
    fn broken_policies_are_reported() {
        let e = PolicyFile::parse("policy:t", "tools:\n  mail.send: {allow: 'args.to =='}\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("tools.mail.send.allow: CEL does not compile"),
            "{e}"
        );
        let e = PolicyFile::parse("policy:t", "tool:\n  x: {allow: 'true'}\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("1:1") && e.contains("unknown field"), "{e}");
        let e = PolicyFile::parse("policy:t", "axes: [tools]\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("unknown axis `tools`"), "{e}");
    }
}
