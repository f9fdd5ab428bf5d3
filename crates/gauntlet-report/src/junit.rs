//! JUnit XML for CI systems: one test suite per target × setting and in it one test case per case (repetitions
//! folded in, their wall time as `time` when the store kept it, the case's file as `file` when it came from one), a
//! violation a failure, an errored episode an error, an undetermined verdict skipped. Red-team runs: one test case per
//! red-team case, a failing judgement a failure.

use crate::json::RunHeader;
use gauntlet_cases::EpisodeRecord;
use gauntlet_core::{Outcome, Setting};
use std::fmt::Write;

/// Escapes text for XML content and attribute values, dropping the characters XML 1.0 cannot carry.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The repetitions of one (case, setting, target), folded.
struct Group {
    case: String,
    setting: Setting,
    target: String,
    reps: u32,
    violated: Vec<String>,
    errored: Vec<String>,
    undetermined: u32,
    task_failed: u32,
    /// The repetitions' wall time in microseconds (`None` once one of them has none: a run stored before it
    /// was kept).
    us: Option<u64>,
}

impl Group {
    fn new(r: &EpisodeRecord) -> Group {
        Group {
            case: r.case.clone(),
            setting: r.setting,
            target: r.target.clone(),
            reps: 0,
            violated: Vec::new(),
            errored: Vec::new(),
            undetermined: 0,
            task_failed: 0,
            us: Some(0),
        }
    }

    fn same(&self, r: &EpisodeRecord) -> bool {
        self.case == r.case && self.setting == r.setting && self.target == r.target
    }

    fn add(&mut self, r: &EpisodeRecord) {
        self.reps += 1;
        self.us = self.us.zip(r.elapsed_us).map(|(a, b)| a.saturating_add(b));
        if r.status != gauntlet_cases::EpisodeStatus::Ok {
            self.errored.push(format!(
                "episode {} (rep {}): {}",
                r.index,
                r.rep,
                r.error.as_deref().unwrap_or("errored")
            ));
            return;
        }
        match r.verdict.outcome {
            Outcome::Violated => {
                let decided = r
                    .verdict
                    .evidence
                    .iter()
                    .find(|e| Some(e.level) == r.verdict.level);
                self.violated.push(format!(
                    "episode {} (rep {}): violated at the {} level: {}",
                    r.index,
                    r.rep,
                    r.verdict.level.map_or("?", |l| l.as_str()),
                    decided.map_or("", |e| e.predicate.as_str())
                ));
            }
            Outcome::Undetermined => self.undetermined += 1,
            Outcome::Held => {}
        }
        if self.setting == Setting::Benign && r.task_success == Some(false) {
            self.task_failed += 1;
        }
    }

    /// Writes the test case, with its case's `file` if known; returns (failure, error, skipped).
    fn write(&self, out: &mut String, file: Option<&str>) -> (bool, bool, bool) {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{} / {}\"{}{}>",
            xml_escape(&self.case),
            self.setting,
            xml_escape(&self.target),
            file.map_or_else(String::new, |f| format!(" file=\"{}\"", xml_escape(f))),
            time_attr(self.us)
        );
        let mut flags = (false, false, false);
        if !self.errored.is_empty() {
            flags.1 = true;
            let _ = write!(
                out,
                "\n      <error message=\"{} of {} episodes errored\" type=\"errored\">{}</error>",
                self.errored.len(),
                self.reps,
                xml_escape(&self.errored.join("\n"))
            );
        }
        if !self.violated.is_empty() {
            flags.0 = true;
            let _ = write!(
                out,
                "\n      <failure message=\"{} of {} episodes violated the case\" type=\"violation\">{}</failure>",
                self.violated.len(),
                self.reps,
                xml_escape(&self.violated.join("\n"))
            );
        } else if self.task_failed > 0 {
            flags.0 = true;
            let _ = write!(
                out,
                "\n      <failure message=\"the task failed in {} of {} benign episodes\" type=\"utility\"/>",
                self.task_failed, self.reps
            );
        } else if self.errored.is_empty() && self.undetermined > 0 {
            flags.2 = true;
            let _ = write!(
                out,
                "\n      <skipped message=\"undetermined verdict in {} of {} episodes\"/>",
                self.undetermined, self.reps
            );
        }
        out.push_str(if flags == (false, false, false) {
            "</testcase>\n"
        } else {
            "\n    </testcase>\n"
        });
        flags
    }
}

/// A suite: its name, its test cases, `[tests, failures, errors, skipped]` and its wall time in microseconds.
type Suite = (String, String, [u64; 4], Option<u64>);

fn document(name: &str, cases: &str, counts: [u64; 4]) -> String {
    document_of(name, &[(name.to_string(), cases.to_string(), counts, None)])
}

/// ` time="S.SSS"` (seconds) for a wall time in microseconds, nothing when it is not known.
fn time_attr(us: Option<u64>) -> String {
    us.map_or_else(String::new, |us| {
        format!(" time=\"{:.3}\"", us as f64 / 1e6)
    })
}

/// A JUnit document of several suites, each `(name, test cases, [tests, failures, errors, skipped], wall time in
/// microseconds if known)`; the document's counts are their sums.
fn document_of(name: &str, suites: &[Suite]) -> String {
    let mut total = [0u64; 4];
    let mut body = String::new();
    for (suite, cases, counts, us) in suites {
        total.iter_mut().zip(counts).for_each(|(t, c)| *t += c);
        let [tests, failures, errors, skipped] = counts;
        let _ = write!(
            body,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\"{}>\n{cases}  </testsuite>\n",
            xml_escape(suite),
            time_attr(*us)
        );
    }
    let [tests, failures, errors, skipped] = total;
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n{body}</testsuites>\n",
        xml_escape(name)
    )
}

/// The run job's JUnit XML, from its episodes in run order (repetitions of a case are adjacent in run order): one
/// test suite per target × setting, so that a CI system shows each target's results in each setting apart.
/// `files` gives a case's file by its id (a built-in case has none). A run that never finished gets one more suite,
/// `unfinished run`, whose one test case errors with the count of episodes never run, so CI cannot read the
/// report as a pass.
pub fn run_junit(
    run_id: &str,
    header: &RunHeader,
    episodes: &mut dyn Iterator<Item = EpisodeRecord>,
    files: &std::collections::HashMap<String, String>,
    unfinished: Option<&crate::Unfinished>,
) -> String {
    // Suites in the order their first episode comes, each with its test cases and counts.
    let mut suites: Vec<Suite> = Vec::new();
    let mut tally = |g: &Group| {
        let name = format!("{} / {}", g.target, g.setting);
        let at = match suites.iter().position(|s| s.0 == name) {
            Some(i) => i,
            None => {
                suites.push((name, String::new(), [0; 4], Some(0)));
                suites.len() - 1
            }
        };
        let (_, cases, counts, us) = &mut suites[at];
        *us = us.zip(g.us).map(|(a, b)| a.saturating_add(b));
        let (f, e, s) = g.write(cases, files.get(&g.case).map(String::as_str));
        counts[0] += 1;
        counts[1] += u64::from(f);
        counts[2] += u64::from(e);
        counts[3] += u64::from(s);
    };
    let mut group: Option<Group> = None;
    for r in episodes {
        match &mut group {
            Some(g) if g.same(&r) => g.add(&r),
            _ => {
                if let Some(g) = group.take() {
                    tally(&g);
                }
                let mut g = Group::new(&r);
                g.add(&r);
                group = Some(g);
            }
        }
    }
    if let Some(g) = group {
        tally(&g);
    }
    if let Some(u) = unfinished {
        let case = format!(
            "    <testcase classname=\"gauntlet.run\" name=\"{} episodes never run\"><error message=\"{}\"/></testcase>\n",
            u.missing(),
            xml_escape(&u.sentence())
        );
        suites.push(("unfinished run".into(), case, [1, 0, 1, 0], None));
    }
    document_of(
        &format!("gauntlet run {run_id} (defense {})", header.defense),
        &suites,
    )
}

/// The red-team job's JUnit XML: one test case per red-team case.
pub fn redteam_junit(run_id: &str, cases: &mut dyn Iterator<Item = serde_json::Value>) -> String {
    let mut out = String::new();
    let mut counts = [0u64; 4];
    for c in cases {
        let s = |k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or("");
        counts[0] += 1;
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"#{} {} / {} / {}\">",
            xml_escape(&format!("{}/{}", s("vulnerability"), s("subtype"))),
            c.get("index").and_then(|v| v.as_u64()).unwrap_or(0),
            xml_escape(s("attack")),
            xml_escape(s("target")),
            xml_escape(&s("input").chars().take(60).collect::<String>())
        );
        let reason = xml_escape(s("reason"));
        match s("outcome") {
            "fail" => {
                counts[1] += 1;
                let _ = write!(
                    out,
                    "\n      <failure message=\"the target failed this case\" type=\"fail\">{reason}</failure>\n    "
                );
            }
            "error" => {
                counts[2] += 1;
                let _ = write!(
                    out,
                    "\n      <error message=\"errored\" type=\"error\">{}</error>\n    ",
                    xml_escape(s("error"))
                );
            }
            "unjudged" => {
                counts[3] += 1;
                out.push_str("\n      <skipped message=\"unjudged (no judge model)\"/>\n    ");
            }
            _ => {}
        }
        out.push_str("</testcase>\n");
    }
    document(&format!("gauntlet redteam {run_id}"), &out, counts)
}

/// The privilege job's JUnit XML: one test case per defense, failing when the defense blocks a call its tasks
/// need (sufficiency below 1, so its other scores do not count).
pub fn privilege_junit(run_id: &str, scores: &[gauntlet_privilege::score::DefenseScore]) -> String {
    let mut out = String::new();
    let mut failures = 0;
    for s in scores {
        let _ = write!(
            out,
            "    <testcase classname=\"privilege\" name=\"{}\">",
            xml_escape(&s.defense)
        );
        if !s.gate_passed {
            failures += 1;
            let _ = write!(
                out,
                "\n      <failure message=\"sufficiency {}/{}: the defense blocks calls its tasks need\" type=\"sufficiency\"/>\n    ",
                s.sufficiency.k, s.sufficiency.n
            );
        }
        out.push_str("</testcase>\n");
    }
    document(
        &format!("gauntlet privilege {run_id}"),
        &out,
        [scores.len() as u64, failures, 0, 0],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escaping_leaves_no_markup_and_no_illegal_characters() {
        let s = xml_escape("<a href='x'>&\"\u{0}\u{1b}\t</a>");
        assert_eq!(s, "&lt;a href=&apos;x&apos;&gt;&amp;&quot;\t&lt;/a&gt;");
    }
}
