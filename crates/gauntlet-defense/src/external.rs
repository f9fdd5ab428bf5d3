//! `external:COMMAND`: a defense written in any language, as a process speaking JSON lines on stdin/stdout.
//! One process serves the whole run; requests are serialized. The protocol is in `docs/defenses.md`.

use crate::{Axes, Defense, DefenseError, Policy, TaskContext};
use gauntlet_core::{Decision, GatewayEvent, ToolCall};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

struct Pipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

/// A defense process.
pub struct External {
    name: String,
    axes: Axes,
    pipe: Arc<Mutex<Pipe>>,
    /// Whether the process asked for the observed results in `history` (they are large; most defenses only
    /// need the calls).
    results: bool,
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("External")
            .field("name", &self.name)
            .finish()
    }
}

impl Drop for External {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pipe.lock() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }
}

fn exchange(name: &str, pipe: &Mutex<Pipe>, request: &Value) -> Result<Value, DefenseError> {
    let err = |m: String| DefenseError {
        defense: name.to_string(),
        message: m,
    };
    let mut p = pipe
        .lock()
        .map_err(|_| err("the defense process pipe is poisoned".into()))?;
    let mut msg = serde_json::to_vec(request).map_err(|e| err(e.to_string()))?;
    msg.push(b'\n');
    p.stdin
        .write_all(&msg)
        .and_then(|_| p.stdin.flush())
        .map_err(|e| err(format!("cannot write to the defense process: {e}")))?;
    let Pipe { stdout, line, .. } = &mut *p;
    line.clear();
    let n = stdout
        .read_line(line)
        .map_err(|e| err(format!("cannot read from the defense process: {e}")))?;
    if n == 0 {
        return Err(err(
            "the defense process closed its output (did it exit?)".into()
        ));
    }
    serde_json::from_str(line.trim_end()).map_err(|e| {
        err(format!(
            "the defense process answered a line that is not JSON ({e}): {}",
            line.trim_end().chars().take(200).collect::<String>()
        ))
    })
}

impl External {
    /// Starts `command` with `sh -c` and performs the hello handshake (the process names itself and its axes).
    pub fn start(command: &str) -> Result<External, DefenseError> {
        let name = format!("external:{command}");
        let err = |m: String| DefenseError {
            defense: name.clone(),
            message: m,
        };
        if command.starts_with("http://") || command.starts_with("https://") {
            return Err(err("HTTP endpoints are not supported yet: run the defense as a process (external:COMMAND)".into()));
        }
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| err(format!("cannot start: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(err("cannot open the process's stdin/stdout".into()));
        };
        let pipe = Arc::new(Mutex::new(Pipe {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            line: String::new(),
        }));
        let hello = exchange(&name, &pipe, &json!({"type": "hello", "protocol": 1}))?;
        let axes = match hello.get("axes").and_then(Value::as_array) {
            Some(a) => Axes::parse(a.iter().filter_map(Value::as_str))
                .map_err(|e| err(format!("hello: {e}")))?,
            None => Axes::NONE,
        };
        let name = match hello.get("name").and_then(Value::as_str) {
            Some(n) => format!("external:{n}"),
            None => name.clone(),
        };
        let results = hello.get("history").and_then(Value::as_str) == Some("full");
        Ok(External {
            name,
            axes,
            pipe,
            results,
        })
    }
}

struct Remote {
    name: String,
    pipe: Arc<Mutex<Pipe>>,
    policy: Value,
    results: bool,
}

impl Remote {
    fn request(&self, call: &ToolCall, history: &[GatewayEvent]) -> Value {
        let hist: Vec<Value> = history
            .iter()
            .map(|e| {
                if self.results {
                    json!({"tool": e.call.tool, "args": e.call.args, "allowed": e.decision.allowed(), "result": e.observed})
                } else {
                    json!({"tool": e.call.tool, "args": e.call.args, "allowed": e.decision.allowed()})
                }
            })
            .collect();
        json!({"type": "decide", "policy": self.policy, "call": {"tool": call.tool, "args": call.args}, "history": hist})
    }

    fn answer(&self, reply: &Value) -> Result<Decision, DefenseError> {
        match reply.get("decision").and_then(Value::as_str) {
            Some("allow") => Ok(Decision::Allow),
            Some("deny") => Ok(Decision::Deny {
                reason: reply
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("denied by the external defense")
                    .to_string(),
            }),
            _ => Err(DefenseError {
                defense: self.name.clone(),
                message: format!(
                    "decide: expected {{\"decision\": \"allow\"|\"deny\"}}, got {reply}"
                ),
            }),
        }
    }
}

/// Requests written before reading their answers. Small enough that the answers fit in the pipe buffer, so
/// neither side blocks on the other.
const PIPELINE: usize = 64;

impl Policy for Remote {
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Result<Decision, DefenseError> {
        let reply = exchange(&self.name, &self.pipe, &self.request(call, history))?;
        self.answer(&reply)
    }

    fn decide_batch(
        &self,
        calls: &[(ToolCall, &[GatewayEvent])],
    ) -> Result<Vec<Decision>, DefenseError> {
        let err = |m: String| DefenseError {
            defense: self.name.clone(),
            message: m,
        };
        let mut out = Vec::with_capacity(calls.len());
        let mut p = self
            .pipe
            .lock()
            .map_err(|_| err("the defense process pipe is poisoned".into()))?;
        for chunk in calls.chunks(PIPELINE) {
            let mut buf = Vec::new();
            for (c, h) in chunk {
                serde_json::to_writer(&mut buf, &self.request(c, h))
                    .map_err(|e| err(e.to_string()))?;
                buf.push(b'\n');
            }
            p.stdin
                .write_all(&buf)
                .and_then(|_| p.stdin.flush())
                .map_err(|e| err(format!("cannot write to the defense process: {e}")))?;
            for _ in chunk {
                let Pipe { stdout, line, .. } = &mut *p;
                line.clear();
                if stdout
                    .read_line(line)
                    .map_err(|e| err(format!("cannot read from the defense process: {e}")))?
                    == 0
                {
                    return Err(err(
                        "the defense process closed its output (did it exit?)".into()
                    ));
                }
                let reply: Value = serde_json::from_str(line.trim_end()).map_err(|e| {
                    err(format!(
                        "the defense process answered a line that is not JSON ({e})"
                    ))
                })?;
                out.push(self.answer(&reply)?);
            }
        }
        Ok(out)
    }
}

impl Defense for External {
    fn name(&self) -> &str {
        &self.name
    }
    fn axes(&self) -> Axes {
        self.axes
    }
    fn prepare(&self, task: &TaskContext<'_>) -> Result<Box<dyn Policy>, DefenseError> {
        let solution: Vec<Value> = task
            .solution
            .iter()
            .map(|c| json!({"tool": c.tool, "args": c.args}))
            .collect();
        let tools: Vec<&str> = task.tools.iter().map(|t| t.name.as_str()).collect();
        let reply = exchange(
            &self.name,
            &self.pipe,
            &json!({"type": "prepare", "task": {"id": task.case_id, "prompt": task.prompt, "solution": solution, "tools": tools}}),
        )?;
        let policy = reply
            .get("policy")
            .cloned()
            .unwrap_or_else(|| json!(task.case_id));
        Ok(Box::new(Remote {
            name: self.name.clone(),
            pipe: self.pipe.clone(),
            policy,
            results: self.results,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/defenses/allowlist.py");
        format!("python3 {}", root.display())
    }

    #[test]
    fn the_python_example_speaks_the_protocol() {
        let d = External::start(&example()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.name(), "external:python-allowlist");
        assert!(d.axes().tool && d.axes().parameter);
        let sol = [ToolCall {
            id: "s".into(),
            tool: "mail.read".into(),
            args: json!({"id": "m1"}),
        }];
        let ctx = TaskContext {
            case_id: "c1",
            prompt: "p",
            solution: &sol,
            tools: &[],
        };
        let p = d.prepare(&ctx).unwrap_or_else(|e| panic!("{e}"));
        let ok = p.decide(&sol[0], &[]).map(|d| d.allowed());
        assert_eq!(ok, Ok(true));
        let send = ToolCall {
            id: "x".into(),
            tool: "mail.send".into(),
            args: json!({"to": ["eve@evil.test"]}),
        };
        assert!(matches!(p.decide(&send, &[]), Ok(Decision::Deny { .. })));
    }

    #[test]
    fn a_dead_process_is_an_error_not_a_denial() {
        let e = External::start("exit 0")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("closed its output") || e.contains("cannot write"),
            "{e}"
        );
        let e = External::start("echo not-json; sleep 1")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("not JSON"), "{e}");
    }
}
