//! CI gates: `--fail-on 'asr > 0.10'` conditions over a job's metrics. A gate fails when its condition holds
//! for any scope (target, defense) — or when the metric cannot be computed, since a gate that cannot be
//! checked must not read as passed.

use gauntlet_cases::Summary;
use gauntlet_core::Setting;
use std::collections::BTreeMap;
use std::fmt;

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }
}

/// One `--fail-on` condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The metric's name.
    pub metric: String,
    /// The comparison.
    pub op: Op,
    /// The threshold.
    pub value: f64,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.metric, self.op.as_str(), self.value)
    }
}

/// Why a gate expression is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--fail-on `{expr}`: {why}")]
pub struct GateError {
    /// The expression.
    pub expr: String,
    /// What is wrong with it.
    pub why: String,
}

impl Gate {
    /// Parses `METRIC OP NUMBER` (spaces optional), checking the metric against `known`.
    pub fn parse(expr: &str, known: &[&str]) -> Result<Gate, GateError> {
        let err = |why: String| GateError {
            expr: expr.to_string(),
            why,
        };
        let ops = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            (">", Op::Gt),
            ("<", Op::Lt),
        ];
        let Some((at, sym, op)) = ops
            .iter()
            .filter_map(|(sym, op)| expr.find(sym).map(|at| (at, *sym, *op)))
            .min_by_key(|(at, sym, _)| (*at, std::cmp::Reverse(sym.len())))
        else {
            return Err(err(
                "expected METRIC OP NUMBER, OP one of > >= < <= == !=".into()
            ));
        };
        let metric = expr[..at].trim();
        let number = expr[at + sym.len()..].trim();
        if metric.is_empty() {
            return Err(err("the metric is missing".into()));
        }
        if !known.contains(&metric) {
            return Err(err(format!(
                "unknown metric `{metric}`; this job has {}",
                known.join(", ")
            )));
        }
        let value: f64 = number
            .strip_suffix('%')
            .map_or_else(
                || number.parse(),
                |p| p.trim().parse().map(|v: f64| v / 100.0),
            )
            .map_err(|_| err(format!("`{number}` is not a number")))?;
        if !value.is_finite() {
            return Err(err(format!("`{number}` is not a finite number")));
        }
        Ok(Gate {
            metric: metric.to_string(),
            op,
            value,
        })
    }
}

/// A job's metrics: per scope (a target, a defense, or `all`), metric name → value (`None`: not computable).
pub type Metrics = BTreeMap<String, BTreeMap<String, Option<f64>>>;

/// One gate's verdict in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct GateResult {
    /// The gate.
    pub gate: Gate,
    /// The scope.
    pub scope: String,
    /// The metric's value, if computable.
    pub value: Option<f64>,
    /// Whether the gate failed here.
    pub failed: bool,
}

impl fmt::Display for GateResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self
            .value
            .map_or_else(|| "cannot be computed".into(), |v| format!("is {v:.4}"));
        write!(
            f,
            "{} `{}` [{}]: {} {v}",
            if self.failed { "FAILED" } else { "passed" },
            self.gate,
            self.scope,
            self.gate.metric
        )
    }
}

/// Checks every gate in every scope that has the metric. A gate whose metric no scope has (`asr.indirect` in a
/// run without `indirect`) checked nothing, so it fails, in scope `none`.
pub fn check(gates: &[Gate], metrics: &Metrics) -> Vec<GateResult> {
    let mut out = Vec::new();
    for g in gates {
        let before = out.len();
        for (scope, m) in metrics {
            let Some(v) = m.get(&g.metric) else { continue };
            out.push(GateResult {
                gate: g.clone(),
                scope: scope.clone(),
                value: *v,
                failed: v.is_none_or(|v| g.op.holds(v, g.value)),
            });
        }
        if out.len() == before {
            out.push(GateResult {
                gate: g.clone(),
                scope: "none".into(),
                value: None,
                failed: true,
            });
        }
    }
    out
}

/// The run job's metric names.
pub const RUN_METRICS: &[&str] = &[
    "asr",
    "asr.direct",
    "asr.indirect",
    "asr.multi",
    "utility",
    "utility.benign",
    "utility.direct",
    "utility.indirect",
    "utility.multi",
    "errored",
    "errored_rate",
    "undetermined",
    "undetermined_count",
];

/// The run job's metrics per target: `asr` over the attack settings, `utility` (task success) in benign, the
/// same per setting, errored episodes (count and share), and undetermined ones as a share of all episodes
/// (`undetermined`, so `undetermined > 0.05` gates on it: an unknown verdict is not a pass) and as a count.
pub fn run_metrics(summary: &Summary) -> Metrics {
    let mut out = Metrics::new();
    let mut totals: BTreeMap<String, gauntlet_cases::run::Counts> = BTreeMap::new();
    let mut attack: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for row in &summary.by_target_setting {
        let m = out.entry(row.target.clone()).or_default();
        let c = &row.counts;
        let t = totals.entry(row.target.clone()).or_default();
        t.episodes += c.episodes;
        t.errored += c.errored;
        t.undetermined += c.undetermined;
        if row.setting.is_attack() {
            m.insert(format!("asr.{}", row.setting), row.asr.value);
            let a = attack.entry(row.target.clone()).or_default();
            a.0 += c.violated;
            a.1 += c.valid;
        }
        m.insert(format!("utility.{}", row.setting), row.utility.value);
        if row.setting == Setting::Benign {
            m.insert("utility".into(), row.utility.value);
        }
    }
    for (target, m) in &mut out {
        let (v, n) = attack.get(target).copied().unwrap_or((0, 0));
        if attack.contains_key(target) {
            m.insert("asr".into(), (n > 0).then(|| v as f64 / n as f64));
        }
        if let Some(t) = totals.get(target) {
            let share = |n: u64| (t.episodes > 0).then(|| n as f64 / t.episodes as f64);
            m.insert("errored".into(), Some(t.errored as f64));
            m.insert("errored_rate".into(), share(t.errored));
            m.insert("undetermined".into(), share(t.undetermined));
            m.insert("undetermined_count".into(), Some(t.undetermined as f64));
        }
    }
    out
}

/// The red-team job's metric names.
pub const REDTEAM_METRICS: &[&str] = &[
    "pass_rate",
    "failing",
    "errored",
    "errored_rate",
    "unjudged",
    "unjudged_count",
];

/// The red-team job's metrics per target and for `all`: the pass rate (over judged cases), failing and errored
/// counts, and unjudged cases as a share of all cases (`unjudged`, so `unjudged > 0.2` gates on it: a case nobody
/// judged is not a pass) and as a count.
pub fn redteam_metrics(report: &gauntlet_redteam::job::Report) -> Metrics {
    let tally = |t: &gauntlet_redteam::job::Tally| {
        let total = t.passing + t.failing + t.errored + t.unjudged;
        let share = |n: u64| (total > 0).then(|| n as f64 / total as f64);
        BTreeMap::from([
            ("pass_rate".to_string(), t.pass_rate),
            ("failing".to_string(), Some(t.failing as f64)),
            ("errored".to_string(), Some(t.errored as f64)),
            ("errored_rate".to_string(), share(t.errored)),
            ("unjudged".to_string(), share(t.unjudged)),
            ("unjudged_count".to_string(), Some(t.unjudged as f64)),
        ])
    };
    let mut out: Metrics = report
        .by_target
        .iter()
        .map(|(k, t)| (k.clone(), tally(t)))
        .collect();
    out.insert("all".into(), tally(&report.overall));
    out
}

/// The privilege job's metric names.
pub const PRIVILEGE_METRICS: &[&str] = &[
    "leakage",
    "sufficiency",
    "over_restriction",
    "attack_admission",
];

/// The privilege job's metrics per defense.
pub fn privilege_metrics(scores: &[gauntlet_privilege::score::DefenseScore]) -> Metrics {
    scores
        .iter()
        .map(|s| {
            (
                s.defense.clone(),
                BTreeMap::from([
                    ("leakage".to_string(), s.leakage),
                    ("sufficiency".to_string(), s.sufficiency.value),
                    ("over_restriction".to_string(), s.over_restriction.value),
                    ("attack_admission".to_string(), s.attack_admission.value),
                ]),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_parse_with_or_without_spaces_and_percentages() {
        let g = Gate::parse("asr > 0.10", RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((g.metric.as_str(), g.op, g.value), ("asr", Op::Gt, 0.10));
        let g = Gate::parse("utility<=90%", RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((g.op, g.value), (Op::Le, 0.9));
        let g = Gate::parse("asr.direct>=0", RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.op, Op::Ge);
    }

    #[test]
    fn bad_gates_say_what_is_wrong() {
        let e = Gate::parse("asr 0.1", RUN_METRICS).err().map(|e| e.why);
        assert!(e.is_some_and(|w| w.contains("METRIC OP NUMBER")));
        let e = Gate::parse("asrr > 0.1", RUN_METRICS).err().map(|e| e.why);
        assert!(e.is_some_and(|w| w.contains("unknown metric `asrr`")));
        let e = Gate::parse("asr > lots", RUN_METRICS).err().map(|e| e.why);
        assert!(e.is_some_and(|w| w.contains("not a number")));
        let e = Gate::parse("> 1", RUN_METRICS).err().map(|e| e.why);
        assert!(e.is_some_and(|w| w.contains("missing")));
    }

    #[test]
    fn a_gate_fails_where_it_holds_or_cannot_be_computed() {
        let g = Gate::parse("asr > 0.1", RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        let m: Metrics = BTreeMap::from([
            (
                "a".to_string(),
                BTreeMap::from([("asr".to_string(), Some(0.05))]),
            ),
            (
                "b".to_string(),
                BTreeMap::from([("asr".to_string(), Some(0.5))]),
            ),
            ("c".to_string(), BTreeMap::from([("asr".to_string(), None)])),
        ]);
        let r = check(&[g], &m);
        let failed: Vec<_> = r
            .iter()
            .filter(|r| r.failed)
            .map(|r| r.scope.as_str())
            .collect();
        assert_eq!(failed, ["b", "c"]);
        let g = Gate::parse("asr.multi > 0.1", RUN_METRICS).unwrap_or_else(|e| panic!("{e}"));
        let r = check(&[g], &m);
        assert_eq!(r.len(), 1);
        assert!(
            r[0].failed && r[0].scope == "none",
            "a gate that checked nothing fails"
        );
    }

    #[test]
    fn unjudged_is_a_share_of_all_cases_that_a_gate_can_bound() {
        let mut report = gauntlet_redteam::job::Report::default();
        report.overall.passing = 6;
        report.overall.failing = 1;
        report.overall.unjudged = 3;
        report.overall.pass_rate = Some(6.0 / 7.0);
        let m = redteam_metrics(&report);
        assert_eq!(m["all"]["unjudged"], Some(0.3));
        assert_eq!(m["all"]["unjudged_count"], Some(3.0));
        let g = Gate::parse("unjudged > 0.2", REDTEAM_METRICS).unwrap_or_else(|e| panic!("{e}"));
        assert!(check(&[g], &m)[0].failed);
        let g = Gate::parse("unjudged > 30%", REDTEAM_METRICS).unwrap_or_else(|e| panic!("{e}"));
        assert!(!check(&[g], &m)[0].failed);
    }
}
