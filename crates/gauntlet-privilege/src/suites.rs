//! The probe suite of the privilege job's `--suite` paths: case files and directories (`builtin` or none: the
//! built-in suite), and `agentdojo:FILE` exports, chosen by case patterns, filters and a seeded sample ([`load`]);
//! a suite exported as JSON lines ([`read_exported`]); an AgentDojo export's candidate calls ([`candidates`]). Printing
//! is left to the caller: the problems of a broken suite come back in the error, and each AgentDojo export with
//! labels asserted by rule is handed to a callback as it is read (its note then keeps its place among the
//! messages).

use crate::ProbeSuite;
use gauntlet_cases::suite::{ChoiceError, InvalidSuite, choose, wildcard};
use std::path::{Path, PathBuf};

/// The prefix that marks an AgentDojo export among the `--suite` paths.
const AGENTDOJO: &str = "agentdojo:";

/// Which cases and tasks of the suites a privilege job takes (`--case`, `--filter`, `--limit`, `--seed`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Choice<'a> {
    /// Case or task id patterns (`*` and `?` are wildcards); none takes every one.
    pub cases: &'a [String],
    /// `KEY=VALUE` filters on the cases' risk, env or attack (cases only: AgentDojo tasks have none).
    pub filters: &'a [String],
    /// A sample of this many, drawn with `seed`.
    pub limit: Option<usize>,
    /// The seed of the sample.
    pub seed: u64,
}

/// An AgentDojo export some of whose labels are asserted by rule, not confirmed by execution; its `Display` is
/// the note that says how to confirm them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconfirmed {
    /// The export's path (without `agentdojo:`).
    pub path: String,
    /// How many of its labels are asserted by rule.
    pub asserted: usize,
    /// How many probes it has.
    pub probes: usize,
}

impl std::fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Unconfirmed {
            path,
            asserted,
            probes,
        } = self;
        write!(
            f,
            "note: {asserted} of {probes} AgentDojo labels are asserted by rule, not confirmed by execution; to execute them: \
             gauntlet privilege candidates --suite {path} --out candidates.jsonl, then \
             adapters/agentdojo/execute.py --export {path} --candidates candidates.jsonl --out {path} (docs/privilege.md)"
        )
    }
}

/// Why the probe suite of `--suite` could not be built; the message names the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// `--filter` was given with an AgentDojo suite, whose tasks have nothing to filter on.
    #[error("--filter: AgentDojo tasks have no risk, env or attack; choose them with --case")]
    FilterOnAgentDojo,
    /// Some case files are broken, or the case paths hold none.
    #[error(transparent)]
    Invalid(#[from] InvalidSuite),
    /// A case or task pattern, filter or limit chose nothing.
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    /// An AgentDojo export could not be read or labelled.
    #[error("{0}")]
    AgentDojo(String),
    /// An exported suite cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// An exported suite is not one `privilege export` writes.
    #[error("{path}: {message}")]
    Exported {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The AgentDojo export whose candidates are asked for cannot be read.
    #[error("--suite {path}: cannot read the AgentDojo export")]
    ReadExport {
        /// The export (without `agentdojo:`).
        path: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// The AgentDojo export whose candidates are asked for is not one `export.py` writes.
    #[error("--suite {path}: {message}")]
    Candidates {
        /// The export (without `agentdojo:`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The probe suite of `suites` (case paths, `builtin`, `agentdojo:FILE`; no case path and no export: the built-in
/// suite), generated and labelled, then chosen by `choice`. `unconfirmed` is called for each export with labels
/// asserted by rule, as it is read.
pub fn load(
    suites: &[PathBuf],
    choice: &Choice<'_>,
    unconfirmed: &mut dyn FnMut(&Unconfirmed),
) -> Result<ProbeSuite, SuiteError> {
    let (dojo, cases): (Vec<&PathBuf>, Vec<&PathBuf>) = suites
        .iter()
        .partition(|p| p.to_string_lossy().starts_with(AGENTDOJO));
    // `builtin` names the embedded suite (the default when no case path is given).
    let builtin_named = suites.iter().any(|p| p.as_os_str() == "builtin");
    let cases: Vec<PathBuf> = cases
        .into_iter()
        .filter(|p| p.as_os_str() != "builtin")
        .cloned()
        .collect();
    let mut suite = ProbeSuite::default();
    if !dojo.is_empty() && !choice.filters.is_empty() {
        return Err(SuiteError::FilterOnAgentDojo);
    }
    if !cases.is_empty() || dojo.is_empty() || builtin_named {
        // Chosen before generating, so the cases left out are not labelled. With an AgentDojo suite beside them,
        // patterns and the sample are over all tasks (below).
        let chosen = if dojo.is_empty() {
            *choice
        } else {
            Choice {
                filters: choice.filters,
                seed: choice.seed,
                ..Choice::default()
            }
        };
        let loaded = gauntlet_cases::suite::load_valid(&cases)?.cases;
        let mut chosen = choose(
            loaded,
            chosen.cases,
            chosen.filters,
            chosen.limit,
            chosen.seed,
        )?;
        chosen
            .retain(|c| choice.cases.is_empty() || choice.cases.iter().any(|p| wildcard(p, &c.id)));
        suite.tasks.extend(crate::generate(&chosen).tasks);
    }
    for d in dojo {
        let path = d
            .to_string_lossy()
            .trim_start_matches(AGENTDOJO)
            .to_string();
        let (s, asserted) = crate::agentdojo::load_file(&path).map_err(SuiteError::AgentDojo)?;
        if asserted > 0 {
            unconfirmed(&Unconfirmed {
                probes: s.probes().count(),
                path,
                asserted,
            });
        }
        suite.tasks.extend(s.tasks);
    }
    Ok(suite.select(choice.cases, choice.limit, choice.seed)?)
}

/// The suite `privilege export` wrote to `file` (sorted-key JSON lines), to score again.
pub fn read_exported(file: &Path) -> Result<ProbeSuite, SuiteError> {
    let path = || file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|error| SuiteError::Read {
        path: path(),
        error,
    })?;
    ProbeSuite::from_jsonl(&text).map_err(|message| SuiteError::Exported {
        path: path(),
        message,
    })
}

/// The candidate calls of the AgentDojo export `suite` names (`agentdojo:FILE` or FILE), as JSON lines for
/// `adapters/agentdojo/execute.py` ([`crate::agentdojo::candidates`]), with the export's path.
pub fn candidates(suite: &Path) -> Result<(String, String), SuiteError> {
    let path = suite.to_string_lossy();
    let path = path.trim_start_matches(AGENTDOJO).to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => return Err(SuiteError::ReadExport { path, error }),
    };
    match crate::agentdojo::candidates(&text) {
        Ok(lines) => Ok((path, lines)),
        Err(message) => Err(SuiteError::Candidates { path, message }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(ps: &[&str]) -> Vec<PathBuf> {
        ps.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_builtin_suite_is_the_default_and_chosen_by_pattern_and_limit() {
        let all = load(&[], &Choice::default(), &mut |_| {}).expect("built-in suite");
        assert!(!all.tasks.is_empty());
        let named = load(&paths(&["builtin"]), &Choice::default(), &mut |_| {}).expect("builtin");
        assert_eq!(named.tasks.len(), all.tasks.len());
        let first = all.tasks[0].task.clone();
        let only = [first.clone()];
        let one = Choice {
            cases: &only,
            ..Choice::default()
        };
        let s = load(&[], &one, &mut |_| {}).expect("one case");
        assert!(s.tasks.iter().all(|t| t.task == first), "{first}");
        let two = Choice {
            limit: Some(2),
            seed: 7,
            ..Choice::default()
        };
        assert_eq!(load(&[], &two, &mut |_| {}).expect("sample").tasks.len(), 2);
    }

    #[test]
    fn errors_name_the_flag_to_fix() {
        let filters = ["env=mail".to_string()];
        let filtered = Choice {
            filters: &filters,
            ..Choice::default()
        };
        let e = load(&paths(&["agentdojo:x.json"]), &filtered, &mut |_| {}).expect_err("filter");
        assert!(e.to_string().starts_with("--filter: "), "{e}");
        let nowhere = ["no-such-case-*".to_string()];
        let none = Choice {
            cases: &nowhere,
            ..Choice::default()
        };
        assert!(matches!(
            load(&[], &none, &mut |_| {}),
            Err(SuiteError::Choice(ChoiceError::NoMatch(_)))
        ));
        let dir = std::env::temp_dir().join(format!("gauntlet-suites-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let e =
            load(std::slice::from_ref(&dir), &Choice::default(), &mut |_| {}).expect_err("empty");
        assert_eq!(
            e.to_string(),
            format!("--suite: no case files (*.yaml) found in {}", dir.display())
        );
        std::fs::write(dir.join("bad.yaml"), "id: [\n").expect("write");
        let Err(SuiteError::Invalid(InvalidSuite::Problems(ds))) =
            load(std::slice::from_ref(&dir), &Choice::default(), &mut |_| {})
        else {
            panic!("a broken case is refused")
        };
        assert!(!ds.is_empty());
        let e = load(
            &paths(&["agentdojo:/no/such/export.json"]),
            &Choice::default(),
            &mut |_| {},
        )
        .expect_err("missing export");
        assert!(
            e.to_string()
                .starts_with("--suite agentdojo:/no/such/export.json: "),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn exported_suites_and_candidates_name_the_file() {
        let e = read_exported(Path::new("/no/such/suite.jsonl")).expect_err("missing");
        assert_eq!(e.to_string(), "cannot read /no/such/suite.jsonl");
        assert!(std::error::Error::source(&e).is_some());
        let e = candidates(Path::new("agentdojo:/no/such/export.json")).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "--suite /no/such/export.json: cannot read the AgentDojo export"
        );
        let all = load(&[], &Choice::default(), &mut |_| {}).expect("built-in suite");
        let dir = std::env::temp_dir().join(format!("gauntlet-exported-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("suite.jsonl");
        std::fs::write(&file, all.to_jsonl()).expect("write");
        let back = read_exported(&file).expect("read back");
        assert_eq!(back.probes().count(), all.probes().count());
        std::fs::write(&file, "not json\n").expect("write");
        let e = read_exported(&file).expect_err("not a suite");
        assert!(
            e.to_string().starts_with(&format!("{}: ", file.display())),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_note_says_how_to_confirm_asserted_labels() {
        let n = Unconfirmed {
            path: "x.json".into(),
            asserted: 3,
            probes: 5,
        };
        let s = n.to_string();
        assert!(
            s.starts_with("note: 3 of 5 AgentDojo labels are asserted by rule"),
            "{s}"
        );
        assert!(s.ends_with("--out x.json (docs/privilege.md)"), "{s}");
    }
}
