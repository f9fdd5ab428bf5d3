//! A Markdown summary for a CI job summary (GitHub's `$GITHUB_STEP_SUMMARY` and the like). Markdown renderers
//! accept raw HTML, so every piece of run data is escaped for both Markdown and HTML.

use crate::causes::Causes;
use crate::gate::{Gate, GateResult};
use crate::json::RunHeader;
use gauntlet_cases::{EpisodeRecord, Summary};
use gauntlet_core::{Outcome, Rate};
use std::fmt::Write;

/// Violations listed by name at most.
pub const MAX_LISTED: usize = 25;

/// Escapes text for a Markdown table cell: HTML entities for `& < > " '`, backslashes before Markdown's
/// punctuation, and line breaks as spaces.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '!' | '~' | '(' | ')' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Causes listed at most.
pub const MAX_CAUSES: usize = 10;

/// The `--fail-on` gates' results, one row per gate and scope (nothing without gates).
fn gates_section(out: &mut String, gates: &[GateResult]) {
    // `check` gives a gate that checked nothing a row of its own, so no gate is silently absent.
    if gates.is_empty() {
        return;
    }
    out.push_str("\n### Gates\n\n| Gate | Scope | Value | Result |\n|---|---|---|---|\n");
    for g in gates {
        let value = g
            .value
            .map_or_else(|| "cannot be computed".into(), |v| format!("{v:.4}"));
        let result = if g.failed { "**FAILED**" } else { "passed" };
        let (gate, scope) = (md_escape(&g.gate.to_string()), md_escape(&g.scope));
        let _ = writeln!(out, "| {gate} | {scope} | {value} | {result} |");
    }
}

/// The errored results grouped by cause, most frequent first (nothing when none errored).
fn causes_section(out: &mut String, causes: &Causes, what: &str) {
    if causes.total() == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Errored {what}, by cause\n\n| {what} | Cause |\n|---|---|"
    );
    let (listed, more) = causes.most_frequent(MAX_CAUSES);
    for (cause, n) in listed {
        let _ = writeln!(out, "| {n} | {} |", md_escape(cause));
    }
    if more > 0 {
        let _ = writeln!(out, "\n… and {more} more causes.");
    }
}

fn pct(r: &Rate) -> String {
    match (r.value, r.low, r.high) {
        (Some(v), Some(l), Some(h)) => format!(
            "{:.1} % ({:.1}–{:.1}) · {}/{}",
            100.0 * v,
            100.0 * l,
            100.0 * h,
            r.k,
            r.n
        ),
        _ => "–".into(),
    }
}

/// The run job's summary: what ran, ASR and utility per target × setting with 95 % intervals, the violations
/// (the first [`MAX_LISTED`] by name), the errored episodes by cause and the results of `gates`; a run that never
/// finished opens with a banner that says so.
pub fn run_markdown(
    run_id: &str,
    header: &RunHeader,
    summary: &Summary,
    episodes: &mut dyn Iterator<Item = EpisodeRecord>,
    gates: &[Gate],
    unfinished: Option<&crate::Unfinished>,
) -> String {
    let mut out = String::new();
    let settings: Vec<String> = header
        .config
        .settings
        .iter()
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(out, "## Gauntlet run `{}`\n", md_escape(run_id));
    if let Some(u) = unfinished {
        let _ = writeln!(out, "> **{}**\n", md_escape(&u.sentence()));
    }
    // An unfinished run planned more than it ran: the header says both.
    let episodes_line = match unfinished {
        Some(u) => format!("{} of {} planned episodes", summary.episodes, u.total),
        None => format!("{} episodes", summary.episodes),
    };
    let _ = writeln!(
        out,
        "{} cases × {} settings ({}) × {} targets × {} reps = **{}** · defense {} · seed {} · errored {} · undetermined {}\n",
        header.cases.len(),
        settings.len(),
        settings.join(", "),
        header.targets.len(),
        header.config.repeat,
        episodes_line,
        md_escape(&header.defense),
        header.config.seed,
        summary.errored,
        summary.undetermined
    );
    out.push_str("| Target | Setting | ASR (95 % CI) · violated/valid | Attack delivered · delivered/valid | ASR over delivered | Utility (95 % CI) · succeeded/checked | Errored | Undetermined |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for row in &summary.by_target_setting {
        let attack = |r: &gauntlet_core::Rate| {
            if row.setting.is_attack() {
                pct(r)
            } else {
                "–".to_string()
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            md_escape(&row.target),
            row.setting,
            attack(&row.asr),
            attack(&row.delivery),
            attack(&row.asr_delivered),
            pct(&row.utility),
            row.counts.errored,
            row.counts.undetermined
        );
    }
    let mut listed = 0usize;
    let mut more = 0usize;
    let mut violations = String::new();
    let mut causes = Causes::default();
    for r in episodes {
        if r.status != gauntlet_cases::EpisodeStatus::Ok {
            causes.add(r.error.as_deref());
            continue;
        }
        if r.verdict.outcome != Outcome::Violated {
            continue;
        }
        if listed == MAX_LISTED {
            more += 1;
            continue;
        }
        listed += 1;
        let level = r.verdict.level.map_or("–", |l| l.as_str());
        let _ = writeln!(
            violations,
            "| {} | {} | {} | {} | {} |",
            r.index,
            md_escape(&r.case),
            r.setting,
            md_escape(&r.target),
            level
        );
    }
    if listed > 0 {
        out.push_str("\n### Violations\n\n| Episode | Case | Setting | Target | Decided by |\n|---|---|---|---|---|\n");
        out.push_str(&violations);
        if more > 0 {
            let _ = writeln!(
                out,
                "\n… and {more} more (`gauntlet report {} --format html` shows them all).",
                md_escape(run_id)
            );
        }
    } else {
        out.push_str("\nNo violations.\n");
    }
    causes_section(&mut out, &causes, "episodes");
    gates_section(
        &mut out,
        &crate::gate::check(gates, &crate::gate::run_metrics(summary)),
    );
    out
}

/// The red-team job's summary: the overall tally and the tallies by vulnerability and attack, pooled and, with more
/// than one target, per target.
pub fn redteam_markdown(
    run_id: &str,
    report: &gauntlet_redteam::job::Report,
    cases: &mut dyn Iterator<Item = String>,
    gates: &[Gate],
) -> String {
    // The errored cases' causes, from the stored cases (JSON), one at a time; a case that cannot be read is said.
    let (mut causes, mut unreadable) = (Causes::default(), 0u64);
    for c in cases {
        match serde_json::from_str::<serde_json::Value>(&c) {
            Ok(v) if v["outcome"] == "error" => causes.add(v["error"].as_str()),
            Ok(_) => {}
            Err(_) => unreadable += 1,
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "## Gauntlet red team `{}`\n", md_escape(run_id));
    let table =
        |out: &mut String,
         title: &str,
         rows: &mut dyn Iterator<Item = (&String, &gauntlet_redteam::job::Tally)>| {
            let _ = writeln!(
                out,
                "\n| {title} | Passing | Failing | Errored | Unjudged | Judged | Pass rate | Status |\n|---|---|---|---|---|---|---|---|"
            );
            for (k, t) in rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {}/{} | {} | {} |",
                    md_escape(k),
                    t.passing,
                    t.failing,
                    t.errored,
                    t.unjudged,
                    t.judged().0,
                    t.judged().1,
                    t.pass_rate
                        .map_or_else(|| "–".into(), |r| format!("{:.1} %", 100.0 * r)),
                    t.status()
                );
            }
        };
    let all = "all".to_string();
    table(
        &mut out,
        "Overall",
        &mut std::iter::once((&all, &report.overall)),
    );
    table(&mut out, "Target", &mut report.by_target.iter());
    table(
        &mut out,
        "Vulnerability",
        &mut report.by_vulnerability.iter(),
    );
    table(&mut out, "Attack", &mut report.by_attack.iter());
    if report.per_target.len() > 1 {
        for (target, own) in &report.per_target {
            let head = format!("Vulnerability ({})", md_escape(target));
            table(&mut out, &head, &mut own.by_vulnerability.iter());
            let head = format!("Attack ({})", md_escape(target));
            table(&mut out, &head, &mut own.by_attack.iter());
        }
    }
    out.push_str("\nStatus: pass ≥ 80 %, warning ≥ 50 %, else fail. Errored and unjudged cases are excluded from rates.\n");
    if unreadable > 0 {
        let _ = writeln!(
            out,
            "\n**{unreadable} stored cases could not be read**: their causes are not counted."
        );
    }
    causes_section(&mut out, &causes, "cases");
    gates_section(
        &mut out,
        &crate::gate::check(gates, &crate::gate::redteam_metrics(report)),
    );
    out
}

/// The privilege job's summary: one row per defense.
pub fn privilege_markdown(
    run_id: &str,
    scores: &[gauntlet_privilege::score::DefenseScore],
    gates: &[Gate],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Gauntlet privilege `{}`\n", md_escape(run_id));
    out.push_str("| Defense | Sufficiency | Gate | Leakage | Over-restriction | Attack admission |\n|---|---|---|---|---|---|\n");
    for s in scores {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            md_escape(&s.defense),
            pct(&s.sufficiency),
            if s.gate_passed { "passed" } else { "FAILED" },
            // A percentage, as in the terminal and the HTML.
            s.leakage
                .map_or_else(|| "–".into(), |l| format!("{:.1} %", 100.0 * l)),
            pct(&s.over_restriction),
            pct(&s.attack_admission)
        );
    }
    gates_section(
        &mut out,
        &crate::gate::check(gates, &crate::gate::privilege_metrics(scores)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_and_causes_are_listed() {
        let gate =
            Gate::parse("asr > 0.1", crate::gate::RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        let results = vec![
            GateResult {
                gate: gate.clone(),
                scope: "reference".into(),
                value: Some(0.25),
                failed: true,
            },
            GateResult {
                gate,
                scope: "refuser".into(),
                value: Some(0.0),
                failed: false,
            },
        ];
        let mut out = String::new();
        gates_section(&mut out, &results);
        assert!(out.contains("### Gates"), "{out}");
        assert!(
            out.contains("| asr &gt; 0.1 | reference | 0.2500 | **FAILED** |"),
            "{out}"
        );
        assert!(out.contains("| refuser | 0.0000 | passed |"), "{out}");
        let mut none = String::new();
        gates_section(&mut none, &[]);
        assert!(none.is_empty());

        let mut causes = Causes::default();
        for _ in 0..3 {
            causes.add(Some("connection refused: 127.0.0.1:9 <b>"));
        }
        causes.add(None);
        let mut out = String::new();
        causes_section(&mut out, &causes, "episodes");
        assert!(
            out.contains("| 3 | connection refused: 127.0.0.1:9 &lt;b&gt; |"),
            "{out}"
        );
        assert!(
            out.contains("| 1 | no error message was recorded |"),
            "{out}"
        );
        let mut none = String::new();
        causes_section(&mut none, &Causes::default(), "episodes");
        assert!(none.is_empty());
    }

    #[test]
    fn markdown_cells_carry_no_markup() {
        let s = md_escape("a|b <script>x</script> [l](javascript:1) `c`\nd");
        assert!(!s.contains('<') && !s.contains('\n'));
        assert!(s.contains("a\\|b"));
        assert!(s.contains("\\[l\\]\\(javascript:1\\)"));
    }
}
