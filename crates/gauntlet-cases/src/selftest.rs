//! Self-tests: every case is run with the reference agents and must behave as its author claims.
//! A case that fails is a broken case, not a finding.

use crate::case::{Expect, Trajectory};
use crate::episode::{EpisodeRecord, EpisodeSpec, PreparedCase, run_episode};
use gauntlet_agents::ReferenceKind;
use gauntlet_core::{Outcome, Setting};
use gauntlet_defense::AllowAll;
use gauntlet_judge::EpisodeView;
use serde::Serialize;

/// The self-test result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct SelfTest {
    /// Case id.
    pub case: String,
    /// Where it came from.
    pub source: String,
    /// Checks that failed, each a sentence saying what and why.
    pub failures: Vec<String>,
    /// Checks run.
    pub checks: usize,
}

impl SelfTest {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Self-tests every case of a loaded suite, writing a line per case (and one per file that does not load) and a
/// closing tally to `out`. True when every file loaded and every case passed, and there was at least one.
pub fn suite(loaded: crate::Loaded, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
    let broken: std::collections::BTreeSet<String> =
        loaded.diagnostics.iter().map(|d| d.file.clone()).collect();
    for f in &broken {
        writeln!(
            out,
            "FAIL  {f} (does not load; see the errors above or run `gauntlet cases lint`)"
        )?;
    }
    let mut failed = 0;
    for c in loaded.cases {
        let pc = PreparedCase::new(c);
        let r = selftest(&pc);
        if r.passed() {
            writeln!(out, "ok    {} ({} checks)", r.case, r.checks)?;
        } else {
            failed += 1;
            writeln!(out, "FAIL  {} ({})", r.case, r.source)?;
            for f in &r.failures {
                writeln!(out, "      - {f}")?;
            }
        }
    }
    let total = loaded.files;
    let passed = total - failed - broken.len();
    writeln!(out, "selftest: {passed} passed, {} failed", total - passed)?;
    Ok(total == passed && total > 0)
}

fn episode(
    pc: &PreparedCase,
    kind: ReferenceKind,
    setting: Setting,
    failures: &mut Vec<String>,
) -> EpisodeRecord {
    let r = run_episode(&EpisodeSpec {
        index: 0,
        case: pc,
        setting,
        target: &kind,
        defense: &AllowAll,
        rep: 0,
        seed: 0,
        max_turns: 10,
        attacker: None,
        judge: None,
    });
    // A verifier level or success check that cannot be evaluated is a broken case even when another
    // level decides: it would read as undetermined for an agent that trips it.
    for e in &r.verdict.evidence {
        if let Some(err) = &e.error {
            failures.push(format!(
                "{}/{setting}: verify.{} cannot be evaluated: {err}",
                kind.name(),
                e.level.as_str()
            ));
        }
    }
    if let Some(err) = &r.task_success_error {
        failures.push(format!(
            "{}/{setting}: task.success cannot be evaluated: {err}",
            kind.name()
        ));
    }
    r
}

fn why(r: &EpisodeRecord) -> String {
    let errs: Vec<String> = r
        .trace
        .events()
        .filter_map(|e| {
            e.error
                .as_ref()
                .map(|m| format!("{} failed: {m}", e.call.tool))
        })
        .collect();
    let ev: Vec<String> = r
        .verdict
        .evidence
        .iter()
        .map(|e| {
            format!(
                "{}={}",
                e.level.as_str(),
                e.error
                    .clone()
                    .unwrap_or_else(|| format!("{:?}", e.value.unwrap_or(false)))
            )
        })
        .collect();
    let mut s = format!("verdict {} ({})", r.verdict.outcome, ev.join(", "));
    if !errs.is_empty() {
        s.push_str(&format!("; {}", errs.join("; ")));
    }
    s
}

/// Replays one counter-trajectory on s0 (no defense, no injection) and says why it failed, if it did.
fn counter_trajectory(pc: &PreparedCase, t: &Trajectory, i: usize) -> Option<String> {
    replay(pc, t).map(|why| {
        format!(
            "checks.{}[{i}] (line {}, {:?}): {why}",
            t.expect.as_str(),
            t.line,
            t.note
        )
    })
}

/// Replays a scripted trajectory on the case's s0 (no defense, no injection) and judges it like an episode;
/// `None` when it got the judgement it expects, else what it got and why (evidence, calls, what went out).
pub fn replay(pc: &PreparedCase, t: &Trajectory) -> Option<String> {
    let Ok(mut gw) = pc.gateway(Setting::Benign, &AllowAll) else {
        return Some("allow-all defense failed to prepare".into());
    };
    for c in &t.calls {
        gw.call(&c.name, c.args.clone());
    }
    let replies: Vec<String> = if t.reply.is_empty() {
        vec![]
    } else {
        vec![t.reply.clone()]
    };
    let (verdict, success) = pc.judge(&gw, &replies);
    let ok = match t.expect {
        Expect::Violated => verdict.outcome == Outcome::Violated,
        Expect::Held => verdict.outcome == Outcome::Held,
        Expect::TaskSuccess => verdict.outcome == Outcome::Held && success == Some(true),
        Expect::Undetermined => verdict.outcome == Outcome::Undetermined,
    };
    if ok {
        return None;
    }
    let calls: Vec<String> = gw
        .events()
        .iter()
        .map(|e| match &e.error {
            Some(err) => format!("{} failed: {err}", e.call.tool),
            None => format!("{} ok", e.call.tool),
        })
        .collect();
    let evidence: Vec<String> = verdict
        .evidence
        .iter()
        .map(|e| match (&e.error, e.value) {
            (Some(err), _) => format!("{}: error {err}", e.level.as_str()),
            (None, v) => format!("{}: {}", e.level.as_str(), v.unwrap_or(false)),
        })
        .collect();
    let mut got = verdict.outcome.to_string();
    if let Some(r) = &verdict.reason {
        got.push_str(&format!(" ({r})"));
    }
    if t.expect == Expect::TaskSuccess {
        got.push_str(&format!(
            ", task success {}",
            success.map_or("cannot be evaluated".to_string(), |b| b.to_string())
        ));
    }
    // What left, as the effect view saw it: the usual reason a route is missed or a near-miss fires.
    let outbound = if pc.case.reads_effects() {
        let state = gauntlet_world::effects::outbound(
            &pc.case.s0_state,
            &gw.world().state(),
            &pc.case.parties,
        );
        let rows: Vec<String> = state
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|o| {
                        format!(
                            "{} to {} ({})",
                            o["channel"].as_str().unwrap_or(""),
                            o["to"].as_str().unwrap_or(""),
                            o["party"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "; outbound: {}",
            if rows.is_empty() {
                "nothing".to_string()
            } else {
                rows.join(", ")
            }
        )
    } else {
        String::new()
    };
    Some(format!(
        "expected {}, got {got}; evidence {}; calls: {}{outbound}",
        t.expect.as_str(),
        evidence.join(", "),
        if calls.is_empty() {
            "none".to_string()
        } else {
            calls.join("; ")
        }
    ))
}

/// Runs the self-tests of one case.
pub fn selftest(pc: &PreparedCase) -> SelfTest {
    let case = &pc.case;
    let mut failures = Vec::new();
    let mut checks = 0;

    // 1. s0 is clean.
    checks += 1;
    let view = EpisodeView::new(&case.bindings(), case.s0_state.clone(), &[], &[]);
    if case.verifier.fires(&view) {
        failures.push("the verifier fires on the initial state: it must detect the attack's effect, not something already there".into());
    }

    // 2. reference, benign.
    checks += 1;
    let r = episode(pc, ReferenceKind::Reference, Setting::Benign, &mut failures);
    let failed_calls: Vec<String> = r
        .trace
        .events()
        .filter(|e| !e.succeeded())
        .map(|e| format!("{} ({})", e.call.tool, e.error.clone().unwrap_or_default()))
        .collect();
    if !failed_calls.is_empty() {
        failures.push(format!(
            "reference/benign: task.solution calls fail: {}",
            failed_calls.join("; ")
        ));
    }
    if r.task_success == Some(false) {
        failures.push(
            "reference/benign: task.success is false after the reference solution and answer"
                .into(),
        );
    }
    if r.verdict.outcome != Outcome::Held {
        failures.push(format!(
            "reference/benign: expected no violation, got {}",
            why(&r)
        ));
    }

    // 3–5. compliant in the attack settings.
    for setting in [Setting::Direct, Setting::Indirect, Setting::Multi] {
        if !pc.applies(setting) {
            continue;
        }
        checks += 1;
        let r = episode(pc, ReferenceKind::Compliant, setting, &mut failures);
        if setting == Setting::Indirect && !r.trace.events().any(|e| e.injection.is_some()) {
            failures.push("compliant/indirect: no injection rule fired on the task.solution path: the attack never reaches the agent".into());
            continue;
        }
        if r.verdict.outcome != Outcome::Violated {
            failures.push(format!(
                "compliant/{setting}: expected a violation, got {}",
                why(&r)
            ));
        }
    }

    // 6. refuser never violates.
    for setting in Setting::ALL {
        if !pc.applies(setting) {
            continue;
        }
        checks += 1;
        let r = episode(pc, ReferenceKind::Refuser, setting, &mut failures);
        if r.verdict.outcome != Outcome::Held {
            failures.push(format!("refuser/{setting}: expected held, got {}", why(&r)));
        }
    }
    // 7. counter-trajectories.
    for (n, t) in case.checks.iter().enumerate() {
        checks += 1;
        let i = case.checks[..n]
            .iter()
            .filter(|x| x.expect == t.expect)
            .count();
        if let Some(f) = counter_trajectory(pc, t, i) {
            failures.push(f);
        }
    }
    failures.dedup();
    SelfTest {
        case: case.id.clone(),
        source: case.source.clone(),
        failures,
        checks,
    }
}
