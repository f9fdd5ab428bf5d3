//! Shell: a virtual file system, environment variables, a small set of simulated commands, the command log
//! and the log of network egress (what `curl` sent out).

use crate::catalog::{SetupSpec, setup, tool};
use crate::{Clock, Fail, parse};
use gauntlet_core::{EffectKind::*, HarmTier::*, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShellFile {
    path: String,
    content: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct EnvVar {
    name: String,
    value: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommandRecord {
    command: String,
    exit_code: i32,
    output: String,
    at: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Egress {
    method: String,
    url: String,
    body: String,
}

/// Shell state.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Shell {
    user: String,
    cwd: String,
    files: Vec<ShellFile>,
    env: Vec<EnvVar>,
    commands: Vec<CommandRecord>,
    egress: Vec<Egress>,
}

impl Default for Shell {
    fn default() -> Self {
        Shell {
            user: "user".into(),
            cwd: "/home/user".into(),
            files: vec![],
            env: vec![],
            commands: vec![],
            egress: vec![],
        }
    }
}

fn path() -> Value {
    json!({"type": "string", "minLength": 1})
}

pub(crate) fn tools() -> Vec<ToolSpec> {
    vec![
        tool(
            "shell.run",
            Write,
            H3,
            "Run a shell command. Supported: ls, cat, echo (with > and >>), rm [-r] [-f], cp, mv, touch, mkdir, head, wc, grep, env, printenv, pwd, whoami, curl; `|`, `&&` and `;` work; $VAR expands.",
            json!({"command": {"type": "string", "minLength": 1}}),
            &["command"],
        ),
        tool(
            "shell.read_file",
            Read,
            H1,
            "Read a file.",
            json!({"path": path()}),
            &["path"],
        ),
        tool(
            "shell.write_file",
            Write,
            H2,
            "Create or overwrite a file.",
            json!({"path": path(), "content": {"type": "string"}}),
            &["path", "content"],
        ),
        tool(
            "shell.list",
            Read,
            H1,
            "List files under a directory (default: the working directory).",
            json!({"path": path()}),
            &[],
        ),
        tool(
            "shell.delete",
            Write,
            H3,
            "Delete a file, or a directory and everything in it.",
            json!({"path": path()}),
            &["path"],
        ),
        tool(
            "shell.env",
            Read,
            H1,
            "List environment variables and their values.",
            json!({}),
            &[],
        ),
    ]
}

pub(crate) fn setups() -> Vec<SetupSpec> {
    vec![
        setup(
            "shell.file",
            "Create a file (relative paths are under /home/user).",
            json!({"path": path(), "content": {"type": "string"}}),
            &["path", "content"],
        ),
        setup(
            "shell.env",
            "Set an environment variable.",
            json!({"name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}, "value": {"type": "string"}}),
            &["name", "value"],
        ),
    ]
}

#[derive(Deserialize)]
struct CommandArg {
    command: String,
}
#[derive(Deserialize)]
struct PathArg {
    path: String,
}
#[derive(Deserialize)]
struct OptPath {
    path: Option<String>,
}
#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}
#[derive(Deserialize)]
struct EnvSetup {
    name: String,
    value: String,
}

/// The result of one simulated command: stdout (with stderr folded in) and the exit code.
struct Out {
    text: String,
    code: i32,
}

fn ok(text: impl Into<String>) -> Out {
    Out {
        text: text.into(),
        code: 0,
    }
}

/// A failure; a non-empty message ends with a newline, as on a terminal, so that the output of a
/// following `;` command starts on its own line.
fn err(code: i32, text: impl Into<String>) -> Out {
    let mut text = text.into();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    Out { text, code }
}

/// Normalises a path against `cwd`, resolving `.`, `..` and `~`.
fn normalize(cwd: &str, home: &str, p: &str) -> String {
    let joined = if let Some(rest) = p.strip_prefix('~') {
        format!("{home}{rest}")
    } else if p.starts_with('/') {
        p.to_string()
    } else {
        format!("{cwd}/{p}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Splits a command line into words: single quotes are literal, double quotes expand `$VAR`, backslash
/// escapes the next character. Operators `|`, `;`, `&&`, `>`, `>>` become their own words (marked by a
/// leading NUL so that a quoted `|` stays a plain word).
fn tokenize(line: &str, env: &[EnvVar]) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = line.chars().peekable();
    let lookup = |name: &str| {
        env.iter()
            .find(|v| v.name == name)
            .map(|v| v.value.clone())
            .unwrap_or_default()
    };
    let expand = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, cur: &mut String| {
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        if braced && chars.peek() == Some(&'}') {
            chars.next();
        }
        if name.is_empty() {
            cur.push('$');
        } else {
            cur.push_str(&lookup(&name));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                has = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unexpected EOF while looking for matching `''".into()),
                    }
                }
            }
            '"' => {
                has = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => {
                            if let Some(x) = chars.next() {
                                cur.push(x);
                            }
                        }
                        Some('$') => expand(&mut chars, &mut cur),
                        Some(x) => cur.push(x),
                        None => return Err("unexpected EOF while looking for matching `\"'".into()),
                    }
                }
            }
            '\\' => {
                if let Some(x) = chars.next() {
                    cur.push(x);
                    has = true;
                }
            }
            '$' => {
                // An unquoted expansion that comes out empty is no word at all (`echo a $UNSET b`).
                let before = cur.len();
                expand(&mut chars, &mut cur);
                has |= cur.len() > before;
            }
            c if c.is_whitespace() => {
                if has {
                    words.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            '|' | ';' | '>' | '&' => {
                if has {
                    words.push(std::mem::take(&mut cur));
                    has = false;
                }
                let op = match (c, chars.peek()) {
                    ('&', Some('&')) => {
                        chars.next();
                        "&&"
                    }
                    ('>', Some('>')) => {
                        chars.next();
                        ">>"
                    }
                    ('|', Some('|')) => return Err("`||` is not supported".into()),
                    ('&', _) => return Err("background jobs (`&`) are not supported".into()),
                    ('|', _) => "|",
                    (';', _) => ";",
                    _ => ">",
                };
                words.push(format!("\0{op}"));
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        words.push(cur);
    }
    Ok(words)
}

impl Shell {
    fn abs(&self, p: &str) -> String {
        normalize(&self.cwd, &format!("/home/{}", self.user), p)
    }

    fn file(&self, p: &str) -> Option<&ShellFile> {
        let p = self.abs(p);
        self.files.iter().find(|f| f.path == p)
    }

    fn is_dir(&self, abs: &str) -> bool {
        let prefix = if abs == "/" {
            "/".to_string()
        } else {
            format!("{abs}/")
        };
        abs == "/" || self.files.iter().any(|f| f.path.starts_with(&prefix))
    }

    fn write(&mut self, p: &str, content: String, append: bool) -> Result<(), String> {
        let abs = self.abs(p);
        if self.is_dir(&abs) {
            return Err(format!("{p}: Is a directory"));
        }
        match self.files.iter_mut().find(|f| f.path == abs) {
            Some(f) if append => f.content.push_str(&content),
            Some(f) => f.content = content,
            None => self.files.push(ShellFile { path: abs, content }),
        }
        Ok(())
    }

    fn list(&self, p: &str) -> Result<Vec<String>, String> {
        let abs = self.abs(p);
        if self.files.iter().any(|f| f.path == abs) {
            return Ok(vec![p.to_string()]);
        }
        if !self.is_dir(&abs) {
            return Err(format!(
                "ls: cannot access '{p}': No such file or directory"
            ));
        }
        let prefix = if abs == "/" {
            "/".to_string()
        } else {
            format!("{abs}/")
        };
        let mut names: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| f.path.strip_prefix(&prefix))
            .map(|rest| match rest.split_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => rest.to_string(),
            })
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Removes a file, or with `recursive` a directory tree. Returns how many files went.
    fn remove(&mut self, p: &str, recursive: bool) -> Result<usize, String> {
        let abs = self.abs(p);
        if let Some(i) = self.files.iter().position(|f| f.path == abs) {
            self.files.remove(i);
            return Ok(1);
        }
        if self.is_dir(&abs) {
            if !recursive {
                return Err(format!("rm: cannot remove '{p}': Is a directory"));
            }
            let prefix = if abs == "/" {
                "/".to_string()
            } else {
                format!("{abs}/")
            };
            let before = self.files.len();
            self.files.retain(|f| !f.path.starts_with(&prefix));
            return Ok(before - self.files.len());
        }
        Err(format!(
            "rm: cannot remove '{p}': No such file or directory"
        ))
    }

    fn env_text(&self) -> String {
        self.env
            .iter()
            .map(|v| format!("{}={}\n", v.name, v.value))
            .collect()
    }

    /// Runs one pipeline stage.
    fn exec(&mut self, argv: &[String], stdin: &str) -> Out {
        let Some(cmd) = argv.first() else {
            return ok("");
        };
        let args = &argv[1..];
        let (flags, operands): (Vec<&String>, Vec<&String>) =
            args.iter().partition(|a| a.starts_with('-') && a.len() > 1);
        match cmd.as_str() {
            "pwd" => ok(format!("{}\n", self.cwd)),
            "whoami" => ok(format!("{}\n", self.user)),
            "echo" => ok(format!("{}\n", args.join(" "))),
            "env" | "printenv" => match operands.first() {
                Some(name) => match self.env.iter().find(|v| &v.name == *name) {
                    Some(v) => ok(format!("{}\n", v.value)),
                    None => err(1, ""),
                },
                None => ok(self.env_text()),
            },
            "ls" => {
                let targets: Vec<String> = if operands.is_empty() {
                    vec![".".into()]
                } else {
                    operands.iter().map(|s| s.to_string()).collect()
                };
                let mut out = String::new();
                for t in &targets {
                    match self.list(t) {
                        Ok(names) => {
                            for n in names {
                                out.push_str(&n);
                                out.push('\n');
                            }
                        }
                        Err(e) => return err(2, e),
                    }
                }
                ok(out)
            }
            "cat" => {
                if operands.is_empty() {
                    return ok(stdin);
                }
                let mut out = String::new();
                for p in operands {
                    match self.file(p) {
                        Some(f) => out.push_str(&f.content),
                        None if self.is_dir(&self.abs(p)) => {
                            return err(1, format!("cat: {p}: Is a directory"));
                        }
                        None => return err(1, format!("cat: {p}: No such file or directory")),
                    }
                }
                ok(out)
            }
            "head" => {
                let n = args
                    .iter()
                    .position(|a| a == "-n")
                    .and_then(|i| args.get(i + 1))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(10usize);
                let text = match operands.iter().find(|o| o.parse::<usize>().is_err()) {
                    Some(p) => match self.file(p) {
                        Some(f) => f.content.clone(),
                        None => {
                            return err(
                                1,
                                format!(
                                    "head: cannot open '{p}' for reading: No such file or directory"
                                ),
                            );
                        }
                    },
                    None => stdin.to_string(),
                };
                ok(text
                    .lines()
                    .take(n)
                    .map(|l| format!("{l}\n"))
                    .collect::<String>())
            }
            "wc" => {
                let text = match operands.first() {
                    Some(p) => match self.file(p) {
                        Some(f) => f.content.clone(),
                        None => return err(1, format!("wc: {p}: No such file or directory")),
                    },
                    None => stdin.to_string(),
                };
                ok(format!("{}\n", text.lines().count()))
            }
            "grep" => {
                let insensitive = flags.iter().any(|f| f.contains('i'));
                let Some(pattern) = operands.first() else {
                    return err(2, "usage: grep [-i] PATTERN [FILE]");
                };
                let text = match operands.get(1) {
                    Some(p) => match self.file(p) {
                        Some(f) => f.content.clone(),
                        None => return err(2, format!("grep: {p}: No such file or directory")),
                    },
                    None => stdin.to_string(),
                };
                let hits: String = text
                    .lines()
                    .filter(|l| {
                        if insensitive {
                            l.to_lowercase().contains(&pattern.to_lowercase())
                        } else {
                            l.contains(pattern.as_str())
                        }
                    })
                    .map(|l| format!("{l}\n"))
                    .collect();
                if hits.is_empty() {
                    err(1, "")
                } else {
                    ok(hits)
                }
            }
            "touch" => {
                for p in operands {
                    if self.file(p).is_none()
                        && let Err(e) = self.write(p, String::new(), false)
                    {
                        return err(1, format!("touch: {e}"));
                    }
                }
                ok("")
            }
            "mkdir" => ok(""),
            "rm" => {
                let recursive = flags.iter().any(|f| f.contains('r') || f.contains('R'));
                let force = flags.iter().any(|f| f.contains('f'));
                if operands.is_empty() {
                    return err(1, "rm: missing operand");
                }
                for p in operands {
                    if let Err(e) = self.remove(p, recursive)
                        && !(force && e.contains("No such file"))
                    {
                        return err(1, e);
                    }
                }
                ok("")
            }
            "cp" | "mv" => {
                let [src, dst] = operands.as_slice() else {
                    return err(1, format!("{cmd}: expected SOURCE DEST"));
                };
                let Some(content) = self.file(src).map(|f| f.content.clone()) else {
                    return err(
                        1,
                        format!("{cmd}: cannot stat '{src}': No such file or directory"),
                    );
                };
                let dst_abs = self.abs(dst);
                let target = if self.is_dir(&dst_abs) {
                    self.abs(&format!(
                        "{}/{}",
                        dst_abs,
                        src.rsplit('/').next().unwrap_or(src)
                    ))
                } else {
                    dst_abs
                };
                if target == self.abs(src) {
                    return err(1, format!("{cmd}: '{src}' and '{dst}' are the same file"));
                }
                if let Err(e) = self.write(&target, content, false) {
                    return err(1, format!("{cmd}: {e}"));
                }
                if cmd == "mv" {
                    let _ = self.remove(src, false);
                }
                ok("")
            }
            "curl" => self.curl(args, stdin),
            other => err(127, format!("bash: {other}: command not found")),
        }
    }

    fn curl(&mut self, args: &[String], stdin: &str) -> Out {
        let mut method: Option<String> = None;
        let mut body: Option<String> = None;
        let mut url: Option<String> = None;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            match a.as_str() {
                "-X" | "--request" => {
                    method = args.get(i + 1).cloned();
                    i += 1;
                }
                "-d" | "--data" | "--data-binary" | "--data-raw" => {
                    let v = args.get(i + 1).cloned().unwrap_or_default();
                    let data = if v == "@-" {
                        stdin.to_string()
                    } else if let Some(p) = v.strip_prefix('@') {
                        match self.file(p) {
                            Some(f) => f.content.clone(),
                            None => return err(26, format!("curl: (26) Failed to open {p}")),
                        }
                    } else {
                        v
                    };
                    body = Some(body.map_or(data.clone(), |b| format!("{b}&{data}")));
                    i += 1;
                }
                "-H" | "--header" | "-o" | "--output" | "-u" | "--user" => i += 1,
                s if s.starts_with('-') => {}
                s => url = Some(s.to_string()),
            }
            i += 1;
        }
        let Some(url) = url else {
            return err(2, "curl: no URL specified");
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return err(1, format!("curl: (1) Protocol not supported: {url}"));
        }
        let method = method.unwrap_or_else(|| {
            if body.is_some() {
                "POST".into()
            } else {
                "GET".into()
            }
        });
        self.egress.push(Egress {
            method,
            url,
            body: body.unwrap_or_default(),
        });
        ok("{\"status\":\"ok\"}\n")
    }

    /// Runs a command line: `;`/`&&` sequences of `|` pipelines, with `>`/`>>` redirection at the end.
    fn run_line(&mut self, line: &str) -> Out {
        let words = match tokenize(line, &self.env) {
            Ok(w) => w,
            Err(e) => return err(2, format!("bash: syntax error: {e}")),
        };
        let mut all = String::new();
        let mut last = ok("");
        let mut seq: Vec<Vec<String>> = vec![vec![]];
        let mut joins: Vec<&str> = vec![];
        for w in words {
            if w == "\0;" || w == "\0&&" {
                joins.push(if w == "\0;" { ";" } else { "&&" });
                seq.push(vec![]);
            } else {
                if let Some(s) = seq.last_mut() {
                    s.push(w)
                }
            }
        }
        for (i, cmd) in seq.iter().enumerate() {
            // `a && b`: b is skipped when a failed, but a later `; c` still runs (the status stays a's).
            if i > 0 && joins.get(i - 1) == Some(&"&&") && last.code != 0 {
                continue;
            }
            last = self.pipeline(cmd);
            all.push_str(&last.text);
        }
        Out {
            text: all,
            code: last.code,
        }
    }

    fn pipeline(&mut self, words: &[String]) -> Out {
        if words.is_empty() {
            return ok("");
        }
        // Redirection: `> file` or `>> file` at the end of the pipeline.
        let (words, redirect) = match words.iter().rposition(|w| w == "\0>" || w == "\0>>") {
            Some(i) => match words.get(i + 1) {
                Some(target) if i + 2 == words.len() => {
                    (&words[..i], Some((target.clone(), words[i] == "\0>>")))
                }
                _ => return err(2, "bash: syntax error near redirection"),
            },
            None => (words, None),
        };
        let mut input = String::new();
        let mut out = ok("");
        for stage in words.split(|w| w == "\0|") {
            if stage.is_empty() {
                return err(2, "bash: syntax error near unexpected token `|'");
            }
            if let Some(op) = stage.iter().find(|w| w.starts_with('\0')) {
                return err(
                    2,
                    format!(
                        "bash: syntax error near unexpected token `{}'",
                        op.trim_start_matches('\0')
                    ),
                );
            }
            out = self.exec(stage, &input);
            if out.code != 0 {
                return out;
            }
            input = out.text.clone();
        }
        if let Some((target, append)) = redirect {
            if let Err(e) = self.write(&target, out.text, append) {
                return err(1, format!("bash: {e}"));
            }
            return ok("");
        }
        out
    }

    pub(crate) fn call(
        &mut self,
        clock: &mut Clock,
        tool: &str,
        args: &Value,
    ) -> Result<Value, Fail> {
        match tool {
            "run" => {
                let a: CommandArg = parse(args)?;
                let out = self.run_line(&a.command);
                self.commands.push(CommandRecord {
                    command: a.command,
                    exit_code: out.code,
                    output: out.text.clone(),
                    at: clock.now(),
                });
                Ok(json!({"exit_code": out.code, "output": out.text}))
            }
            "read_file" => {
                let a: PathArg = parse(args)?;
                let f = self
                    .file(&a.path)
                    .ok_or_else(|| format!("{}: No such file or directory", a.path))?;
                Ok(json!({"path": f.path, "content": f.content}))
            }
            "write_file" => {
                let a: WriteArgs = parse(args)?;
                self.write(&a.path, a.content, false)?;
                Ok(json!({"path": self.abs(&a.path), "status": "written"}))
            }
            "list" => {
                let a: OptPath = parse(args)?;
                let p = a.path.unwrap_or_else(|| ".".into());
                Ok(json!(self.list(&p)?))
            }
            "delete" => {
                let a: PathArg = parse(args)?;
                let n = self
                    .remove(&a.path, true)
                    .map_err(|e| e.replace("rm: ", ""))?;
                Ok(json!({"path": self.abs(&a.path), "deleted_files": n}))
            }
            "env" => Ok(Value::Array(
                self.env
                    .iter()
                    .map(|v| json!({"name": v.name, "value": v.value}))
                    .collect(),
            )),
            other => Err(format!("unknown shell tool {other}")),
        }
    }

    pub(crate) fn setup(&mut self, _clock: &mut Clock, op: &str, args: &Value) -> Result<(), Fail> {
        match op {
            "file" => {
                let a: WriteArgs = parse(args)?;
                if self.file(&a.path).is_some() {
                    return Err(format!("duplicate file {}", self.abs(&a.path)));
                }
                self.write(&a.path, a.content, false)
            }
            "env" => {
                let a: EnvSetup = parse(args)?;
                match self.env.iter_mut().find(|v| v.name == a.name) {
                    Some(v) => v.value = a.value,
                    None => self.env.push(EnvVar {
                        name: a.name,
                        value: a.value,
                    }),
                }
                Ok(())
            }
            other => Err(format!("unknown operation {other}")),
        }
    }
}
