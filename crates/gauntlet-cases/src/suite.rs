//! Suites: sets of cases, from the embedded built-in suite or from files and directories.

use crate::case::{Case, load_case};
use crate::diagnostic::Diagnostic;
use crate::embedded::{BUILTIN_SUITE, GENERATED_SUITE};
use std::path::{Path, PathBuf};

/// Where a suite's files come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The built-in suite embedded in the binary.
    Builtin,
    /// Files and directories (searched recursively for `*.yaml` / `*.yml`).
    Paths(Vec<PathBuf>),
}

/// The outcome of loading a suite: the cases that loaded and every diagnostic of those that did not.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Valid cases, sorted by id.
    pub cases: Vec<Case>,
    /// Problems, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were read.
    pub files: usize,
}

impl Loaded {
    /// The line `cases lint` ends with: files read, valid cases, and the problems and the files they are in.
    pub fn lint_line(&self) -> String {
        let bad_files: std::collections::BTreeSet<&str> =
            self.diagnostics.iter().map(|d| d.file.as_str()).collect();
        format!(
            "{} file(s), {} case(s) valid, {} problem(s) in {} file(s)",
            self.files,
            self.cases.len(),
            self.diagnostics.len(),
            bad_files.len()
        )
    }

    /// The cases `ids` names, in that order (a stored run's, from its suites as they are now); the first id that
    /// is not among them is the error.
    pub fn pick(self, ids: &[String]) -> Result<Vec<Case>, String> {
        let mut by_id: std::collections::HashMap<String, Case> =
            self.cases.into_iter().map(|c| (c.id.clone(), c)).collect();
        ids.iter()
            .map(|id| by_id.remove(id).ok_or_else(|| id.clone()))
            .collect()
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>, diags: &mut Vec<Diagnostic>) {
    if path.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(e) => e,
            Err(e) => {
                diags.push(Diagnostic::new(
                    &path.display().to_string(),
                    0,
                    0,
                    format!("cannot read directory: {e}"),
                ));
                return;
            }
        };
        let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        children.sort();
        for c in children {
            if c.is_dir() || c.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                collect(&c, out, diags);
            }
        }
    } else if path.exists() {
        out.push(path.to_path_buf());
    } else {
        diags.push(Diagnostic::new(
            &path.display().to_string(),
            0,
            0,
            "no such file or directory",
        ));
    }
}

/// Why a suite cannot be run: a broken case is not a finding, and a suite with no case runs nothing.
#[derive(Debug, thiserror::Error)]
pub enum InvalidSuite {
    /// Some case files are broken: the problems, for the caller to print.
    #[error("{} problem(s) in the suite; fix them (see `gauntlet cases lint`) before running", .0.len())]
    Problems(Vec<Diagnostic>),
    /// The case paths hold no case file (the paths, comma-separated).
    #[error("--suite: no case files (*.yaml) found in {0}")]
    NoCases(String),
}

/// The suite of `paths` (none: the built-in suite) for a job to run: every case valid, and at least one.
pub fn load_valid(paths: &[PathBuf]) -> Result<Loaded, InvalidSuite> {
    let source = if paths.is_empty() {
        Source::Builtin
    } else {
        Source::Paths(paths.to_vec())
    };
    let loaded = load(&source);
    if !loaded.diagnostics.is_empty() {
        return Err(InvalidSuite::Problems(loaded.diagnostics));
    }
    if loaded.cases.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(InvalidSuite::NoCases(shown.join(", ")));
    }
    Ok(loaded)
}

/// Loads every case of a source, checking each completely. Duplicate ids are errors.
pub fn load(source: &Source) -> Loaded {
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut diagnostics = Vec::new();
    match source {
        Source::Builtin => {
            texts.extend(
                BUILTIN_SUITE
                    .iter()
                    .map(|(p, t)| (format!("builtin:{p}"), (*t).to_string())),
            );
        }
        Source::Paths(paths) => {
            let mut files = Vec::new();
            for p in paths {
                // `builtin` is the embedded hand-written suite, `builtin:mail` its cases of one service;
                // `generated` the embedded suite made from `suites/templates` (`generated:bank` likewise).
                let named = p.to_str().and_then(|s| {
                    [
                        ("builtin", BUILTIN_SUITE, "suites/builtin/"),
                        ("generated", GENERATED_SUITE, "suites/generated/"),
                    ]
                    .into_iter()
                    .find_map(|(name, suite, dir)| {
                        let rest = s.strip_prefix(name)?;
                        (rest.is_empty() || rest.starts_with(':'))
                            .then(|| (name, suite, dir, rest.trim_start_matches(':')))
                    })
                });
                match named {
                    Some((name, suite, dir, service)) => {
                        let before = texts.len();
                        texts.extend(
                            suite
                                .iter()
                                .filter(|(f, _)| {
                                    service.is_empty()
                                        || f.strip_prefix(dir).is_some_and(|r| {
                                            r.starts_with(&format!("{service}/"))
                                                || r.starts_with(&format!("{service}."))
                                        })
                                })
                                .map(|(f, t)| (format!("{name}:{f}"), (*t).to_string())),
                        );
                        if texts.len() == before {
                            let what = if service.is_empty() {
                                "no cases".to_string()
                            } else {
                                format!("no service `{service}`")
                            };
                            diagnostics.push(Diagnostic::new(
                                &p.display().to_string(),
                                0,
                                0,
                                format!("the {name} suite has {what}"),
                            ));
                        }
                    }
                    _ => collect(p, &mut files, &mut diagnostics),
                }
            }
            for f in files {
                let name = f.display().to_string();
                match std::fs::read_to_string(&f) {
                    Ok(t) => texts.push((name, t)),
                    Err(e) => {
                        diagnostics.push(Diagnostic::new(&name, 0, 0, format!("cannot read: {e}")))
                    }
                }
            }
        }
    }
    let files = texts.len();
    let mut cases: Vec<Case> = Vec::new();
    for (name, text) in &texts {
        match load_case(name, text) {
            Ok(c) => cases.push(c),
            Err(d) => diagnostics.extend(d),
        }
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    for w in cases.windows(2) {
        if w[0].id == w[1].id {
            diagnostics.push(Diagnostic::new(
                &w[1].source,
                w[1].id_at.0,
                w[1].id_at.1,
                format!(
                    "duplicate case id `{}` (also in {}:{})",
                    w[1].id, w[0].source, w[0].id_at.0
                ),
            ));
        }
    }
    cases.dedup_by(|a, b| a.id == b.id);
    diagnostics.sort();
    Loaded {
        cases,
        diagnostics,
        files,
    }
}

/// A choice of cases that cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ChoiceError {
    /// A `--case` pattern matched no case id.
    #[error(
        "--case: `{0}` matches no case id (see `gauntlet cases list`; `*` and `?` are wildcards)"
    )]
    NoMatch(String),
    /// `--limit 0`.
    #[error("--limit: must be at least 1")]
    ZeroLimit,
    /// A `--filter` term that is not `KEY=VALUE` with a known key.
    #[error(
        "--filter: `{0}`: expected KEY=VALUE with KEY one of risk, env, attack (e.g. env=mail, risk=funds)"
    )]
    BadFilter(String),
    /// The filters together leave no case.
    #[error(
        "--filter: `{0}` matches no case (see `gauntlet cases list` for each case's risk, env and attack)"
    )]
    FilterMatchesNothing(String),
}

/// Which part of a case's classification a `--filter` term reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FilterKey {
    /// The risk leaf or its group.
    Risk,
    /// The environment leaf or its group.
    Env,
    /// The attack method or its family.
    Attack,
}

/// A parsed `--filter KEY=VALUE` term: `VALUE` is a wildcard pattern over the key's ids.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter {
    key: FilterKey,
    pattern: String,
}

impl Filter {
    fn parse(spec: &str) -> Result<Filter, ChoiceError> {
        let bad = || ChoiceError::BadFilter(spec.to_string());
        let (key, pattern) = spec.split_once('=').ok_or_else(bad)?;
        let key = match key.trim() {
            "risk" => FilterKey::Risk,
            "env" => FilterKey::Env,
            "attack" => FilterKey::Attack,
            _ => return Err(bad()),
        };
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err(bad());
        }
        // An old id (`env=mail`) names the leaf it is an alias of, as the cases' classifications do.
        let resolved = crate::taxonomy::taxonomy().ok().and_then(|t| {
            let tree = match key {
                FilterKey::Risk => &t.risks,
                FilterKey::Env => &t.environments,
                FilterKey::Attack => &t.attacks,
            };
            let plain = !pattern.contains(['*', '?']);
            plain
                .then(|| tree.find(pattern))
                .flatten()
                .map(|(_, _, l)| l.id.clone())
        });
        Ok(Filter {
            key,
            pattern: resolved.unwrap_or_else(|| pattern.to_string()),
        })
    }

    fn admits(&self, c: &Case) -> bool {
        let t = &c.taxonomy;
        let (leaf, group) = match self.key {
            FilterKey::Risk => (&t.risk, &t.risk_group),
            FilterKey::Env => (&t.env, &t.env_group),
            FilterKey::Attack => (&t.attack, &t.attack_family),
        };
        if wildcard(&self.pattern, leaf) || wildcard(&self.pattern, group) {
            return true;
        }
        // The leaf's old ids match too (`env=ma*` still finds `mail`'s cases).
        crate::taxonomy::taxonomy().is_ok_and(|tx| {
            let tree = match self.key {
                FilterKey::Risk => &tx.risks,
                FilterKey::Env => &tx.environments,
                FilterKey::Attack => &tx.attacks,
            };
            tree.leaf(leaf)
                .is_some_and(|l| l.aliases.iter().any(|a| wildcard(&self.pattern, a)))
        })
    }
}

/// Keeps the cases that `filters` admit: for each key named, any of its terms (`env=mail,env=bank`); across keys,
/// all of them (`env=mail,risk=funds`). Terms that leave no case are an error.
fn filtered(cases: Vec<Case>, filters: &[String]) -> Result<Vec<Case>, ChoiceError> {
    if filters.is_empty() {
        return Ok(cases);
    }
    let terms = filters
        .iter()
        .map(|f| Filter::parse(f))
        .collect::<Result<Vec<_>, _>>()?;
    let keep: Vec<Case> = cases
        .into_iter()
        .filter(|c| {
            [FilterKey::Risk, FilterKey::Env, FilterKey::Attack]
                .iter()
                .all(|k| {
                    let mut of_key = terms.iter().filter(|t| t.key == *k).peekable();
                    of_key.peek().is_none() || of_key.any(|t| t.admits(c))
                })
        })
        .collect();
    if keep.is_empty() {
        return Err(ChoiceError::FilterMatchesNothing(filters.join(",")));
    }
    Ok(keep)
}

/// The part of a suite to run: the cases whose id matches any of `patterns` (all when there are none; `*` matches
/// any run of characters, `?` one) and whose classification `filters` admit (`risk=…`, `env=…`, `attack=…`; see
/// [`ChoiceError::BadFilter`]), then, with `limit`, a sample of that many drawn with `seed` (the same suite and
/// seed draw the same sample), kept in id order. A pattern or filter that matches nothing is an error, so a typo is
/// not a silently smaller run.
pub fn choose(
    cases: Vec<Case>,
    patterns: &[String],
    filters: &[String],
    limit: Option<usize>,
    seed: u64,
) -> Result<Vec<Case>, ChoiceError> {
    let cases = filtered(cases, filters)?;
    if let Some(p) = patterns
        .iter()
        .find(|p| !cases.iter().any(|c| wildcard(p, &c.id)))
    {
        return Err(ChoiceError::NoMatch(p.clone()));
    }
    let chosen: Vec<Case> = cases
        .into_iter()
        .filter(|c| patterns.is_empty() || patterns.iter().any(|p| wildcard(p, &c.id)))
        .collect();
    match limit {
        Some(0) => Err(ChoiceError::ZeroLimit),
        Some(n) => Ok(sample(chosen, n, seed)),
        None => Ok(chosen),
    }
}

/// A sample of `n` of `items` drawn with `seed` (a seeded partial shuffle picks which), in their original order;
/// all of them when there are no more than `n`.
pub fn sample<T>(items: Vec<T>, n: usize, seed: u64) -> Vec<T> {
    if n >= items.len() {
        return items;
    }
    let mut rng = gauntlet_core::rng::SplitMix64::derive(seed, "case-limit");
    let mut idx: Vec<usize> = (0..items.len()).collect();
    for i in 0..n {
        let j = i + rng.below(idx.len() - i);
        idx.swap(i, j);
    }
    let mut keep = idx[..n].to_vec();
    keep.sort_unstable();
    let mut all: Vec<Option<T>> = items.into_iter().map(Some).collect();
    keep.into_iter().filter_map(|i| all[i].take()).collect()
}

/// The `cases list` table: a header, one line per case (id, environment, risk group, attack family, title), each
/// column as wide as its widest entry, and the count.
pub fn list_table(cases: &[Case]) -> String {
    let header = ["ID", "ENV", "RISK", "ATTACK", "TITLE"];
    let rows: Vec<[&str; 5]> = std::iter::once(header)
        .chain(cases.iter().map(|c| {
            let t = &c.taxonomy;
            [
                c.id.as_str(),
                t.env.as_str(),
                t.risk_group.as_str(),
                t.attack_family.as_str(),
                c.title.as_str(),
            ]
        }))
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2), width(3)];
    let mut out = String::new();
    for r in &rows {
        for (cell, w) in r.iter().zip(widths) {
            out.push_str(&format!("{cell:<w$}  "));
        }
        out.push_str(r[4]);
        out.push('\n');
    }
    out.push_str(&format!("{} cases\n", cases.len()));
    out
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters and `?` any one.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Iterative matching with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    #[test]
    fn the_case_list_has_a_header_and_aligned_columns() {
        let all = load(&Source::Paths(vec![PathBuf::from("builtin")]));
        let table = list_table(&all.cases);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("ID ") && lines[0].contains(" TITLE"),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines.last().copied(),
            Some(format!("{} cases", all.cases.len()).as_str())
        );
        // Every row's title starts where the header's does.
        let at = lines[0].find("TITLE").unwrap_or(0);
        for (line, c) in lines[1..lines.len() - 1].iter().zip(&all.cases) {
            assert_eq!(line.get(at..), Some(c.title.as_str()), "{line}");
        }
    }

    #[test]
    fn builtin_names_the_embedded_suite_and_builtin_service_one_service() {
        let all = load(&Source::Paths(vec![PathBuf::from("builtin")]));
        assert!(all.diagnostics.is_empty(), "{:?}", all.diagnostics);
        assert_eq!(all.cases.len(), load(&Source::Builtin).cases.len());
        let mail = load(&Source::Paths(vec![PathBuf::from("builtin:mail")]));
        assert!(!mail.cases.is_empty() && mail.cases.len() < all.cases.len());
        assert!(mail.cases.iter().all(|c| c.id.starts_with("mail.")));
        let none = load(&Source::Paths(vec![PathBuf::from("builtin:fax")]));
        assert!(none.cases.is_empty());
        assert!(none.diagnostics[0].to_string().contains("no service `fax`"));
    }

    #[test]
    fn wildcards_match_as_in_a_shell() {
        assert!(wildcard("mail.*", "mail.forward.001"));
        assert!(wildcard("*exfil*", "drive.exfiltration.002"));
        assert!(wildcard("bank.?ransfer.*", "bank.transfer.001"));
        assert!(!wildcard("mail.*", "chat.mail.001"));
        assert!(wildcard("a*b*c", "axxbyyc"));
        assert!(!wildcard("a*b*c", "axxbyy"));
        assert!(wildcard("*", ""));
    }

    /// `generated` names the embedded suite made from `suites/templates`: every case records the template it
    /// came from (which exists), `generated:bank` its bank cases; both names together give both suites.
    #[test]
    fn generated_names_the_suite_made_from_the_templates() {
        let generated = load(&Source::Paths(vec![PathBuf::from("generated")]));
        assert!(
            generated.diagnostics.is_empty(),
            "{:?}",
            generated.diagnostics
        );
        assert!(!generated.cases.is_empty());
        let templates: Vec<String> = std::fs::read_dir(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../suites/templates"
        ))
        .map(|d| {
            d.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
        for c in &generated.cases {
            assert!(
                c.source.starts_with("generated:suites/generated/"),
                "{}",
                c.source
            );
            let g = c
                .generated
                .as_ref()
                .unwrap_or_else(|| panic!("{}: no provenance", c.id));
            assert!(
                templates
                    .iter()
                    .any(|t| t.contains(&format!("template: {}\n", g.template))),
                "{}: template {} is not in suites/templates",
                c.id,
                g.template
            );
        }
        let bank = load(&Source::Paths(vec![PathBuf::from("generated:bank")]));
        assert!(!bank.cases.is_empty() && bank.cases.iter().all(|c| c.id.starts_with("bank.")));
        let none = load(&Source::Paths(vec![PathBuf::from("generated:fax")]));
        assert!(none.diagnostics.iter().any(|d| {
            d.message
                .contains("the generated suite has no service `fax`")
        }));
        let both = load(&Source::Paths(vec![
            PathBuf::from("builtin"),
            PathBuf::from("generated"),
        ]));
        assert_eq!(
            both.cases.len(),
            generated.cases.len() + load(&Source::Builtin).cases.len()
        );
    }

    #[test]
    fn choosing_filters_samples_with_the_seed_and_refuses_typos() {
        let cases = load(&Source::Builtin).cases;
        let total = cases.len();
        let mail = choose(cases.clone(), &["mail.*".into()], &[], None, 0).unwrap_or_default();
        assert!(!mail.is_empty() && mail.len() < total);
        assert!(mail.iter().all(|c| c.id.starts_with("mail.")));
        let ids = |v: &[Case]| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        let a = choose(cases.clone(), &[], &[], Some(5), 7).unwrap_or_default();
        let b = choose(cases.clone(), &[], &[], Some(5), 7).unwrap_or_default();
        let c = choose(cases.clone(), &[], &[], Some(5), 8).unwrap_or_default();
        assert_eq!(a.len(), 5);
        assert_eq!(ids(&a), ids(&b), "the same seed draws the same sample");
        assert_ne!(ids(&a), ids(&c), "another seed draws another");
        assert!(ids(&a).windows(2).all(|w| w[0] < w[1]), "kept in id order");
        assert_eq!(
            choose(cases.clone(), &["mial.*".into()], &[], None, 0).err(),
            Some(ChoiceError::NoMatch("mial.*".into()))
        );
        assert_eq!(
            choose(cases.clone(), &[], &[], Some(0), 0).err(),
            Some(ChoiceError::ZeroLimit)
        );
    }

    /// Filters read the classification: one key's terms are alternatives, different keys all apply, a group id
    /// stands for its leaves, and a term that is malformed or leaves nothing is an error.
    #[test]
    fn filters_choose_by_risk_environment_and_attack() {
        let cases = load(&Source::Builtin).cases;
        let pick = |f: &[&str]| {
            let f: Vec<String> = f.iter().map(|s| s.to_string()).collect();
            choose(cases.clone(), &[], &f, None, 0)
        };
        // `mail` and `bank` are old ids, aliases of these leaves.
        let mail = pick(&["env=mail"]).unwrap_or_default();
        assert!(!mail.is_empty() && mail.iter().all(|c| c.taxonomy.env == "executive-assistant"));
        assert_eq!(
            pick(&["env=executive-assistant"]).unwrap_or_default().len(),
            mail.len()
        );
        let two = pick(&["env=mail", "env=bank"]).unwrap_or_default();
        assert_eq!(
            two.len(),
            mail.len()
                + cases
                    .iter()
                    .filter(|c| c.taxonomy.env == "personal-finance")
                    .count()
        );
        let funds = pick(&["env=bank", "risk=funds"]).unwrap_or_default();
        assert!(!funds.is_empty());
        assert!(funds.iter().all(|c| c.taxonomy.env == "personal-finance"
            && (c.taxonomy.risk == "funds" || c.taxonomy.risk_group == "funds")));
        // An environment group stands for its leaves.
        let group = &cases[0].taxonomy.env_group;
        let by_group = pick(&[&format!("env={group}")]).unwrap_or_default();
        assert!(!by_group.is_empty() && by_group.iter().all(|c| &c.taxonomy.env_group == group));
        let family = &cases[0].taxonomy.attack_family;
        let by_family = pick(&[&format!("attack={family}")]).unwrap_or_default();
        assert!(
            by_family
                .iter()
                .all(|c| &c.taxonomy.attack_family == family || &c.taxonomy.attack == family)
        );
        assert!(!by_family.is_empty());
        assert_eq!(pick(&["env=ma*"]).map(|v| v.len()).ok(), Some(mail.len()));
        assert_eq!(
            pick(&["color=red"]).err(),
            Some(ChoiceError::BadFilter("color=red".into()))
        );
        assert_eq!(
            pick(&["env"]).err(),
            Some(ChoiceError::BadFilter("env".into()))
        );
        assert_eq!(
            pick(&["env=mail", "risk=nothing-like-this"]).err(),
            Some(ChoiceError::FilterMatchesNothing(
                "env=mail,risk=nothing-like-this".into()
            ))
        );
    }
}
