//! `gauntlet init`: a folder to start from — one worked case (a built-in one, renumbered, that passes lint and
//! self-tests), a commented config file, and a `.gitignore` for the run store and `.env`. Nothing is overwritten.

use crate::embedded::BUILTIN_SUITE;
use std::path::{Path, PathBuf};

/// The built-in case the example is made from.
const EXAMPLE_FROM: &str = "suites/builtin/mail/mail.credential-exfiltration.001.yaml";
/// Its id, and the example's.
const EXAMPLE_IDS: (&str, &str) = (
    "mail.credential-exfiltration.001",
    "mail.credential-exfiltration.901",
);

const CASE_HEADER: &str = "\
# An example safety case: a copy of the built-in mail.credential-exfiltration.001, renumbered. Change it, or add
# files beside it; then `gauntlet cases lint cases/` (every problem with file:line:column), `gauntlet cases selftest
# cases/` (the reference agents and the counter-trajectories under `checks`) and `gauntlet run --suite cases/`.
# The fields are explained in docs/cases.md; the tools and the state they leave in docs/tools.md.
";

const CONFIG: &str = "\
# Gauntlet's config file: `gauntlet run --config gauntlet.yaml …`. Keys never go here: only the names of the
# variables that hold them (set them in the environment, or in a .env file in the directory you run gauntlet from,
# or name one with --env-file). Uncomment to use.
#
# providers:
#   openai: {price_in: 0.40, price_out: 1.60}             # USD per million tokens, for the ledger and --budget
#   local: {base_url: \"http://127.0.0.1:8080/v1\"}         # any OpenAI-compatible server: --agent local/MODEL
# targets:
#   openai/gpt-4.1-mini: {system_prompt: \"You are Acme's assistant.\", max_steps: 8}
#   http://127.0.0.1:9000/chat: {headers: {Authorization: \"$APP_TOKEN\"}}
# pool: {concurrency: 4, timeout_secs: 120, max_tokens: {judge: 2048}}
providers: {}
targets: {}
pool: {}
";

const GITIGNORE: &str = "\
# The run store and the response cache (gauntlet run --store, --cache)
.gauntlet/
# API keys
.env
";

/// Why the folder could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// Files the folder already has: none is overwritten.
    #[error("{} already exist(s), not overwritten: {}", .0.len(), .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Exists(Vec<PathBuf>),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The built-in case the example is made from is missing (a build without the built-in suite).
    #[error("the built-in suite has no {EXAMPLE_FROM}")]
    NoExample,
}

/// The files of a new folder at `dir`, with their contents.
pub fn files(dir: &Path) -> Result<Vec<(PathBuf, String)>, InitError> {
    let source = BUILTIN_SUITE
        .iter()
        .find(|(p, _)| *p == EXAMPLE_FROM)
        .map(|(_, t)| *t)
        .ok_or(InitError::NoExample)?;
    let case = format!(
        "{CASE_HEADER}{}",
        source.replacen(
            &format!("id: {}", EXAMPLE_IDS.0),
            &format!("id: {}", EXAMPLE_IDS.1),
            1
        )
    );
    Ok(vec![
        (
            dir.join("cases").join(format!("{}.yaml", EXAMPLE_IDS.1)),
            case,
        ),
        (dir.join("gauntlet.yaml"), CONFIG.to_string()),
        (dir.join(".gitignore"), GITIGNORE.to_string()),
    ])
}

/// Writes the folder at `dir`, refusing if the case or the config file exists (an existing `.gitignore`, as in any
/// git repository, is left as it is). Returns the files written.
pub fn write(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    let files: Vec<(PathBuf, String)> = files(dir)?
        .into_iter()
        .filter(|(p, _)| !(p.ends_with(".gitignore") && p.exists()))
        .collect();
    let existing: Vec<PathBuf> = files
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| p.exists())
        .collect();
    if !existing.is_empty() {
        return Err(InitError::Exists(existing));
    }
    for (path, text) in &files {
        let write = || {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // `create_new`: a file that appeared since the check above is not overwritten either.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            std::io::Write::write_all(&mut f, text.as_bytes())
        };
        write().map_err(|source| InitError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// [`write`] at `dir` (default: the working directory), and what to tell the user: the files written and what to
/// run next.
pub fn write_here(dir: Option<&Path>) -> Result<String, InitError> {
    let dir = dir.unwrap_or(Path::new("."));
    let mut told: String = write(dir)?
        .iter()
        .map(|f| format!("wrote {}\n", f.display()))
        .collect();
    let cases = dir.join("cases");
    told.push_str(&format!(
        "next: gauntlet cases selftest {0} && gauntlet run --suite {0}\n",
        cases.display()
    ));
    Ok(told)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_case_loads_and_nothing_is_overwritten() {
        let dir = std::env::temp_dir().join(format!("gauntlet-init-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let written = write(&dir).expect("a new folder");
        assert_eq!(written.len(), 3);
        let loaded = crate::load(&crate::Source::Paths(vec![dir.join("cases")]));
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        assert_eq!(loaded.cases[0].id, EXAMPLE_IDS.1);
        assert!(matches!(write(&dir), Err(InitError::Exists(e)) if e.len() == 2));
        // In a folder that already has a .gitignore (any git repository), it is kept.
        let other = dir.join("repo");
        std::fs::create_dir_all(&other).expect("dir");
        std::fs::write(other.join(".gitignore"), "target/\n").expect("gitignore");
        assert_eq!(write(&other).expect("written").len(), 2);
        assert_eq!(
            std::fs::read_to_string(other.join(".gitignore"))
                .ok()
                .as_deref(),
            Some("target/\n")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
