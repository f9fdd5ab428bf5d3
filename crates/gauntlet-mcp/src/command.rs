//! The command target (`--agent 'cmd:…'`): an external agent process — a coding-agent CLI, an SDK app, a
//! script — run once per user turn, whose tool calls reach the episode's gateway over MCP.
//!
//! Each turn: the episode's MCP endpoint is served on a fresh loopback port with a random bearer token; the
//! episode's working directory gets `prompt.txt`, `mcp.json` (an `mcpServers` config naming the endpoint, as
//! MCP clients read it) and `transcript.json` (the earlier turns); the command line is expanded and run by
//! `sh -c` in the directory Gauntlet was started in (so relative paths in it work); every tool call it makes is mediated by the gateway on the episode's thread;
//! its standard output is the reply. A non-zero exit or a timeout errors the episode.

use crate::{Backend, CallFuture, HttpOptions, ToolInfo, ToolOutput, serve_http};
use gauntlet_agents::{Agent, AgentError, Calibration, Target};
use gauntlet_gateway::Gateway;
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Bytes of a `cmd:` agent's standard output (its reply) and of its standard error kept per turn: a process that
/// prints more cannot make the harness hold it all.
const MAX_OUTPUT: usize = 1 << 20;

/// Template variables of a command line, each replaced by a shell-quoted value.
pub const VARIABLES: [&str; 6] = [
    "{prompt}",
    "{prompt_file}",
    "{mcp_url}",
    "{mcp_token}",
    "{mcp_config}",
    "{workdir}",
];

/// A target that runs a command per turn.
pub struct CommandTarget {
    name: String,
    command: String,
    timeout: Duration,
    runtime: tokio::runtime::Handle,
    /// Where the command runs: the directory Gauntlet was started in, so that `cmd:python3 my_agent.py` finds its
    /// script (the episode's own files are in `{workdir}`).
    launch_dir: Option<std::path::PathBuf>,
}

impl CommandTarget {
    /// A target for `spec` (`cmd:COMMAND LINE`), each turn allowed `timeout`. The MCP endpoints are served on
    /// `runtime`.
    pub fn new(
        spec: &str,
        timeout: Duration,
        runtime: tokio::runtime::Handle,
    ) -> Result<CommandTarget, String> {
        let command = spec
            .strip_prefix("cmd:")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("`{spec}`: a command target is `cmd:COMMAND LINE`"))?;
        Ok(CommandTarget {
            name: spec.to_string(),
            command: command.to_string(),
            timeout,
            runtime,
            launch_dir: std::env::current_dir().ok(),
        })
    }
}

impl Target for CommandTarget {
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&self, _calibration: &Calibration) -> Box<dyn Agent> {
        Box::new(CommandAgent {
            name: self.name.clone(),
            command: self.command.clone(),
            timeout: self.timeout,
            runtime: self.runtime.clone(),
            launch_dir: self.launch_dir.clone(),
            workdir: tempfile::Builder::new()
                .prefix("gauntlet-episode-")
                .tempdir(),
            turns: Vec::new(),
        })
    }
}

/// One episode of a command target.
struct CommandAgent {
    name: String,
    command: String,
    timeout: Duration,
    runtime: tokio::runtime::Handle,
    launch_dir: Option<std::path::PathBuf>,
    workdir: std::io::Result<tempfile::TempDir>,
    turns: Vec<Value>,
}

/// A tool call from the external process, waiting for the episode's thread.
struct Request {
    tool: String,
    args: Value,
    reply: tokio::sync::oneshot::Sender<ToolOutput>,
}

/// The episode's tools, served over MCP; calls are handed to the episode's thread, which owns the gateway.
struct EpisodeBackend {
    tools: Vec<ToolInfo>,
    calls: Mutex<mpsc::Sender<Request>>,
}

impl Backend for EpisodeBackend {
    fn tools(&self) -> Vec<ToolInfo> {
        self.tools.clone()
    }

    fn call(&self, tool: String, args: Value) -> CallFuture<'_> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = self
            .calls
            .lock()
            .map(|tx| tx.send(Request { tool, args, reply }).is_ok())
            .unwrap_or(false);
        Box::pin(async move {
            let gone = || ToolOutput::new(json!({"error": "the episode's turn has ended"}), true);
            if !sent {
                return gone();
            }
            answer.await.unwrap_or_else(|_| gone())
        })
    }
}

/// Quotes `s` for `sh`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// 128 random bits as hex, from the OS.
fn token() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Sends SIGKILL to process group `pgid` (the turn's shell and everything it started).
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(std::process::Stdio::null())
        .status();
}

/// The last lines of a process's error output, for the episode's error.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

impl CommandAgent {
    fn err(&self, message: impl Into<String>) -> AgentError {
        AgentError {
            agent: self.name.clone(),
            message: message.into(),
        }
    }

    fn write(&self, dir: &Path, file: &str, text: &str) -> Result<String, AgentError> {
        let p = dir.join(file);
        std::fs::write(&p, text)
            .map_err(|e| self.err(format!("cannot write {}: {e}", p.display())))?;
        Ok(p.to_string_lossy().into_owned())
    }
}

impl Agent for CommandAgent {
    fn respond(&mut self, user: &str, gateway: &mut Gateway) -> Result<String, AgentError> {
        let dir = match &self.workdir {
            Ok(d) => d.path().to_path_buf(),
            Err(e) => return Err(self.err(format!("cannot make a working directory: {e}"))),
        };
        let token = token().map_err(|e| self.err(format!("cannot make a token: {e}")))?;
        let (tx, rx) = mpsc::channel::<Request>();
        let backend = Arc::new(EpisodeBackend {
            tools: gateway.tools().iter().map(ToolInfo::from).collect(),
            calls: Mutex::new(tx),
        });
        let server = self
            .runtime
            .block_on(serve_http(
                backend,
                "gauntlet-episode",
                true,
                HttpOptions {
                    token: Some(token.clone()),
                    ..HttpOptions::default()
                },
            ))
            .map_err(|e| self.err(format!("cannot serve the episode's MCP endpoint: {e}")))?;
        let url = server.url();
        let config = json!({"mcpServers": {"gauntlet": {
            "type": "http",
            "url": url,
            "headers": {"Authorization": format!("Bearer {token}")},
        }}});
        let result = (|| {
            let prompt_file = self.write(&dir, "prompt.txt", user)?;
            let config_file = self.write(&dir, "mcp.json", &config.to_string())?;
            let transcript = self.write(
                &dir,
                "transcript.json",
                &Value::Array(self.turns.clone()).to_string(),
            )?;
            let workdir = dir.to_string_lossy().into_owned();
            let mut line = self.command.clone();
            for (var, value) in VARIABLES.iter().zip([
                user,
                prompt_file.as_str(),
                url.as_str(),
                token.as_str(),
                config_file.as_str(),
                workdir.as_str(),
            ]) {
                line = line.replace(var, &shell_quote(value));
            }
            let mut child = std::process::Command::new("sh");
            // Its own process group, so the whole tree can be ended with the turn.
            std::os::unix::process::CommandExt::process_group(&mut child, 0);
            gauntlet_core::environment::withhold(&mut child);
            let mut child = child
                .arg("-c")
                .arg(&line)
                .current_dir(self.launch_dir.as_deref().unwrap_or(&dir))
                .env("GAUNTLET_PROMPT", user)
                .env("GAUNTLET_PROMPT_FILE", &prompt_file)
                .env("GAUNTLET_MCP_URL", &url)
                .env("GAUNTLET_MCP_TOKEN", &token)
                .env("GAUNTLET_MCP_CONFIG", &config_file)
                .env("GAUNTLET_TRANSCRIPT", &transcript)
                .env("GAUNTLET_WORKDIR", &workdir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| self.err(format!("cannot start `{line}`: {e}")))?;
            // Pipes are drained on threads of their own, so a chatty process never blocks on a full pipe.
            // Each keeps at most MAX_OUTPUT bytes: the rest is read and dropped, and the cut is marked.
            let drain = |p: Option<Box<dyn Read + Send>>| {
                std::thread::spawn(move || {
                    let mut s = Vec::new();
                    let mut dropped = 0;
                    if let Some(mut p) = p {
                        let _ = p.by_ref().take(MAX_OUTPUT as u64).read_to_end(&mut s);
                        dropped = std::io::copy(&mut p, &mut std::io::sink()).unwrap_or(0);
                    }
                    let mut text = String::from_utf8_lossy(&s).into_owned();
                    if dropped > 0 {
                        text.push_str(&format!(
                            "\n[… {dropped} more bytes cut: an agent's output is kept up to {MAX_OUTPUT} bytes …]"
                        ));
                    }
                    text
                })
            };
            let out = drain(
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            );
            let errs = drain(
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            );
            let started = Instant::now();
            let status = loop {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(req) => {
                        let e = gateway.call(&req.tool, req.args);
                        let _ = req
                            .reply
                            .send(ToolOutput::new(e.observed.clone(), e.error.is_some()));
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => {}
                }
                match child.try_wait() {
                    Ok(Some(status)) => break Ok(status),
                    Ok(None) if started.elapsed() > self.timeout => {
                        kill_group(child.id());
                        let _ = child.wait();
                        break Err(self.err(format!(
                            "the turn took longer than {:.0} s; the process was killed",
                            self.timeout.as_secs_f64()
                        )));
                    }
                    Ok(None) => {}
                    Err(e) => break Err(self.err(format!("waiting for the process: {e}"))),
                }
            };
            // Whatever it left running in the background ends with the turn (and lets go of the pipes).
            kill_group(child.id());
            let stdout = out.join().unwrap_or_default();
            let stderr = errs.join().unwrap_or_default();
            let status = status?;
            if !status.success() {
                return Err(self.err(format!("`{line}` {status}: {}", tail(&stderr))));
            }
            Ok(stdout.trim().to_string())
        })();
        self.runtime.block_on(server.stop());
        let reply = result?;
        self.turns.push(json!({"user": user, "reply": reply}));
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_shell() {
        let tricky = "it's $HOME `x` \"y\" \\ ;rm -rf /";
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", shell_quote(tricky)))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), tricky);
    }

    #[test]
    fn a_command_target_needs_a_command() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(CommandTarget::new("cmd:", Duration::from_secs(1), rt.handle().clone()).is_err());
        assert!(
            CommandTarget::new("cmd:  echo hi", Duration::from_secs(1), rt.handle().clone())
                .is_ok()
        );
    }
}
