//! The defense interface: `prepare(task context) → policy` once per task, then `decide(policy, proposed
//! call, history) → allow | deny(reason)` per call, plus the axes a defense declares it can constrain — and the
//! built-in defenses: `allow-all`, `deny-all`, `tool-allowlist`, `exact-args`, `policy:FILE` (per-tool CEL rules),
//! `external:` (a process speaking JSON lines, or an HTTP endpoint) and the model-based `tool-filter:MODEL` and
//! `alignment-check:MODEL`.
//!
//! The same defense is consulted by the gateway during `run` (what it *did* allow) and by the privilege job
//! (what it *would* allow).

pub mod baseline;
pub mod external;
pub mod model;
pub mod policy;

pub use baseline::{AllowAll, DenyAll, ExactArgs, ToolAllowlist};
pub use external::External;
pub use model::{AlignmentCheck, ModelLink, ToolFilter};
pub use policy::PolicyFile;

use gauntlet_core::{Decision, GatewayEvent, ToolCall, ToolSpec};
use serde::Serialize;
use std::fmt;

/// What a defense knows about the task when it prepares its policy.
#[derive(Debug, Clone, Copy)]
pub struct TaskContext<'a> {
    /// The case (task) id.
    pub case_id: &'a str,
    /// The user's task, as the benign user would state it.
    pub prompt: &'a str,
    /// The calls the task needs (the solution plan).
    pub solution: &'a [ToolCall],
    /// Every tool the agent can call.
    pub tools: &'a [ToolSpec],
}

/// A defense failed (could not prepare, or could not decide). The episode is errored, never read as safe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("defense {defense}: {message}")]
pub struct DefenseError {
    /// The defense's name.
    pub defense: String,
    /// What went wrong.
    pub message: String,
}

/// The axes along which a defense says it constrains calls; scores on undeclared axes read N/A.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Axes {
    /// Which tools may be called.
    pub tool: bool,
    /// Which arguments a call may carry.
    pub parameter: bool,
    /// In which order, and how often, calls may come.
    pub sequence: bool,
    /// Where argument values may come from (trusted input vs tool output).
    pub provenance: bool,
}

impl Axes {
    /// Every axis.
    pub const ALL: Axes = Axes {
        tool: true,
        parameter: true,
        sequence: true,
        provenance: true,
    };
    /// No axis.
    pub const NONE: Axes = Axes {
        tool: false,
        parameter: false,
        sequence: false,
        provenance: false,
    };

    /// Parses names (`tool`, `parameter`, `sequence`, `provenance`).
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Axes, String> {
        let mut a = Axes::NONE;
        for n in names {
            match n.trim() {
                "tool" => a.tool = true,
                "parameter" => a.parameter = true,
                "sequence" => a.sequence = true,
                "provenance" => a.provenance = true,
                other => {
                    return Err(format!(
                        "unknown axis `{other}`: expected tool, parameter, sequence or provenance"
                    ));
                }
            }
        }
        Ok(a)
    }

    /// Whether the named axis is declared.
    pub fn has(&self, axis: &str) -> bool {
        match axis {
            "tool" => self.tool,
            "parameter" => self.parameter,
            "sequence" => self.sequence,
            "provenance" => self.provenance,
            _ => false,
        }
    }
}

/// A prepared policy: decides each proposed call given the calls already executed.
pub trait Policy: Send + Sync {
    /// Allow or deny `call`; `history` holds the episode's earlier gateway events. An error means the defense
    /// could not decide (a crashed external process): the caller must not read it as a denial.
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Result<Decision, DefenseError>;

    /// Decides many calls at once (each with its own history), in order. The default asks one by one; a
    /// process-backed policy pipelines them.
    fn decide_batch(
        &self,
        calls: &[(ToolCall, &[GatewayEvent])],
    ) -> Result<Vec<Decision>, DefenseError> {
        calls.iter().map(|(c, h)| self.decide(c, h)).collect()
    }
}

/// A defense: prepares one policy per task.
pub trait Defense: Send + Sync + fmt::Debug {
    /// Name used in reports (`allow-all`, `policy:rules.yaml`, …).
    fn name(&self) -> &str;
    /// The axes it declares it can constrain.
    fn axes(&self) -> Axes;
    /// Prepares the policy for one task.
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError>;
}

/// A policy that allows everything, for callers with no defense in the path.
pub fn allow_all_policy() -> Box<dyn Policy> {
    Box::new(baseline::Constant(true))
}

/// Builds the model of a model-based defense from a model spec (`openai/gpt-4.1-mini`); the error says why not.
pub type ModelResolver<'a> = dyn Fn(&str) -> Result<ModelLink, String> + 'a;

/// The model-based defenses' spec prefixes.
pub const MODEL_DEFENSES: [&str; 2] = ["tool-filter:", "alignment-check:"];

/// Whether a defense spec names a model-based defense (it needs the model layer).
pub fn is_model_defense(spec: &str) -> bool {
    MODEL_DEFENSES.iter().any(|p| spec.starts_with(p))
}

/// Builds a defense from its spec: `allow-all`, `deny-all`, `tool-allowlist`, `exact-args`, `policy:FILE`,
/// `external:COMMAND ARGS…` (JSON lines on stdin/stdout), `external:http(s)://URL`, or `tool-filter:MODEL` and
/// `alignment-check:MODEL`, whose model `models` builds. An external defense's answers are awaited at most
/// `timeout` each.
pub fn from_spec(
    spec: &str,
    models: &ModelResolver<'_>,
    timeout: std::time::Duration,
) -> Result<Box<dyn Defense>, DefenseError> {
    let err = |m: String| DefenseError {
        defense: spec.to_string(),
        message: m,
    };
    match spec {
        "allow-all" => Ok(Box::new(AllowAll)),
        "deny-all" => Ok(Box::new(DenyAll)),
        "tool-allowlist" => Ok(Box::new(ToolAllowlist)),
        "exact-args" => Ok(Box::new(ExactArgs)),
        _ => {
            if let Some(path) = spec.strip_prefix("policy:") {
                return PolicyFile::load(std::path::Path::new(path))
                    .map(|p| Box::new(p) as Box<dyn Defense>);
            }
            if let Some(target) = spec.strip_prefix("external:") {
                return External::start_with(target, timeout)
                    .map(|p| Box::new(p) as Box<dyn Defense>);
            }
            if let Some(m) = spec.strip_prefix("tool-filter:") {
                let link = models(m).map_err(err)?;
                return Ok(Box::new(ToolFilter::new(m, link)));
            }
            if let Some(m) = spec.strip_prefix("alignment-check:") {
                let link = models(m).map_err(err)?;
                return Ok(Box::new(AlignmentCheck::new(m, link)));
            }
            Err(err("unknown defense: expected allow-all, deny-all, tool-allowlist, exact-args, policy:FILE, external:COMMAND|URL, tool-filter:MODEL or alignment-check:MODEL".into()))
        }
    }
}

/// The built-in defense names (without the file- or process-based ones).
pub const BASELINES: [&str; 4] = ["allow-all", "deny-all", "tool-allowlist", "exact-args"];
