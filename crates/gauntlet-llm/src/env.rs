//! The environment the model layer reads (API keys, base URLs, header values): the process's variables first, then
//! the values of a `.env` file loaded once at start ([`load_file`]). A `.env` value never overrides a variable that
//! is set, as the SDKs' dotenv loaders behave; the process environment itself is never modified.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// Values read from the `.env` file, if one was loaded.
static FILE: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// A variable: from the process environment, else from the loaded `.env` file.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .or_else(|| FILE.get().and_then(|f| f.get(name).cloned()))
}

/// A `.env` line that is not `NAME=value`, with where it is (line and column 0: the file itself, e.g. unreadable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", located(.file, .line, .column, .message))]
pub struct EnvFileError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// `file:line:column: message`, or `file: message` for the file as a whole.
fn located(file: &str, line: &usize, column: &usize, message: &str) -> String {
    if *line == 0 {
        format!("{file}: {message}")
    } else {
        format!("{file}:{line}:{column}: {message}")
    }
}

/// Parses a `.env` file's text: `NAME=value` lines, optionally `export NAME=value`; `#` comments and blank lines;
/// values bare (a ` #` starts a comment), in single quotes (literal) or in double quotes (with `\n`, `\"`, `\\`).
pub fn parse(file: &str, text: &str) -> Result<BTreeMap<String, String>, EnvFileError> {
    let mut out = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let err = |column: usize, message: &str| EnvFileError {
            file: file.to_string(),
            line: i + 1,
            column,
            message: message.to_string(),
        };
        let line = raw.trim_start();
        let indent = raw.len() - line.len();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (line, indent) = match line.strip_prefix("export ") {
            Some(rest) => (
                rest.trim_start(),
                indent + line.len() - rest.trim_start().len(),
            ),
            None => (line, indent),
        };
        let Some((raw_name, value)) = line.split_once('=') else {
            return Err(err(indent + 1, "expected NAME=value"));
        };
        let name = raw_name.trim_end();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(err(indent + 1, "a variable name is letters, digits and _"));
        }
        let value_at = indent + raw_name.len() + 1 + (value.len() - value.trim_start().len()) + 1;
        let value = value.trim();
        // A quoted value ends at its closing quote; only a comment may follow it.
        let quoted = |q: char, what: &str| -> Result<String, EnvFileError> {
            let rest = &value[1..];
            let mut escaped = false;
            let end = rest.char_indices().find_map(|(i, c)| {
                let found = c == q && !(q == '"' && escaped);
                escaped = q == '"' && c == '\\' && !escaped;
                found.then_some(i)
            });
            let end = end.ok_or_else(|| err(value_at, &format!("unclosed {what} quote")))?;
            let after = rest[end + 1..].trim_start();
            if !(after.is_empty() || after.starts_with('#')) {
                return Err(err(
                    value_at,
                    &format!("text after the closing {what} quote"),
                ));
            }
            Ok(rest[..end].to_string())
        };
        let parsed = if value.starts_with('\'') {
            quoted('\'', "single")?
        } else if value.starts_with('"') {
            unescape(&quoted('"', "double")?)
        } else {
            match value.find(" #") {
                Some(at) => value[..at].trim_end().to_string(),
                None => value.to_string(),
            }
        };
        out.insert(name.to_string(), parsed);
    }
    Ok(out)
}

/// `\n`, `\"` and `\\` in a double-quoted value.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Loads `path` as the `.env` file for this process (once; a second call keeps the first file's values). Returns
/// the names it set that the environment did not already have, for a notice (never the values).
pub fn load_file(path: &Path) -> Result<Vec<String>, EnvFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| EnvFileError {
        file: path.display().to_string(),
        line: 0,
        column: 0,
        message: format!("cannot read: {e}"),
    })?;
    let values = parse(&path.display().to_string(), &text)?;
    let fresh = values
        .keys()
        .filter(|k| std::env::var_os(k).is_none())
        .cloned()
        .collect();
    let _ = FILE.set(values);
    Ok(fresh)
}

/// Loads the file `--env-file` names (an error stops the command), else `.env` in the working directory when there
/// is one (an error there is a warning: the file may be another tool's, and a command that needs no key should run).
pub fn load(named: Option<&Path>) -> Result<(), EnvFileError> {
    if let Some(path) = named {
        return load_file(path).map(|_| ());
    }
    let dotenv = Path::new(".env");
    if dotenv.is_file()
        && let Err(e) = load_file(dotenv)
    {
        eprintln!("warning: .env not read: {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_dotenv_files_use() {
        let text = "# keys\nOPENAI_API_KEY=sk-abc # the key\nexport OPENAI_BASE_URL=\"http://127.0.0.1:8080/v1\"\n\
                    SINGLE='a # b'\nDOUBLE=\"line\\nnext \\\"q\\\"\"\n  INDENTED = spaced  \nEMPTY=\n";
        let v = parse(".env", text).expect("parses");
        assert_eq!(v["OPENAI_API_KEY"], "sk-abc");
        assert_eq!(v["OPENAI_BASE_URL"], "http://127.0.0.1:8080/v1");
        assert_eq!(v["SINGLE"], "a # b");
        assert_eq!(v["DOUBLE"], "line\nnext \"q\"");
        assert_eq!(v["INDENTED"], "spaced");
        assert_eq!(v["EMPTY"], "");
        let v = parse(
            ".env",
            "\u{feff}K=\"v\" # note\nS='a b' # x\nE=\"say \\\"hi\\\"\"\n",
        )
        .expect("parses");
        assert_eq!((v["K"].as_str(), v["S"].as_str()), ("v", "a b"));
        assert_eq!(v["E"], "say \"hi\"");
        assert!(parse(".env", "K=\"v\" extra\n").is_err());
    }

    /// A file that cannot be read is named without a line and column that do not exist.
    #[test]
    fn an_unreadable_file_is_named_without_a_position() {
        let dir = std::env::temp_dir();
        let e = load_file(&dir).expect_err("a directory is no .env file");
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("{}: cannot read:", dir.display())),
            "{shown}"
        );
        assert!(!shown.contains(":0:0"), "{shown}");
    }

    #[test]
    fn bad_lines_name_line_and_column() {
        let e = parse(".env", "A=1\n  not a pair\n").expect_err("no =");
        assert_eq!((e.line, e.column), (2, 3), "{e}");
        assert!(e.to_string().starts_with(".env:2:3: expected NAME=value"));
        let e = parse(".env", "1BAD=x\n").expect_err("name");
        assert_eq!((e.line, e.column), (1, 1));
        let e = parse(".env", "K=\"open\n").expect_err("quote");
        assert!(e.message.contains("unclosed"), "{e}");
    }
}
