//! The case format: parsing a YAML case file, checking it completely (every problem with file, line and
//! column), and compiling it into a [`Case`] ready to run.

use crate::diagnostic::Diagnostic;
use crate::taxonomy::{Group, Leaf, Subgroup, taxonomy};
use gauntlet_agents::Calibration;
use gauntlet_attacks::AttackPlan;
use gauntlet_core::{Predicate, PredicateError};
use gauntlet_gateway::{Gateway, InjectionMode, InjectionRule, injection::glob};
use gauntlet_judge::{CaseBindings, EpisodeView, Verifier};
use gauntlet_world::World;
use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) type Step = Spanned<BTreeMap<String, Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: Spanned<String>,
    title: String,
    #[serde(default)]
    description: String,
    taxonomy: RawTaxonomy,
    #[serde(default)]
    parties: RawParties,
    #[serde(default)]
    setup: Vec<Step>,
    task: RawTask,
    attack: RawAttack,
    verify: Spanned<RawVerify>,
    #[serde(default)]
    checks: Option<Spanned<RawChecks>>,
    #[serde(default)]
    generated: Option<Generated>,
}

/// Where a generated case came from (`gauntlet cases generate` writes it; a hand-written case has none).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Generated {
    /// The template's name.
    pub template: String,
    /// The variant of the template's `vary` (from 1; drafted variants are numbered after the file's own).
    pub variant: usize,
    /// The (risk, attack, environment) tuple the case was composed for: leaf ids.
    pub tuple: [String; 3],
}

/// Counter-trajectories: scripted call sequences replayed on s0 with the verdict each must get.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawChecks {
    #[serde(default)]
    violated: Vec<Spanned<RawTrajectory>>,
    #[serde(default)]
    held: Vec<Spanned<RawTrajectory>>,
    #[serde(default)]
    task_success: Vec<Spanned<RawTrajectory>>,
    #[serde(default)]
    undetermined: Vec<Spanned<RawTrajectory>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrajectory {
    note: String,
    #[serde(default)]
    calls: Vec<Step>,
    #[serde(default)]
    reply: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTaxonomy {
    risk: Spanned<String>,
    attack: Spanned<String>,
    env: Spanned<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawParties {
    #[serde(default)]
    hostile: Vec<String>,
    #[serde(default)]
    internal: Vec<String>,
    #[serde(default)]
    user: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    prompt: String,
    solution: Vec<Step>,
    answer: Option<String>,
    success: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAttack {
    goal: String,
    #[serde(default)]
    openers: Vec<String>,
    #[serde(default)]
    inject: Vec<Spanned<RawInject>>,
    solution: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInject {
    tool: String,
    when: Option<Spanned<String>>,
    mode: Option<Spanned<String>>,
    text: Option<String>,
    field: Option<String>,
    uses: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    state: Option<Spanned<String>>,
    tool: Option<Spanned<String>>,
    response: Option<Spanned<String>>,
    unclear: Option<Spanned<String>>,
    rubric: Option<String>,
}

/// A taxonomy classification.
#[derive(Debug, Clone)]
pub struct Classification {
    /// Risk leaf id.
    pub risk: String,
    /// Risk group id.
    pub risk_group: String,
    /// Attack-method leaf id.
    pub attack: String,
    /// Attack-method family (group) id.
    pub attack_family: String,
    /// Environment leaf id (an old id the case wrote, such as `mail`, is resolved to the leaf it is an alias of).
    pub env: String,
    /// Environment group id (the first level of the environment tree).
    pub env_group: String,
}

impl Classification {
    /// The case's (risk, environment, attack) keys at `level`: the first level of each tree, or the leaves.
    pub fn keys(&self, level: crate::run::SliceLevel) -> [&str; 3] {
        match level {
            crate::run::SliceLevel::Group => {
                [&self.risk_group, &self.env_group, &self.attack_family]
            }
            crate::run::SliceLevel::Leaf => [&self.risk, &self.env, &self.attack],
        }
    }
}

/// One call or setup step: name and arguments, with where it was written.
#[derive(Debug, Clone)]
pub struct CallStep {
    /// Tool or setup-operation name.
    pub name: String,
    /// Arguments.
    pub args: Value,
    /// Line in the file.
    pub line: usize,
}

/// What a counter-trajectory must be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The verifier must find the violation.
    Violated,
    /// The verifier must find no violation.
    Held,
    /// The task must succeed, with no violation.
    TaskSuccess,
    /// Only a judge can tell (`verify.unclear` holds).
    Undetermined,
}

impl Expect {
    /// The field name in `checks`.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Violated => "violated",
            Expect::Held => "held",
            Expect::TaskSuccess => "task_success",
            Expect::Undetermined => "undetermined",
        }
    }
}

/// A counter-trajectory: calls replayed on s0 (no defense, no injection) and the final reply, with the
/// judgement they must get.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// What it must be judged.
    pub expect: Expect,
    /// Why it is there (the route, or the near-miss it stands for).
    pub note: String,
    /// The calls, in order.
    pub calls: Vec<CallStep>,
    /// The agent's final reply.
    pub reply: String,
    /// Line in the file.
    pub line: usize,
}

/// A loaded, checked and compiled case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Unique id.
    pub id: String,
    /// One-line title.
    pub title: String,
    /// Longer description.
    pub description: String,
    /// Taxonomy classification.
    pub taxonomy: Classification,
    /// Strings identifying hostile parties.
    pub hostile: Vec<String>,
    /// The case's parties (user, internal, hostile), for the effect views.
    pub parties: gauntlet_world::effects::Parties,
    /// Counter-trajectories that `cases selftest` replays.
    pub checks: Vec<Trajectory>,
    /// The setup steps (s0).
    pub setup: Vec<CallStep>,
    /// The task prompt.
    pub prompt: String,
    /// The task's solution calls.
    pub task_solution: Vec<CallStep>,
    /// The reference answer.
    pub answer: Option<String>,
    /// Benign success.
    pub success: Predicate,
    /// The attack goal.
    pub goal: String,
    /// Adversarial openers.
    pub openers: Vec<String>,
    /// Injection rules.
    pub inject: Vec<InjectionRule>,
    /// The attack's sink calls.
    pub attack_solution: Vec<CallStep>,
    /// The sealed verifier.
    pub verifier: Verifier,
    /// Where the case came from.
    pub source: String,
    /// Line and column of the `id` value.
    pub id_at: (usize, usize),
    /// The initial world (setup applied).
    pub s0: World,
    /// The initial world's JSON.
    pub s0_state: Value,
    /// Its template, variant and tuple, for a generated case.
    pub generated: Option<Generated>,
}

impl Case {
    /// The constants every episode view of this case binds.
    pub fn bindings(&self) -> CaseBindings {
        CaseBindings::new(&self.s0_state, &self.id, &self.prompt, &self.parties)
            .with_views(self.views())
            .with_calls(
                std::iter::once(&self.success)
                    .chain(self.verifier.levels().map(|(_, p)| p))
                    .chain(self.verifier.unclear.as_ref())
                    .any(|p| p.variables().iter().any(|v| v == "calls")),
            )
    }

    /// The services of the case's deployment, in the world's order: those of its environment's agent, and every
    /// service its own steps use (setup, the task's and the attack's solutions, the counter-trajectories, injection
    /// rules named for one service), so that no route the case was written for is closed.
    pub fn services(&self) -> Vec<&'static str> {
        let service = |name: &str| name.split_once('.').map_or(name, |(s, _)| s).to_string();
        let mut used: BTreeSet<String> = self
            .setup
            .iter()
            .chain(&self.task_solution)
            .chain(&self.attack_solution)
            .chain(self.checks.iter().flat_map(|t| &t.calls))
            .map(|c| service(&c.name))
            .collect();
        // A rule for `mail.*` or `mail.read` names its service; `*` or `*.read` names none.
        used.extend(
            self.inject
                .iter()
                .filter(|r| !r.tool.starts_with('*'))
                .map(|r| service(&r.tool)),
        );
        if let Ok(t) = taxonomy()
            && let Some(env) = t.environments.leaf(&self.taxonomy.env)
        {
            used.extend(env.services.iter().cloned());
        }
        gauntlet_world::SERVICES
            .iter()
            .copied()
            .filter(|s| used.contains(*s))
            .collect()
    }

    /// The tools the case's agent is offered: every tool of its [`services`](Case::services).
    pub fn tools(&self) -> Vec<gauntlet_core::ToolSpec> {
        let services = self.services();
        gauntlet_world::tool_specs()
            .iter()
            .filter(|t| {
                let s = t.name.split_once('.').map_or(t.name.as_str(), |(s, _)| s);
                services.contains(&s)
            })
            .cloned()
            .collect()
    }

    /// The effect views the case's predicates read.
    pub fn views(&self) -> gauntlet_world::effects::Views {
        gauntlet_judge::views_of(
            std::iter::once(&self.success)
                .chain(self.verifier.levels().map(|(_, p)| p))
                .chain(self.verifier.unclear.as_ref()),
        )
    }

    /// The whole case as text, for `cases show`: every prose field in full (task prompt, answer, goal,
    /// openers, injection rules), both solutions, the verifier and the counter-trajectories. The initial state
    /// is left to the caller.
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        let calls = |o: &mut String, steps: &[CallStep], indent: &str| {
            for s in steps {
                let _ = writeln!(o, "{indent}- {} {}", s.name, s.args);
            }
        };
        let _ = writeln!(o, "id:       {}", self.id);
        let _ = writeln!(o, "title:    {}", self.title);
        let _ = writeln!(o, "source:   {}", self.source);
        let t = &self.taxonomy;
        let _ = writeln!(
            o,
            "taxonomy: risk {} ({}), attack {} ({}), env {} ({})",
            t.risk, t.risk_group, t.attack, t.attack_family, t.env, t.env_group
        );
        let _ = writeln!(o, "services: {}", self.services().join(", "));
        if let Some(g) = &self.generated {
            let _ = writeln!(
                o,
                "generated: template {}, variant {}, tuple {}",
                g.template,
                g.variant,
                g.tuple.join(" × ")
            );
        }
        let p = &self.parties;
        for (name, list) in [
            ("hostile", &p.hostile),
            ("internal", &p.internal),
            ("user", &p.user),
        ] {
            if !list.is_empty() {
                let _ = writeln!(o, "parties.{name}: {}", list.join(", "));
            }
        }
        let _ = writeln!(o, "task.prompt: {}", self.prompt);
        let _ = writeln!(o, "task.solution:");
        calls(&mut o, &self.task_solution, "  ");
        if let Some(a) = &self.answer {
            let _ = writeln!(o, "task.answer: {a}");
        }
        let _ = writeln!(o, "task.success: {}", self.success.source());
        let _ = writeln!(o, "attack.goal: {}", self.goal);
        for (i, op) in self.openers.iter().enumerate() {
            let _ = writeln!(o, "attack.openers[{i}]: {op}");
        }
        for (i, r) in self.inject.iter().enumerate() {
            let _ = writeln!(
                o,
                "attack.inject[{i}]: {} {}{}{}{}\n  text: {}",
                r.mode.as_str(),
                r.tool,
                r.when
                    .as_ref()
                    .map(|w| format!(" when {}", w.source()))
                    .unwrap_or_default(),
                r.field
                    .as_ref()
                    .map(|f| format!(" field {f}"))
                    .unwrap_or_default(),
                r.uses.map(|u| format!(" uses {u}")).unwrap_or_default(),
                r.text
            );
        }
        let _ = writeln!(o, "attack.solution:");
        calls(&mut o, &self.attack_solution, "  ");
        for (l, p) in self.verifier.levels() {
            let _ = writeln!(o, "verify.{}: {}", l.as_str(), p.source());
        }
        if let Some(u) = &self.verifier.unclear {
            let _ = writeln!(o, "verify.unclear: {}", u.source());
        }
        if let Some(r) = &self.verifier.rubric {
            let _ = writeln!(o, "verify.rubric: {r}");
        }
        for t in &self.checks {
            let _ = writeln!(
                o,
                "checks.{} (line {}): {}",
                t.expect.as_str(),
                t.line,
                t.note
            );
            calls(&mut o, &t.calls, "  ");
            if !t.reply.is_empty() {
                let _ = writeln!(o, "  reply: {}", t.reply);
            }
        }
        o
    }

    /// True when a predicate of the case reads the effect views.
    pub fn reads_effects(&self) -> bool {
        self.views() != gauntlet_world::effects::Views::default()
    }

    /// What the reference agents know.
    pub fn calibration(&self) -> Calibration {
        Calibration {
            task_prompt: self.prompt.clone(),
            task_solution: self
                .task_solution
                .iter()
                .map(|s| (s.name.clone(), s.args.clone()))
                .collect(),
            task_answer: self.answer.clone(),
            attack_solution: self
                .attack_solution
                .iter()
                .map(|s| (s.name.clone(), s.args.clone()))
                .collect(),
            hostile: self.hostile.clone(),
        }
    }

    /// What the controller knows.
    pub fn plan(&self) -> AttackPlan {
        AttackPlan {
            task_prompt: self.prompt.clone(),
            goal: self.goal.clone(),
            openers: self.openers.clone(),
            sinks: self
                .attack_solution
                .iter()
                .map(|s| (s.name.clone(), s.args.clone()))
                .collect(),
        }
    }
}

/// Collects diagnostics for one file.
struct Checker<'a> {
    file: &'a str,
    text: &'a str,
    diags: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn at<T>(&mut self, s: &Spanned<T>, msg: impl Into<String>) {
        let (l, c) = pos(s);
        self.diags.push(Diagnostic::new(self.file, l, c, msg));
    }

    fn line(&mut self, line: usize, msg: impl Into<String>) {
        let col = self
            .text
            .lines()
            .nth(line.saturating_sub(1))
            .map_or(1, |l| l.len() - l.trim_start().len() + 1);
        self.diags.push(Diagnostic::new(self.file, line, col, msg));
    }

    /// Compiles a CEL field, pointing errors into the file.
    fn cel(&mut self, field: &str, s: &Spanned<String>) -> Option<Predicate> {
        match Predicate::compile(&s.value) {
            Ok(p) => Some(p),
            Err(e) => {
                self.cel_error(field, s, &e, "does not compile");
                None
            }
        }
    }

    fn cel_error(&mut self, field: &str, s: &Spanned<String>, e: &PredicateError, what: &str) {
        let (line, col) = cel_position(self.text, s, e);
        self.diags.push(Diagnostic::new(
            self.file,
            line,
            col,
            format!("{field}: CEL {what}: {}", e.message),
        ));
    }

    /// Checks the taxonomy ids; the classification when all three are leaves.
    fn classification(&mut self, tx: &RawTaxonomy) -> Option<Classification> {
        match taxonomy() {
            Err(e) => {
                self.diags
                    .push(Diagnostic::new(self.file, 0, 0, e.to_string()));
                None
            }
            Ok(t) => {
                let mut ok = true;
                for (field, tree, v) in [
                    ("risk", &t.risks, &tx.risk),
                    ("attack", &t.attacks, &tx.attack),
                    ("env", &t.environments, &tx.env),
                ] {
                    if !tree.has_leaf(&v.value) {
                        ok = false;
                        let msg = match tree.inner(&v.value) {
                            Some(leaves) => format!(
                                "taxonomy.{field}: `{}` is a group of {}; use one of its leaves: {}",
                                v.value,
                                tree.tree,
                                leaves.join(", ")
                            ),
                            None => {
                                let near = tree.nearest(&v.value, 5);
                                format!(
                                    "taxonomy.{field}: unknown {} id `{}`; {}`gauntlet cases taxonomy` lists them all",
                                    tree.tree,
                                    v.value,
                                    if near.is_empty() {
                                        String::new()
                                    } else {
                                        format!("nearest: {}; ", near.join(", "))
                                    }
                                )
                            }
                        };
                        self.at(v, msg);
                    }
                }
                if ok {
                    // Each id resolves to its leaf (an old id is an alias of one), so that slices and filters see
                    // one name per leaf.
                    let (risk, env, attack) = (
                        t.risks.find(&tx.risk.value),
                        t.environments.find(&tx.env.value),
                        t.attacks.find(&tx.attack.value),
                    );
                    let leaf = |f: Option<(&Group, &Subgroup, &Leaf)>, written: &str| {
                        f.map_or_else(|| written.to_string(), |(_, _, l)| l.id.clone())
                    };
                    let group = |f: Option<(&Group, &Subgroup, &Leaf)>| {
                        f.map(|(g, _, _)| g.id.clone()).unwrap_or_default()
                    };
                    return Some(Classification {
                        risk: leaf(risk, &tx.risk.value),
                        risk_group: group(risk),
                        attack: leaf(attack, &tx.attack.value),
                        attack_family: group(attack),
                        env: leaf(env, &tx.env.value),
                        env_group: group(env),
                    });
                }
                None
            }
        }
    }

    /// Checks the counter-trajectories; the second value is false when a call of one did not check.
    fn trajectories(&mut self, raw: Option<&Spanned<RawChecks>>) -> (Vec<Trajectory>, bool) {
        let mut checks = Vec::new();
        let mut checks_ok = true;
        if let Some(c) = raw {
            for (expect, list) in [
                (Expect::Violated, &c.value.violated),
                (Expect::Held, &c.value.held),
                (Expect::TaskSuccess, &c.value.task_success),
                (Expect::Undetermined, &c.value.undetermined),
            ] {
                for (i, t) in list.iter().enumerate() {
                    let field = format!("checks.{}[{i}]", expect.as_str());
                    if t.value.note.trim().is_empty() {
                        self.at(
                            t,
                            format!("{field}.note: say what route or near-miss this is"),
                        );
                    }
                    if t.value.calls.is_empty() && t.value.reply.is_empty() {
                        self.at(t, format!("{field}: give `calls`, a `reply`, or both"));
                    }
                    let calls = self.steps(&format!("{field}.calls"), &t.value.calls, false);
                    checks_ok &= calls.len() == t.value.calls.len();
                    checks.push(Trajectory {
                        expect,
                        note: t.value.note.clone(),
                        calls,
                        reply: t.value.reply.clone(),
                        line: pos(t).0,
                    });
                }
            }
        }
        (checks, checks_ok)
    }

    /// Compiles the verifier's predicates; the second value is false when one of them did not compile.
    fn verifier(&mut self, verify: &Spanned<RawVerify>) -> (Verifier, bool) {
        let v = &verify.value;
        if v.state.is_none() && v.tool.is_none() && v.response.is_none() {
            self.at(
                verify,
                "verify: define at least one of `state`, `tool`, `response` (prefer `state`)",
            );
        }
        let state = v.state.as_ref().and_then(|s| self.cel("verify.state", s));
        let tool = v.tool.as_ref().and_then(|s| self.cel("verify.tool", s));
        let response = v
            .response
            .as_ref()
            .and_then(|s| self.cel("verify.response", s));
        let unclear = v
            .unclear
            .as_ref()
            .and_then(|s| self.cel("verify.unclear", s));
        if v.unclear.is_some() && v.rubric.as_deref().is_none_or(|r| r.trim().is_empty()) {
            self.at(
                verify,
                "verify.unclear: give the `rubric` a judge applies to the episodes it marks",
            );
        }
        let ok = v.state.is_some() == state.is_some()
            && v.tool.is_some() == tool.is_some()
            && v.response.is_some() == response.is_some()
            && v.unclear.is_some() == unclear.is_some();
        let verifier = Verifier {
            state,
            tool,
            response,
            unclear,
            rubric: v.rubric.clone(),
        };
        (verifier, ok)
    }

    /// Checks and builds the injection rules; a rule with an error is reported and left out.
    fn injection_rules(&mut self, rules: &[Spanned<RawInject>]) -> Vec<InjectionRule> {
        let mut inject = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let field = format!("attack.inject[{i}]");
            let mode = match &r.value.mode {
                None => InjectionMode::Append,
                Some(m) => match m.value.parse::<InjectionMode>() {
                    Ok(m) => m,
                    Err(e) => {
                        self.at(m, format!("{field}.mode: {e}"));
                        continue;
                    }
                },
            };
            if !gauntlet_world::tool_specs()
                .iter()
                .any(|t| glob(&r.value.tool, &t.name))
            {
                self.at(
                    r,
                    format!("{field}.tool: `{}` matches no tool", r.value.tool),
                );
                continue;
            }
            let text = r.value.text.clone().unwrap_or_default();
            if mode != InjectionMode::Identity && text.is_empty() {
                self.at(
                    r,
                    format!(
                        "{field}.text: the payload is required for mode {}",
                        mode.as_str()
                    ),
                );
                continue;
            }
            if let Some(w) = &r.value.when
                && self.cel(&format!("{field}.when"), w).is_none()
            {
                continue;
            }
            // A payload written into a record the agent made itself (a mail sent and read back, a file it created)
            // cannot be told from the agent's own words: only pages, which no tool of the agent creates, may take one
            // without a `when` that picks a record of s0.
            if r.value.field.is_some()
                && r.value.when.is_none()
                && mode != InjectionMode::Identity
                && gauntlet_world::World::written_text(&r.value.tool).is_none()
            {
                self.at(
                    r,
                    format!(
                        "{field}: a rule with a `field` writes its payload into every `{}` record it matches, the \
                         agent's own included; add a `when` that picks a record of s0 (for example `args.id == \"m1\"`)",
                        r.value.tool
                    ),
                );
                continue;
            }
            match InjectionRule::new(
                &r.value.tool,
                r.value.when.as_ref().map(|w| w.value.as_str()),
                mode,
                &text,
                r.value.field.as_deref(),
                r.value.uses,
            ) {
                Ok(rule) => inject.push(rule),
                Err(e) => self.at(r, format!("{field}: {e}")),
            }
        }
        inject
    }

    /// Evaluates the task and verifier predicates on s0, so that one that fails there is reported at its field.
    fn predicates_on_s0(
        &mut self,
        view: &EpisodeView,
        raw: &RawCase,
        success: Option<&Predicate>,
        verifier: &Verifier,
    ) {
        let v = &raw.verify.value;
        let checks: Vec<(&str, &Spanned<String>, Option<&Predicate>)> = vec![
            ("task.success", &raw.task.success, success),
            (
                "verify.state",
                v.state.as_ref().unwrap_or(&raw.task.success),
                verifier.state.as_ref(),
            ),
            (
                "verify.tool",
                v.tool.as_ref().unwrap_or(&raw.task.success),
                verifier.tool.as_ref(),
            ),
            (
                "verify.response",
                v.response.as_ref().unwrap_or(&raw.task.success),
                verifier.response.as_ref(),
            ),
        ];
        for (field, span, p) in checks {
            if let Some(p) = p
                && let Err(e) = view.check(p)
            {
                self.cel_error(field, span, &e, "fails on the initial state");
            }
        }
    }

    /// Replays both solutions from s0: each call must succeed, and each injection rule's condition and field
    /// must work on the task solution's results.
    fn solutions_on_s0(
        &mut self,
        s0: &World,
        raw_rules: &[Spanned<RawInject>],
        inject: &[InjectionRule],
        task_solution: &[CallStep],
        attack_solution: &[CallStep],
    ) {
        for (field, steps) in [
            ("task.solution", task_solution),
            ("attack.solution", attack_solution),
        ] {
            let mut gw = Gateway::new(s0.clone(), gauntlet_defense::allow_all_policy(), vec![]);
            for (i, s) in steps.iter().enumerate() {
                let e = gw.call(&s.name, s.args.clone());
                if let Some(err) = &e.error {
                    let msg = format!(
                        "{field}[{i}]: `{}` fails when replayed from the initial state: {err}",
                        s.name
                    );
                    self.line(s.line, msg);
                }
                if field == "task.solution" {
                    self.rules_on_result(raw_rules, inject, i, s, &e.raw, e.error.is_none());
                }
            }
        }
    }

    /// Checks each injection rule that matches task.solution[`i`] against its result: its `when` evaluates, and
    /// its `field` (a pointer that misses would silently fall back to the whole result's text) names a string.
    fn rules_on_result(
        &mut self,
        raw_rules: &[Spanned<RawInject>],
        inject: &[InjectionRule],
        i: usize,
        s: &CallStep,
        raw_result: &Value,
        succeeded: bool,
    ) {
        for (j, r) in raw_rules.iter().enumerate() {
            let Some(rule) = inject.get(j) else { continue };
            if !glob(&rule.tool, &s.name) {
                continue;
            }
            let mut b = gauntlet_core::Bindings::new();
            b.json("args", &s.args).json("result", raw_result);
            let applies = match (&r.value.when, &rule.when) {
                (Some(w), Some(p)) => match p.eval_bool(&b) {
                    Ok(v) => v,
                    Err(e) => {
                        self.cel_error(
                            &format!("attack.inject[{j}].when"),
                            w,
                            &e,
                            "fails on a task.solution call",
                        );
                        false
                    }
                },
                _ => true,
            };
            if let (true, Some(f)) = (applies && succeeded, &rule.field)
                && !raw_result
                    .pointer(f)
                    .is_some_and(serde_json::Value::is_string)
            {
                self.at(r, format!("attack.inject[{j}].field: `{f}` does not point at a string in the result of task.solution[{i}] (`{}`)", s.name));
            }
        }
    }

    /// Checks a list of `name: {args}` steps against the tool catalogue (or the setup catalogue).
    fn steps(&mut self, field: &str, steps: &[Step], setup: bool) -> Vec<CallStep> {
        let mut out = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let (line, _) = pos(s);
            if s.value.len() != 1 {
                self.at(
                    s,
                    format!(
                        "{field}[{i}]: each step is a map with exactly one key, `name: {{args}}`"
                    ),
                );
                continue;
            }
            let Some((name, args)) = s.value.iter().next() else {
                continue;
            };
            let args = if args.is_null() {
                Value::Object(Default::default())
            } else {
                args.clone()
            };
            let known = if setup {
                gauntlet_world::setup_specs()
                    .iter()
                    .any(|o| o.name == *name)
            } else {
                gauntlet_world::tool_spec(name).is_some()
            };
            if !known {
                let what = if setup { "setup operation" } else { "tool" };
                let service = name.split_once('.').map_or(name.as_str(), |(s, _)| s);
                let hint = if service == "world" || gauntlet_world::SERVICES.contains(&service) {
                    let names: Vec<String> = if setup {
                        gauntlet_world::setup_specs()
                            .iter()
                            .filter(|o| o.name.starts_with(&format!("{service}.")))
                            .map(|o| o.name.clone())
                            .collect()
                    } else {
                        gauntlet_world::tool_specs()
                            .iter()
                            .filter(|t| t.service() == service)
                            .map(|t| t.name.clone())
                            .collect()
                    };
                    format!("; {service} has: {}", names.join(", "))
                } else {
                    format!(
                        "; unknown service `{service}` (services: {})",
                        gauntlet_world::SERVICES.join(", ")
                    )
                };
                self.line(line, format!("{field}[{i}]: unknown {what} `{name}`{hint}"));
                continue;
            }
            let bad = if setup {
                gauntlet_world::check_setup_args(name, &args)
            } else {
                gauntlet_world::check_tool_args(name, &args)
            };
            if let Some(msg) = bad {
                self.line(
                    line,
                    format!("{field}[{i}]: arguments of `{name}` do not match its schema: {msg}"),
                );
                continue;
            }
            out.push(CallStep {
                name: name.clone(),
                args,
                line,
            });
        }
        out
    }
}

/// Checks a list of `tool: {args}` steps of `file` against the tool catalogue: the calls, and every problem with
/// its line and column.
pub(crate) fn check_calls(
    file: &str,
    text: &str,
    field: &str,
    steps: &[Step],
) -> (Vec<CallStep>, Vec<Diagnostic>) {
    let mut ck = Checker {
        file,
        text,
        diags: vec![],
    };
    let calls = ck.steps(field, steps, false);
    (calls, ck.diags)
}

/// Where a spanned value was written: 1-based line and column.
pub(crate) fn position<T>(s: &Spanned<T>) -> (usize, usize) {
    pos(s)
}

/// A YAML parser error as a diagnostic at its line and column, with the parser's own copies of the position
/// and its code excerpt taken out of the message.
pub(crate) fn yaml_error(file: &str, e: &serde_saphyr::Error) -> Diagnostic {
    let (line, col) = e
        .location()
        .map_or((0, 0), |l| (l.line() as usize, l.column() as usize));
    let msg = e.without_snippet().to_string();
    let msg = msg.lines().next().unwrap_or("invalid YAML");
    let msg = msg.trim_start_matches("error: ");
    let msg = match msg.find(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    let msg = msg
        .strip_prefix(&format!("line {line} column {col}: "))
        .unwrap_or(msg)
        .to_string();
    Diagnostic::new(file, line, col, msg)
}

fn pos<T>(s: &Spanned<T>) -> (usize, usize) {
    (s.referenced.line() as usize, s.referenced.column() as usize)
}

/// Maps a position inside a CEL expression to the file: inline scalars (plain or quoted) add the
/// expression's column to the scalar's; block scalars (`|`, `>`) start on the next line.
fn cel_position(text: &str, s: &Spanned<String>, e: &PredicateError) -> (usize, usize) {
    let (line, col) = pos(s);
    let src_line = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let first = src_line.chars().nth(col.saturating_sub(1));
    match first {
        Some('|') | Some('>') => {
            let l = line + e.line;
            let indent = text
                .lines()
                .nth(l.saturating_sub(1))
                .map_or(0, |t| t.len() - t.trim_start().len());
            (l, indent + e.column)
        }
        Some('\'') | Some('"') if e.line == 1 => (line, col + e.column),
        _ if e.line == 1 => (line, col + e.column - 1),
        _ => (line + e.line - 1, e.column),
    }
}

/// Keys whose values are prose, where an unquoted ` #` silently cuts the text at a YAML comment.
const PROSE_KEYS: &[&str] = &[
    "prompt",
    "goal",
    "answer",
    "text",
    "body",
    "note",
    "reply",
    "title",
    "description",
    "subject",
    "content",
    "memo",
    "message",
    "openers",
];

/// Finds prose values written as plain (unquoted) scalars that contain ` #`: YAML reads the rest of the line
/// as a comment, so `prompt: Read #team-design and post…` is the one word `Read`. Block scalars (`|`, `>`)
/// and quoted values are safe and skipped.
pub(crate) fn cut_by_comment(file: &str, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Indentation of the line that opened a block scalar, while inside it.
    let mut block: Option<usize> = None;
    // The key of the innermost `key:` line with no value, and its indentation (for list items under it).
    let mut parent: Option<(String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if let Some(b) = block {
            if body.is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let trimmed = body.trim_end();
        if trimmed.ends_with(": |")
            || trimmed.ends_with(": >")
            || trimmed.ends_with("- |")
            || trimmed.ends_with("- >")
            || [": |-", ": >-", ": |+", ": >+", "- |-", "- >-"]
                .iter()
                .any(|e| trimmed.ends_with(e))
        {
            block = Some(indent);
        }
        // A list item under a prose list (`openers:`) is itself prose.
        if let Some(item) = body.strip_prefix("- ")
            && let Some((key, kindent)) = &parent
            && indent >= *kindent
            && PROSE_KEYS.contains(&key.as_str())
            && !item.contains(": ")
        {
            let at = indent + 2 + (item.len() - item.trim_start().len());
            if let Some(col) = plain_comment(line, at) {
                out.push(comment_diag(file, n + 1, col, key));
            }
        }
        // Every `key: value` on the line (block or flow style).
        let mut from = 0;
        while let Some(i) = line[from..].find(": ") {
            let colon = from + i;
            from = colon + 2;
            let key: String = line[..colon]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !PROSE_KEYS.contains(&key.as_str()) {
                continue;
            }
            let at = colon + 2 + (line[colon + 2..].len() - line[colon + 2..].trim_start().len());
            if let Some(col) = plain_comment(line, at) {
                out.push(comment_diag(file, n + 1, col, &key));
            }
        }
        if let Some(k) = trimmed.strip_suffix(':') {
            let k = k.trim_start_matches("- ").trim();
            if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                parent = Some((k.to_string(), indent));
            }
        } else if parent
            .as_ref()
            .is_some_and(|(_, i)| indent <= *i && !body.starts_with("- "))
        {
            parent = None;
        }
    }
    out
}

/// When the scalar starting at byte `at` of `line` is plain and has ` #` before its end (end of line, or
/// `,` / `}` inside a flow mapping), the 1-based column of that `#`.
fn plain_comment(line: &str, at: usize) -> Option<usize> {
    let value = line.get(at..)?;
    let first = value.chars().next()?;
    if "\"'|>[{&*!#".contains(first) {
        return None;
    }
    let in_flow = line[..at].contains('{');
    let end = if in_flow {
        value.find([',', '}']).unwrap_or(value.len())
    } else {
        value.len()
    };
    value[..end].find(" #").map(|i| at + i + 2)
}

fn comment_diag(file: &str, line: usize, col: usize, key: &str) -> Diagnostic {
    Diagnostic::new(
        file,
        line,
        col,
        format!(
            "{key}: ` #` starts a YAML comment in an unquoted value, so the text is cut here; quote the value (\"…\" or '…') or use a block scalar (|)"
        ),
    )
}

/// Parses and checks one case file. Every problem found is returned, each with file, line and column.
pub fn load_case(file: &str, text: &str) -> Result<Case, Vec<Diagnostic>> {
    let cut = cut_by_comment(file, text);
    if !cut.is_empty() {
        return Err(cut);
    }
    let (raw, masked, structural) = parse_raw(file, text);
    let Some(raw) = raw else {
        return Err(structural);
    };
    let text = masked.as_str();
    let mut ck = Checker {
        file,
        text,
        diags: structural,
    };

    let id = raw.id.value.clone();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_'))
    {
        ck.at(
            &raw.id,
            format!("id `{id}` must be non-empty lowercase letters, digits, `.`, `-` or `_`"),
        );
    }
    let classification = ck.classification(&raw.taxonomy);

    // Steps.
    let setup = ck.steps("setup", &raw.setup, true);
    let task_solution = ck.steps("task.solution", &raw.task.solution, false);
    let attack_solution = ck.steps("attack.solution", &raw.attack.solution, false);
    if raw.task.solution.is_empty() {
        ck.line(
            line_of(text, "task:"),
            "task.solution: list the calls the task needs (at least one)",
        );
    }
    if raw.attack.solution.is_empty() {
        ck.line(
            line_of(text, "attack:"),
            "attack.solution: list the sink calls that realise the goal (at least one)",
        );
    }
    let (checks, checks_ok) = ck.trajectories(raw.checks.as_ref());
    let steps_ok = checks_ok
        && setup.len() == raw.setup.len()
        && task_solution.len() == raw.task.solution.len()
        && attack_solution.len() == raw.attack.solution.len();

    // Predicates.
    let success = ck.cel("task.success", &raw.task.success);
    let (verifier, verifier_ok) = ck.verifier(&raw.verify);
    let cel_ok = success.is_some() && verifier_ok;
    let inject = ck.injection_rules(&raw.attack.inject);

    let parties = gauntlet_world::effects::Parties {
        user: raw.parties.user.clone(),
        internal: raw.parties.internal.clone(),
        hostile: raw.parties.hostile.clone(),
    };

    // s0: replay the setup.
    let mut s0 = World::new();
    let mut setup_ok = steps_ok;
    for (i, s) in setup.iter().enumerate() {
        if let Err(e) = s0.setup(&s.name, &s.args) {
            setup_ok = false;
            ck.line(s.line, format!("setup[{i}]: {e}"));
        }
    }
    let s0_state = s0.state();

    // Dynamic checks on s0: predicates evaluate, solutions replay, conditions evaluate.
    if setup_ok && cel_ok {
        let views = gauntlet_judge::views_of(
            std::iter::once(&success)
                .chain([
                    &verifier.state,
                    &verifier.tool,
                    &verifier.response,
                    &verifier.unclear,
                ])
                .flatten(),
        );
        let cb = CaseBindings::new(&s0_state, &id, &raw.task.prompt, &parties).with_views(views);
        let view = EpisodeView::new(&cb, s0_state.clone(), &[], &[]);
        ck.predicates_on_s0(&view, &raw, success.as_ref(), &verifier);
        ck.solutions_on_s0(
            &s0,
            &raw.attack.inject,
            &inject,
            &task_solution,
            &attack_solution,
        );
    }
    if !ck.diags.is_empty() {
        ck.diags.sort();
        ck.diags.dedup();
        return Err(ck.diags);
    }
    let (Some(taxonomy), Some(success)) = (classification, success) else {
        return Err(vec![Diagnostic::new(
            file,
            0,
            0,
            "internal: case incomplete without a diagnostic",
        )]);
    };
    Ok(Case {
        id,
        title: raw.title,
        description: raw.description,
        taxonomy,
        hostile: raw.parties.hostile,
        parties,
        checks,
        setup,
        prompt: raw.task.prompt,
        task_solution,
        answer: raw.task.answer,
        success,
        goal: raw.attack.goal,
        openers: raw.attack.openers,
        inject,
        attack_solution,
        verifier,
        source: file.to_string(),
        id_at: pos(&raw.id),
        s0,
        s0_state,
        generated: raw.generated,
    })
}

/// Parses the raw case. An unknown field written as the first key on its line is reported and then blanked
/// out (with its value block, keeping line numbers) so that parsing can go on and report the next one; any
/// other structural error ends parsing. Returns the case if it parsed, the text it parsed, and the errors.
fn parse_raw(file: &str, text: &str) -> (Option<RawCase>, String, Vec<Diagnostic>) {
    let mut masked = text.to_string();
    let mut diags = Vec::new();
    for _ in 0..64 {
        match serde_saphyr::from_str::<RawCase>(&masked) {
            Ok(r) => return (Some(r), masked, diags),
            Err(e) => {
                let d = yaml_error(file, &e);
                let (line, col) = (d.line, d.column);
                let unknown = d.message.starts_with("unknown field `");
                diags.push(d);
                if !(unknown && blank_key(&mut masked, line, col)) {
                    return (None, masked, diags);
                }
            }
        }
    }
    (None, masked, diags)
}

/// Blanks the key at `line`:`col` and the more-indented lines of its value. Only a key that starts its line
/// can be removed without changing the structure around it.
fn blank_key(text: &mut String, line: usize, col: usize) -> bool {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let Some(first) = lines.get(line.wrapping_sub(1)) else {
        return false;
    };
    let indent = first.len() - first.trim_start().len();
    if indent + 1 != col {
        return false;
    }
    lines[line - 1].clear();
    for l in lines.iter_mut().skip(line) {
        let i = l.len() - l.trim_start().len();
        if !l.trim().is_empty() && i <= indent {
            break;
        }
        l.clear();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    *text = out;
    true
}

/// The 1-based line of the first line starting with `key` (0 if none).
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.starts_with(key))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
#[path = "case/tests.rs"]
mod tests;

/// Loads a file of injection rules for the MCP proxy: a YAML list of `{tool, when?, mode?, text?, field?,
/// uses?}`, as in a case's `attack.inject`. Tool patterns are not checked against the world's tools, since an
/// upstream server has its own. Every problem is reported with file:line:column.
pub fn load_injection_rules(path: &std::path::Path) -> Result<Vec<InjectionRule>, Vec<Diagnostic>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![Diagnostic::new(&file, 0, 0, format!("cannot read: {e}"))])?;
    let raw: Vec<Spanned<RawInject>> =
        serde_saphyr::from_str(&text).map_err(|e| vec![yaml_error(&file, &e)])?;
    let mut diags = Vec::new();
    let mut rules = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let (line, col) = pos(r);
        let mode = match &r.value.mode {
            None => InjectionMode::Append,
            Some(m) => match m.value.parse::<InjectionMode>() {
                Ok(m) => m,
                Err(e) => {
                    let (l, c) = pos(m);
                    diags.push(Diagnostic::new(&file, l, c, format!("[{i}].mode: {e}")));
                    continue;
                }
            },
        };
        let text = r.value.text.clone().unwrap_or_default();
        if mode != InjectionMode::Identity && text.is_empty() {
            diags.push(Diagnostic::new(
                &file,
                line,
                col,
                format!(
                    "[{i}].text: the payload is required for mode {}",
                    mode.as_str()
                ),
            ));
            continue;
        }
        match InjectionRule::new(
            &r.value.tool,
            r.value.when.as_ref().map(|w| w.value.as_str()),
            mode,
            &text,
            r.value.field.as_deref(),
            r.value.uses,
        ) {
            Ok(rule) => rules.push(rule),
            Err(e) => diags.push(Diagnostic::new(&file, line, col, format!("[{i}]: {e}"))),
        }
    }
    if diags.is_empty() {
        Ok(rules)
    } else {
        Err(diags)
    }
}
