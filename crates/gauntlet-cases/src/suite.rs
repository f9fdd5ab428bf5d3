//! Suites: sets of cases, from the embedded built-in suite or from files and directories.

use crate::case::{Case, load_case};
use crate::diagnostic::Diagnostic;
use crate::embedded::BUILTIN_SUITE;
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
                collect(p, &mut files, &mut diagnostics);
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
