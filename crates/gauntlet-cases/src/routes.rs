//! Route files: scripted trajectories written against a suite's cases, each with the judgement it must get,
//! replayed on the cases' initial states (`gauntlet cases routes`). A route file is a case's `checks` kept apart
//! from the case — a held-out set written by someone who has not seen the verifiers — and the report counts
//! false negatives (harm that was not found) and false positives (harmless near-misses called violations).

use crate::case::{Expect, Step, Trajectory, check_calls, position, yaml_error};
use crate::diagnostic::Diagnostic;
use crate::episode::PreparedCase;
use crate::selftest::replay;
use gauntlet_core::Rate;
use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    case: Spanned<String>,
    expect: Spanned<String>,
    note: String,
    #[serde(default)]
    calls: Vec<Step>,
    #[serde(default)]
    reply: String,
}

/// A route: a trajectory for one case.
#[derive(Debug, Clone)]
pub struct Route {
    /// The case's id.
    pub case: String,
    /// The file it came from.
    pub file: String,
    /// The trajectory and the judgement it must get.
    pub trajectory: Trajectory,
}

/// Why route files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RouteFilesError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The files hold problems, each with file, line and column.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    /// The files hold no route.
    #[error(
        "no routes in the given files: a route file is a YAML list of {{case, expect, note, calls, reply}} (see docs/cases.md)"
    )]
    Empty,
}

/// The routes of `files`, in order; every problem of every file at once.
pub fn load_route_files(files: &[std::path::PathBuf]) -> Result<Vec<Route>, RouteFilesError> {
    let (mut routes, mut diags) = (Vec::new(), Vec::new());
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|source| RouteFilesError::Read {
            path: name.clone(),
            source,
        })?;
        match load_routes(&name, &text) {
            Ok(r) => routes.extend(r),
            Err(d) => diags.extend(d),
        }
    }
    match (diags.is_empty(), routes.is_empty()) {
        (false, _) => Err(RouteFilesError::Invalid(diags)),
        (true, true) => Err(RouteFilesError::Empty),
        (true, false) => Ok(routes),
    }
}

/// Parses a route file: a YAML list of `{case, expect, note, calls, reply}`, `expect` one of `violated`, `held`,
/// `task_success`, `undetermined`. Every problem is returned with file, line and column.
pub fn load_routes(file: &str, text: &str) -> Result<Vec<Route>, Vec<Diagnostic>> {
    let raw: Vec<Spanned<RawRoute>> =
        serde_saphyr::from_str(text).map_err(|e| vec![yaml_error(file, &e)])?;
    let mut diags = vec![];
    let mut out = vec![];
    for (i, r) in raw.iter().enumerate() {
        let (line, col) = position(r);
        let expect = match r.value.expect.value.as_str() {
            "violated" => Expect::Violated,
            "held" => Expect::Held,
            "task_success" => Expect::TaskSuccess,
            "undetermined" => Expect::Undetermined,
            other => {
                let (l, c) = position(&r.value.expect);
                diags.push(Diagnostic::new(
                    file,
                    l,
                    c,
                    format!("[{i}].expect: `{other}` is not violated, held, task_success or undetermined"),
                ));
                continue;
            }
        };
        let (calls, d) = check_calls(file, text, &format!("[{i}].calls"), &r.value.calls);
        if !d.is_empty() {
            diags.extend(d);
            continue;
        }
        if calls.is_empty() && r.value.reply.is_empty() {
            diags.push(Diagnostic::new(
                file,
                line,
                col,
                format!("[{i}]: give `calls`, a `reply`, or both"),
            ));
            continue;
        }
        out.push(Route {
            case: r.value.case.value.clone(),
            file: file.to_string(),
            trajectory: Trajectory {
                expect,
                note: r.value.note.clone(),
                calls,
                reply: r.value.reply.clone(),
                line,
            },
        });
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// The judgement of one route.
#[derive(Debug, Clone)]
pub struct RouteResult {
    /// The route.
    pub route: Route,
    /// `None` when it got the judgement it expects; otherwise what it got and why. A route whose case is not
    /// in the suite fails with that reason.
    pub failure: Option<String>,
}

/// Replays every route on its case.
pub fn replay_routes(cases: &[PreparedCase], routes: &[Route]) -> Vec<RouteResult> {
    routes
        .iter()
        .map(|r| {
            let failure = match cases.iter().find(|c| c.case.id == r.case) {
                None => Some(format!("no case `{}` in the suite", r.case)),
                Some(pc) => replay(pc, &r.trajectory),
            };
            RouteResult {
                route: r.clone(),
                failure,
            }
        })
        .collect()
}

/// Writes the report of `cases routes`: each route that did not get its expected judgement, the rate per
/// expected judgement, and a total line. Returns how many failed.
pub fn report(results: &[RouteResult], out: &mut dyn std::io::Write) -> std::io::Result<usize> {
    for r in results {
        if let Some(why) = &r.failure {
            let (t, file, case) = (&r.route.trajectory, &r.route.file, &r.route.case);
            let (expect, note) = (t.expect.as_str(), &t.note);
            writeln!(
                out,
                "FAIL  {file}:{} {case} ({expect}: {note}): {why}",
                t.line
            )?;
        }
    }
    for (e, rate) in rates(results) {
        let what = match e {
            Expect::Violated => " (the rest are false negatives)",
            Expect::Held => " (the rest are false positives or undetermined)",
            _ => "",
        };
        writeln!(
            out,
            "{:<13} {}/{} as expected{what}",
            e.as_str(),
            rate.k,
            rate.n
        )?;
    }
    let failed = results.iter().filter(|r| r.failure.is_some()).count();
    writeln!(
        out,
        "routes: {} passed, {failed} failed",
        results.len() - failed
    )?;
    Ok(failed)
}

/// How a set of routes fared, per expected judgement: `(expected, matched / routes)`. The miss rate of
/// `violated` routes is the verifiers' false-negative rate; that of `held` routes, their false-positive rate.
pub fn rates(results: &[RouteResult]) -> Vec<(Expect, Rate)> {
    [
        Expect::Violated,
        Expect::Held,
        Expect::TaskSuccess,
        Expect::Undetermined,
    ]
    .into_iter()
    .filter_map(|e| {
        let of: Vec<&RouteResult> = results
            .iter()
            .filter(|r| r.route.trajectory.expect == e)
            .collect();
        (!of.is_empty()).then(|| {
            let ok = of.iter().filter(|r| r.failure.is_none()).count() as u64;
            (e, Rate::new(ok, of.len() as u64))
        })
    })
    .collect()
}
