//! `external:COMMAND` and `external:http://…`: a defense written in any language, as a process speaking JSON
//! lines on stdin/stdout or as an HTTP endpoint taking the same JSON messages as POST bodies. One process or
//! connection serves the whole run; requests are serialized. The protocol (version 2: every request carries an
//! `id` its answer echoes, so answers are matched by id, never by position) is in `docs/defenses.md`.

use crate::{Axes, Defense, DefenseError, Policy, TaskContext};
use gauntlet_core::{Decision, GatewayEvent, ToolCall};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The protocol version this build speaks (in the hello request, and required in the hello answer).
pub const PROTOCOL: u64 = 2;

/// The longest answer a defense may give (a line on stdio, a body over HTTP): past it the answer is an error,
/// never an allocation the defense chose.
const MAX_ANSWER: usize = 16 << 20;

/// How long a defense started without one ([`External::start`]) may take to answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Up to 200 characters of what a defense said, control characters escaped: it is printed to a terminal.
fn shown(text: &str) -> String {
    text.trim_end()
        .chars()
        .take(200)
        .flat_map(|c| {
            // Bidirectional controls reorder what a terminal shows; they are escaped as control characters are.
            let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            let escaped: Vec<char> = if c.is_control() || bidi {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

struct Pipe {
    child: Child,
    /// Requests for the process's input, written on a thread of their own: a process that stops reading cannot
    /// block the run (its answer is awaited at most the timeout instead).
    to_child: Sender<Vec<u8>>,
    /// The process's output lines, read on a thread of their own so that waiting for one can time out. Bounded: a
    /// process that prints without being asked blocks on its own output instead of filling the harness's memory.
    lines: Receiver<Result<String, String>>,
    timeout: Duration,
    /// Why the defense can no longer answer: once one answer came late (or garbled), every later answer could
    /// belong to the wrong request, so none is read.
    broken: Option<String>,
}

impl Pipe {
    /// Writes what `to_child` receives to the process's input, until it fails or the pipe is dropped.
    fn writer(mut stdin: std::process::ChildStdin) -> Sender<Vec<u8>> {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for msg in rx {
                if stdin.write_all(&msg).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
            }
        });
        tx
    }

    /// Sends requests (whole lines), unless the process is out of step.
    fn send(&mut self, lines: Vec<u8>) -> Result<(), String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        self.to_child
            .send(lines)
            .map_err(|_| "cannot write to the defense process (did it exit?)".to_string())
    }

    /// Reads the process's output into lines of at most [`MAX_ANSWER`] bytes, until it ends or a line is too long.
    fn reader(stdout: std::process::ChildStdout) -> Receiver<Result<String, String>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        std::thread::spawn(move || {
            let mut out = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                let read = (&mut out).take(MAX_ANSWER as u64 + 1).read_line(&mut line);
                let (sent, stop) = match read {
                    Ok(0) => break,
                    Ok(_) if line.len() > MAX_ANSWER => (
                        tx.send(Err(format!(
                            "the defense process answered a line longer than {MAX_ANSWER} bytes"
                        ))),
                        true,
                    ),
                    Ok(_) => (tx.send(Ok(line)), false),
                    Err(e) => (
                        tx.send(Err(format!("cannot read from the defense process: {e}"))),
                        true,
                    ),
                };
                if sent.is_err() || stop {
                    break;
                }
            }
        });
        rx
    }

    fn read_answer(&mut self) -> Result<Value, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        let line = match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(self.break_with(e)),
            Err(RecvTimeoutError::Timeout) => {
                let why = format!(
                    "the defense process did not answer within {:.1} s (--timeout)",
                    self.timeout.as_secs_f64()
                );
                return Err(self.break_with(why));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the defense process closed its output (did it exit?)".into());
            }
        };
        serde_json::from_str(line.trim_end()).map_err(|e| {
            self.break_with(format!(
                "the defense process answered a line that is not JSON ({e}): {}",
                shown(&line)
            ))
        })
    }

    /// Marks the process as out of step for good (and stops it: it is not asked again), and says why.
    fn break_with(&mut self, why: String) -> String {
        self.broken = Some(format!(
            "{why}; later answers cannot be matched to their requests, so none is used"
        ));
        let _ = self.child.kill();
        why
    }
}

/// A stream whose every read and write ends by one deadline (the exchange's, set per request): an endpoint that
/// takes or drips a byte at a time cannot stretch the wait read by read or write by write.
struct Timed {
    stream: std::net::TcpStream,
    deadline: Instant,
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

impl Write for Timed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_write_timeout(Some(left))?;
        self.stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

/// A keep-alive HTTP/1.1 connection to a defense endpoint (plain http; put a local proxy in front of https).
struct Http {
    authority: String,
    path: String,
    conn: Option<BufReader<Timed>>,
    timeout: Duration,
}

impl Http {
    fn parse(url: &str, timeout: Duration) -> Result<Http, String> {
        if url.starts_with("https://") {
            return Err("https endpoints are not supported: serve the defense on plain http on loopback, or put a local proxy in front".into());
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or("the endpoint must be an http:// URL")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err("the endpoint URL has no host".into());
        }
        Ok(Http {
            authority: authority.to_string(),
            path: path.to_string(),
            conn: None,
            timeout,
        })
    }

    fn post(&mut self, body: &[u8]) -> Result<Value, String> {
        // One retry on a fresh connection: the server may have closed a kept-alive one (not after a timeout, which
        // would only double the wait). A connection with an unread answer is never used again.
        self.post_once(body).or_else(|e| {
            self.conn = None;
            if e.contains("(--timeout)") {
                return Err(e);
            }
            self.post_once(body)
        })
    }

    fn post_once(&mut self, body: &[u8]) -> Result<Value, String> {
        if self.conn.is_none() {
            let cannot = |e: std::io::Error| format!("cannot connect to {}: {e}", self.authority);
            let addrs: Vec<std::net::SocketAddr> =
                std::net::ToSocketAddrs::to_socket_addrs(&self.authority)
                    .map_err(cannot)?
                    .collect();
            // Connecting waits at most the timeout too, not the system's two minutes.
            let mut last = std::io::Error::other("the host has no address");
            let mut connected = None;
            for a in addrs {
                match std::net::TcpStream::connect_timeout(&a, self.timeout) {
                    Ok(s) => {
                        connected = Some(s);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            let stream = connected.ok_or_else(|| cannot(last))?;
            let _ = stream.set_nodelay(true);
            // Every read and write waits at most the timeout: a stalled endpoint errors, never hangs the run.
            stream
                .set_read_timeout(Some(self.timeout))
                .and_then(|_| stream.set_write_timeout(Some(self.timeout)))
                .map_err(|e| format!("cannot set the timeout: {e}"))?;
            self.conn = Some(BufReader::new(Timed {
                stream,
                deadline: Instant::now(),
            }));
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err("no connection".into());
        };
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
            self.path,
            self.authority,
            body.len()
        );
        let timeout = self.timeout;
        // One deadline for the whole exchange: sending the request and reading its answer.
        conn.get_mut().deadline = Instant::now() + timeout;
        let w = conn.get_mut();
        w.write_all(head.as_bytes())
            .and_then(|_| w.write_all(body))
            .and_then(|_| w.flush())
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                    "the endpoint did not take the request within {:.1} s (--timeout)",
                    timeout.as_secs_f64()
                ),
                _ => format!("cannot send: {e}"),
            })?;
        let timed = |what: &str, e: std::io::Error| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                "the endpoint did not answer within {:.1} s (--timeout)",
                timeout.as_secs_f64()
            ),
            _ => format!("cannot read {what}: {e}"),
        };
        let mut line = String::new();
        (&mut *conn)
            .take(64 << 10)
            .read_line(&mut line)
            .map_err(|e| timed("the status line", e))?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP response: {}", shown(&line)))?;
        let (mut length, mut close) = (None, false);
        loop {
            line.clear();
            (&mut *conn)
                .take(64 << 10)
                .read_line(&mut line)
                .map_err(|e| timed("a header", e))?;
            if !line.ends_with('\n') {
                return Err("the endpoint sent a header line that does not end".into());
            }
            let h = line.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse::<usize>().ok(),
                    "connection" => close = v.trim().eq_ignore_ascii_case("close"),
                    _ => {}
                }
            }
        }
        let n = length.ok_or("the endpoint must answer with a Content-Length header")?;
        if n > MAX_ANSWER {
            self.conn = None;
            return Err(format!(
                "the endpoint announced a body of {n} bytes; answers are limited to {MAX_ANSWER}"
            ));
        }
        let mut buf = vec![0u8; n];
        conn.read_exact(&mut buf)
            .map_err(|e| timed("the body", e))?;
        if close {
            self.conn = None;
        }
        if !(200..300).contains(&status) {
            return Err(format!(
                "HTTP {status}: {}",
                shown(&String::from_utf8_lossy(&buf))
            ));
        }
        serde_json::from_slice(&buf)
            .map_err(|e| format!("the endpoint answered a body that is not JSON ({e})"))
    }
}

/// How requests reach the defense.
enum Transport {
    Stdio(Pipe),
    Http(Http),
}

/// A transport and the id of its next request (one count per process or endpoint, from 0, the hello).
struct Link {
    transport: Transport,
    next_id: u64,
}

impl Link {
    /// Takes `n` consecutive request ids.
    fn ids(&mut self, n: usize) -> u64 {
        let first = self.next_id;
        self.next_id += n as u64;
        first
    }
}

/// A process or endpoint defense.
pub struct External {
    name: String,
    axes: Axes,
    link: Arc<Mutex<Link>>,
    /// Whether the defense asked for the observed results in `history` (they are large; most defenses only need
    /// the calls).
    results: bool,
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("External")
            .field("name", &self.name)
            .finish()
    }
}

/// The process goes with the pipe, also when its hello failed (no defense was made of it).
impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `request` with its `id`.
fn with_id(mut request: Value, id: u64) -> Value {
    if let Some(o) = request.as_object_mut() {
        o.insert("id".into(), json!(id));
    }
    request
}

/// The `id` an answer echoes, if it is a JSON object with an integer `id`.
fn id_of(answer: &Value) -> Option<u64> {
    answer.get("id").and_then(Value::as_u64)
}

/// Sends one request and returns its answer, which must echo its id. On stdio an answer with another id (or none)
/// puts the process out of step: it is stopped, and every later decision errors.
fn exchange(
    name: &str,
    link: &Mutex<Link>,
    kind: &str,
    request: Value,
) -> Result<Value, DefenseError> {
    let err = |m: String| DefenseError {
        defense: name.to_string(),
        message: format!("{kind}: {m}"),
    };
    let mut link = link
        .lock()
        .map_err(|_| err("the defense connection is poisoned".into()))?;
    let id = link.ids(1);
    let mut msg = serde_json::to_vec(&with_id(request, id)).map_err(|e| err(e.to_string()))?;
    let answer = match &mut link.transport {
        Transport::Http(h) => h.post(&msg).map_err(err)?,
        Transport::Stdio(p) => {
            msg.push(b'\n');
            p.send(msg).map_err(err)?;
            p.read_answer().map_err(err)?
        }
    };
    if id_of(&answer) == Some(id) {
        return Ok(answer);
    }
    let why = match (kind, answer.get("protocol")) {
        // A defense of protocol 1 answers the hello without `"protocol": 2` and without ids.
        ("hello", p) if p.and_then(Value::as_u64) != Some(PROTOCOL) => format!(
            "the defense answered {} without \"protocol\": {PROTOCOL}: this Gauntlet speaks protocol {PROTOCOL}, in \
             which every answer echoes its request's \"id\" (protocol 1 matched answers by position, so one stray \
             line shifted every later decision); see docs/defenses.md",
            shown(&answer.to_string())
        ),
        _ => format!(
            "the answer to request {id} carries id {} ({}): answers are matched by id",
            answer.get("id").map_or("none".into(), Value::to_string),
            shown(&answer.to_string())
        ),
    };
    if let Transport::Stdio(p) = &mut link.transport {
        p.break_with(why.clone());
    }
    Err(err(why))
}

/// Why a hello answer is not the protocol's, if it is not: an object with `"protocol": 2`, and `name` (a string),
/// `axes` (a list) and `history` (`calls` or `full`) when present.
fn hello_problem(hello: &Value) -> Option<String> {
    let Some(o) = hello.as_object() else {
        return Some("expected a JSON object".into());
    };
    if o.get("protocol").and_then(Value::as_u64) != Some(PROTOCOL) {
        return Some(format!("expected \"protocol\": {PROTOCOL}"));
    }
    if o.get("name").is_some_and(|n| !n.is_string()) {
        return Some("\"name\" must be a string".into());
    }
    if o.get("axes").is_some_and(|a| !a.is_array()) {
        return Some("\"axes\" must be a list of axis names".into());
    }
    match o.get("history").map(|h| h.as_str()) {
        None | Some(Some("calls" | "full")) => None,
        Some(_) => Some("\"history\" must be \"calls\" or \"full\"".into()),
    }
}

impl External {
    /// [`External::start_with`] with the [`DEFAULT_TIMEOUT`].
    pub fn start(target: &str) -> Result<External, DefenseError> {
        External::start_with(target, DEFAULT_TIMEOUT)
    }

    /// Starts `target`: an `http://` endpoint, or a command run with `sh -c`; then performs the hello handshake
    /// (the defense names itself and its axes, and says it speaks [`PROTOCOL`]). Every answer is awaited at most
    /// `timeout`: a defense that does not answer in time errors the decision, and a process that answered late is
    /// not asked again (its later answers could not be matched to their requests).
    pub fn start_with(target: &str, timeout: Duration) -> Result<External, DefenseError> {
        let name = format!("external:{target}");
        let err = |m: String| DefenseError {
            defense: name.clone(),
            message: m,
        };
        if target.starts_with("http://") || target.starts_with("https://") {
            let http = Http::parse(target, timeout).map_err(err)?;
            return External::handshake(name.clone(), Transport::Http(http));
        }
        let mut child = Command::new("sh");
        gauntlet_core::environment::withhold(&mut child);
        let mut child = child
            .arg("-c")
            .arg(target)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| err(format!("cannot start: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(err("cannot open the process's stdin/stdout".into()));
        };
        External::handshake(
            name.clone(),
            Transport::Stdio(Pipe {
                child,
                to_child: Pipe::writer(stdin),
                lines: Pipe::reader(stdout),
                timeout,
                broken: None,
            }),
        )
    }

    fn handshake(name: String, transport: Transport) -> Result<External, DefenseError> {
        let link = Arc::new(Mutex::new(Link {
            transport,
            next_id: 0,
        }));
        let hello = exchange(
            &name,
            &link,
            "hello",
            json!({"type": "hello", "protocol": PROTOCOL}),
        )?;
        let err = |m: String| DefenseError {
            defense: name.clone(),
            message: format!("hello: {m}, got {}", shown(&hello.to_string())),
        };
        if let Some(why) = hello_problem(&hello) {
            return Err(err(why));
        }
        let axes = match hello.get("axes").and_then(Value::as_array) {
            Some(a) => Axes::parse(a.iter().filter_map(Value::as_str)).map_err(err)?,
            None => Axes::NONE,
        };
        let name = match hello.get("name").and_then(Value::as_str) {
            // Printed in run headers and reports: its control characters are escaped, as everything a defense says is.
            Some(n) => format!("external:{}", shown(n)),
            None => name.clone(),
        };
        let results = hello.get("history").and_then(Value::as_str) == Some("full");
        Ok(External {
            name,
            axes,
            link,
            results,
        })
    }
}

struct Remote {
    name: String,
    link: Arc<Mutex<Link>>,
    policy: Value,
    results: bool,
}

/// Requests written before reading their answers (stdio). Small enough that the answers fit in the pipe
/// buffer, so neither side blocks on the other.
const PIPELINE: usize = 64;

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
        let reason = reply.get("reason");
        match reply.get("decision").and_then(Value::as_str) {
            Some("allow") => Ok(Decision::Allow),
            Some("deny") if reason.is_none_or(Value::is_string) => Ok(Decision::Deny {
                reason: reason
                    .and_then(Value::as_str)
                    .unwrap_or("denied by the external defense")
                    .to_string(),
            }),
            _ => Err(DefenseError {
                defense: self.name.clone(),
                message: format!(
                    "decide: expected {{\"decision\": \"allow\"|\"deny\", \"reason\": TEXT}}, got {}",
                    shown(&reply.to_string())
                ),
            }),
        }
    }
}

impl Policy for Remote {
    fn decide(&self, call: &ToolCall, history: &[GatewayEvent]) -> Result<Decision, DefenseError> {
        let reply = exchange(
            &self.name,
            &self.link,
            "decide",
            self.request(call, history),
        )?;
        self.answer(&reply).inspect_err(|e| {
            // An answer of the wrong shape may be a stray line: the process is out of step from here on.
            if let Ok(mut l) = self.link.lock()
                && let Transport::Stdio(p) = &mut l.transport
            {
                p.break_with(e.message.clone());
            }
        })
    }

    fn decide_batch(
        &self,
        calls: &[(ToolCall, &[GatewayEvent])],
    ) -> Result<Vec<Decision>, DefenseError> {
        let err = |m: String| DefenseError {
            defense: self.name.clone(),
            message: format!("decide: {m}"),
        };
        let mut link = self
            .link
            .lock()
            .map_err(|_| err("the defense connection is poisoned".into()))?;
        if !matches!(link.transport, Transport::Stdio(_)) {
            drop(link);
            return calls.iter().map(|(c, h)| self.decide(c, h)).collect();
        }
        let mut out = Vec::with_capacity(calls.len());
        for chunk in calls.chunks(PIPELINE) {
            let first = link.ids(chunk.len());
            let Transport::Stdio(p) = &mut link.transport else {
                return Err(err("the defense changed transport".into()));
            };
            let mut buf = Vec::new();
            for (k, (c, h)) in chunk.iter().enumerate() {
                serde_json::to_writer(&mut buf, &with_id(self.request(c, h), first + k as u64))
                    .map_err(|e| err(e.to_string()))?;
                buf.push(b'\n');
            }
            p.send(buf).map_err(err)?;
            // Answers are placed by their id, in whatever order they come; one that names no request of the
            // chunk, or one already answered, puts the process out of step.
            let mut slots: Vec<Option<Decision>> = vec![None; chunk.len()];
            for _ in chunk {
                let reply = p.read_answer().map_err(err)?;
                let slot = id_of(&reply)
                    .and_then(|id| id.checked_sub(first))
                    .and_then(|k| usize::try_from(k).ok())
                    .filter(|&k| k < chunk.len() && slots[k].is_none());
                let Some(k) = slot else {
                    let why = format!(
                        "an answer whose id is not one of requests {first}..{} still unanswered: {}",
                        first + chunk.len() as u64 - 1,
                        shown(&reply.to_string())
                    );
                    return Err(err(p.break_with(why)));
                };
                // The rest of the chunk's answers are unread: the process is out of step from here on.
                let decided = self.answer(&reply).inspect_err(|e| {
                    p.break_with(e.message.clone());
                })?;
                slots[k] = Some(decided);
            }
            out.extend(slots.into_iter().flatten());
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
            &self.link,
            "prepare",
            json!({"type": "prepare", "task": {"id": task.case_id, "prompt": task.prompt, "solution": solution, "tools": tools}}),
        )?;
        // The answer must be the prepare's: a policy, not (say) a decision meant for another request.
        let Some(policy) = reply.get("policy").cloned() else {
            let why = format!(
                "prepare: expected {{\"policy\": ANY}}, got {}",
                shown(&reply.to_string())
            );
            if let Ok(mut l) = self.link.lock()
                && let Transport::Stdio(p) = &mut l.transport
            {
                p.break_with(why.clone());
            }
            return Err(DefenseError {
                defense: self.name.clone(),
                message: why,
            });
        };
        Ok(Box::new(Remote {
            name: self.name.clone(),
            link: self.link.clone(),
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
    fn the_http_example_speaks_the_same_protocol() {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/defenses/allowlist_http.py");
        let mut server = std::process::Command::new("python3")
            .arg(&script)
            .args(["--port", "0"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut first = String::new();
        if let Some(out) = server.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut first);
        }
        let port = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected: {first}"))
            .to_string();
        let d = External::start(&format!("http://127.0.0.1:{port}/decide"));
        let result = d.map(|d| {
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
            let send = ToolCall {
                id: "x".into(),
                tool: "mail.send".into(),
                args: json!({"to": ["eve@evil.test"]}),
            };
            (
                d.name().to_string(),
                p.decide(&sol[0], &[]).map(|d| d.allowed()),
                p.decide(&send, &[]).map(|d| d.allowed()),
            )
        });
        let _ = server.kill();
        let _ = server.wait();
        let (name, ok, send) = result.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(name, "external:python-allowlist");
        assert_eq!((ok, send), (Ok(true), Ok(false)));
        let e = External::start("https://example.test/decide")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("https endpoints are not supported"), "{e}");
        let e = External::start("http://127.0.0.1:9/decide")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("cannot connect"), "{e}");
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

    /// The policy `d` prepares for a task of one call (`mail.read m1`), and that call.
    fn prepared(d: &External) -> (Box<dyn Policy>, ToolCall) {
        let call = ToolCall {
            id: "s".into(),
            tool: "mail.read".into(),
            args: json!({"id": "m1"}),
        };
        let ctx = TaskContext {
            case_id: "c1",
            prompt: "p",
            solution: std::slice::from_ref(&call),
            tools: &[],
        };
        (d.prepare(&ctx).unwrap_or_else(|e| panic!("{e}")), call)
    }

    /// A fake endpoint on a free loopback port: it reads each request's head, then `answer`s on the connection.
    fn endpoint(answer: impl Fn(std::net::TcpStream) + Send + 'static) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener
            .local_addr()
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut head = String::new();
                let mut r = BufReader::new(&stream);
                while r.read_line(&mut head).is_ok_and(|n| n > 2) {}
                answer(stream);
            }
        });
        port
    }

    /// The error `p` gives deciding `call` ("" when it decides).
    fn decide_error(p: &dyn Policy, call: &ToolCall) -> String {
        p.decide(call, &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_defense_that_stops_answering_errors_within_the_timeout_and_is_not_asked_again() {
        // Answers hello and prepare, then never the decision (a late answer would shift every later one).
        let script = "read l; echo '{\"protocol\": 2, \"id\": 0, \"name\": \"stall\"}'; read l; \
                      echo '{\"id\": 1, \"policy\": 1}'; read l; sleep 30";
        let d = External::start_with(script, Duration::from_millis(500))
            .unwrap_or_else(|e| panic!("{e}"));
        let (p, call) = prepared(&d);
        let started = std::time::Instant::now();
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("did not answer within 0.5 s"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(20));
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("cannot be matched"), "{e}");
    }

    #[test]
    fn a_stray_line_puts_the_process_out_of_step_and_no_later_answer_is_used() {
        // A debug line before its answer: read as the answer, it is the wrong shape, and every later line would be
        // one request late.
        let script = "read l; echo '{\"protocol\": 2, \"id\": 0, \"name\": \"chatty\"}'; read l; \
                      echo '{\"id\": 1, \"policy\": 1}'; \
                      while read l; do echo '{\"debug\": 1}'; echo '{\"decision\": \"allow\"}'; done";
        let d =
            External::start_with(script, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
        let (p, call) = prepared(&d);
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("answers are matched by id"), "{e}");
        let e = decide_error(p.as_ref(), &call);
        assert!(
            e.contains("cannot be matched"),
            "the queued answer was used: {e}"
        );
        let batch = [(call.clone(), &[][..]), (call.clone(), &[][..])];
        assert!(p.decide_batch(&batch).is_err());
    }

    #[test]
    fn a_process_that_stops_reading_cannot_block_the_run() {
        // Answers hello and prepare, then reads nothing more: a request larger than the pipe's buffer would block
        // a writer that waited for it.
        let script = "read l; echo '{\"protocol\": 2, \"id\": 0, \"name\": \"deaf\"}'; read l; \
                      echo '{\"id\": 1, \"policy\": 1}'; sleep 30";
        let d = External::start_with(script, Duration::from_millis(500))
            .unwrap_or_else(|e| panic!("{e}"));
        let (p, mut call) = prepared(&d);
        call.args = json!({"body": "x".repeat(1 << 20)});
        let started = std::time::Instant::now();
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("did not answer within"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn an_endpoint_announcing_a_huge_body_or_a_process_printing_control_bytes_is_an_error() {
        let port = endpoint(|stream| {
            let _ = (&stream)
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387904\r\n\r\n{}");
        });
        let e = External::start_with(
            &format!("http://127.0.0.1:{port}/"),
            Duration::from_secs(10),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("answers are limited to"), "{e}");
        let e = External::start("printf 'oops \\033[2J\\n'; sleep 1")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("not JSON") && e.contains("\\u{1b}[2J"), "{e}");
        assert!(
            !e.contains('\u{1b}'),
            "a raw escape reaches the terminal: {e:?}"
        );
    }

    /// A process answering `answers` (one line each, in order, whatever it is asked) to its first requests, then
    /// nothing.
    fn scripted(answers: &[&str]) -> String {
        let mut script = String::new();
        for a in answers {
            script.push_str(&format!("read l; echo '{a}'; "));
        }
        script.push_str("sleep 30");
        script
    }

    fn start_error(script: &str) -> String {
        External::start_with(script, Duration::from_secs(10))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_defense_of_protocol_1_is_told_to_upgrade() {
        let e = start_error(&scripted(&[r#"{"name": "old", "axes": ["tool"]}"#]));
        assert!(
            e.contains("without \"protocol\": 2") && e.contains("echoes its request's \"id\""),
            "{e}"
        );
    }

    #[test]
    fn hello_and_prepare_answers_are_checked_against_the_protocol() {
        // `{"decision": "allow"}` to everything was taken for a hello and a prepare.
        let e = start_error(&scripted(&[r#"{"id": 0, "decision": "allow"}"#]));
        assert!(e.contains("expected \"protocol\": 2"), "{e}");
        for (hello, why) in [
            (
                r#"{"protocol": 2, "id": 0, "name": 7}"#,
                "\"name\" must be a string",
            ),
            (
                r#"{"protocol": 2, "id": 0, "axes": "tool"}"#,
                "\"axes\" must be a list",
            ),
            (
                r#"{"protocol": 2, "id": 0, "history": "all"}"#,
                "\"history\" must be",
            ),
            (
                r#"{"protocol": 2, "id": 0, "axes": ["tool", "mood"]}"#,
                "mood",
            ),
            (r#"{"protocol": 2, "id": 5}"#, "carries id 5"),
        ] {
            let e = start_error(&scripted(&[hello]));
            assert!(e.contains(why), "{hello}: {e}");
        }
        let d = External::start_with(
            &scripted(&[
                r#"{"protocol": 2, "id": 0}"#,
                r#"{"id": 1, "decision": "allow"}"#,
            ]),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let ctx = TaskContext {
            case_id: "c1",
            prompt: "p",
            solution: &[],
            tools: &[],
        };
        let e = d
            .prepare(&ctx)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("prepare: expected {\"policy\": ANY}"), "{e}");
        // A decision needs its reason as text.
        let d = External::start_with(
            &scripted(&[
                r#"{"protocol": 2, "id": 0}"#,
                r#"{"id": 1, "policy": 1}"#,
                r#"{"id": 2, "decision": "deny", "reason": {"x": 1}}"#,
            ]),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (p, call) = prepared(&d);
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("expected {\"decision\""), "{e}");
    }

    #[test]
    fn a_stray_allow_cannot_shift_a_deny_everything_defense() {
        // Protocol 1's failure: one extra well-formed line made every later answer the previous request's.
        let d = External::start_with(
            &scripted(&[
                r#"{"protocol": 2, "id": 0}"#,
                r#"{"id": 1, "policy": 1}"#,
                r#"{"id": 7, "decision": "allow"}"#,
            ]),
            Duration::from_secs(10),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (p, call) = prepared(&d);
        let e = decide_error(p.as_ref(), &call);
        assert!(e.contains("the answer to request 2 carries id 7"), "{e}");
        // Out of step: the next decision errors at once, saying why, rather than waiting for an answer.
        let e = decide_error(p.as_ref(), &call);
        assert!(
            e.contains("cannot be matched"),
            "a later answer was awaited: {e}"
        );
    }

    #[test]
    fn answers_of_a_batch_are_placed_by_their_ids_in_any_order() {
        // Denies the first decision and allows the second, answering them in reverse order.
        let script = "python3 -c '\nimport json, sys\nheld = []\nfor line in sys.stdin:\n    m = json.loads(line)\n    \
                      if m[\"type\"] == \"hello\": a = [{\"protocol\": 2}]\n    \
                      elif m[\"type\"] == \"prepare\": a = [{\"policy\": 1}]\n    \
                      else:\n        held.append(m)\n        if len(held) < 2: continue\n        \
                      a = [{\"decision\": \"allow\", \"id\": held[1][\"id\"]}, {\"decision\": \"deny\", \"id\": held[0][\"id\"]}]\n        \
                      held = []\n    for x in a: x.setdefault(\"id\", m[\"id\"]); print(json.dumps(x), flush=True)\n'";
        let d =
            External::start_with(script, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
        let (p, call) = prepared(&d);
        let got = p
            .decide_batch(&[(call.clone(), &[][..]), (call.clone(), &[][..])])
            .unwrap_or_else(|e| panic!("{e}"));
        let allowed: Vec<bool> = got.iter().map(Decision::allowed).collect();
        assert_eq!(allowed, [false, true]);
    }

    #[test]
    fn an_endpoint_that_drips_its_answer_errors_at_the_deadline() {
        let port = endpoint(|stream| {
            // A byte every 200 ms: each read is quick, the answer never ends.
            for _ in 0..100 {
                if (&stream).write_all(b"H").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let started = Instant::now();
        let e = External::start_with(&format!("http://127.0.0.1:{port}/"), Duration::from_secs(1))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("did not answer within 1.0 s"), "{e}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn bidirectional_controls_are_escaped_when_shown() {
        let s = shown("allow\u{202e}ynned");
        assert!(!s.contains('\u{202e}') && s.contains("\\u{202e}"), "{s:?}");
    }

    mod fuzz {
        //! The protocol under hostile answers (issue 16), with fixed seeds so CI runs the same inputs every time:
        //! an answer is taken for a decision only when it is one, and junk from a process never hangs a decision
        //! past its timeout or makes it a decision.
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::RngSeed;

        fn config(cases: u32) -> ProptestConfig {
            ProptestConfig {
                cases,
                rng_seed: RngSeed::Fixed(0x7072_6f74_6f32),
                failure_persistence: None,
                ..ProptestConfig::default()
            }
        }

        /// JSON values shaped like answers: the protocol's keys and words, and anything else.
        fn answer() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                (0u64..8).prop_map(Value::from),
                prop_oneof![
                    Just("allow"),
                    Just("deny"),
                    Just("calls"),
                    Just("full"),
                    Just("tool")
                ]
                .prop_map(Value::from),
                "\\PC{0,12}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 24, 5, |inner| {
                let key = prop_oneof![
                    Just("decision".to_string()),
                    Just("reason".to_string()),
                    Just("id".to_string()),
                    Just("protocol".to_string()),
                    Just("name".to_string()),
                    Just("axes".to_string()),
                    Just("history".to_string()),
                    Just("policy".to_string()),
                    "[a-z]{1,6}",
                ];
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    proptest::collection::btree_map(key, inner, 0..5)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn remote() -> Remote {
            let http = Http::parse("http://127.0.0.1:9/", Duration::from_secs(1))
                .unwrap_or_else(|e| panic!("{e}"));
            Remote {
                name: "external:fuzz".into(),
                link: Arc::new(Mutex::new(Link {
                    transport: Transport::Http(http),
                    next_id: 0,
                })),
                policy: Value::Null,
                results: false,
            }
        }

        proptest! {
            #![proptest_config(config(2000))]

            #[test]
            fn an_answer_is_a_decision_only_when_it_is_one(v in answer()) {
                let said = v.get("decision").and_then(Value::as_str);
                match remote().answer(&v) {
                    Ok(Decision::Allow) => prop_assert_eq!(said, Some("allow")),
                    Ok(Decision::Deny { .. }) => {
                        prop_assert_eq!(said, Some("deny"));
                        prop_assert!(v.get("reason").is_none_or(Value::is_string));
                    }
                    Err(_) => {
                        let decision = said == Some("allow")
                            || (said == Some("deny") && v.get("reason").is_none_or(Value::is_string));
                        prop_assert!(!decision, "a decision was refused: {}", v);
                    }
                }
            }

            #[test]
            fn a_hello_answer_passes_only_in_the_protocol_s_shape(v in answer()) {
                if hello_problem(&v).is_none() {
                    prop_assert_eq!(v.get("protocol").and_then(Value::as_u64), Some(PROTOCOL));
                    prop_assert!(v.get("name").is_none_or(Value::is_string));
                    prop_assert!(v.get("axes").is_none_or(Value::is_array));
                    let history = v.get("history").map(Value::as_str);
                    prop_assert!(matches!(history, None | Some(Some("calls" | "full"))));
                }
            }
        }

        proptest! {
            #![proptest_config(config(16))]

            /// A process that answers hello and prepare, then junk lines: the decision is an error within the
            /// timeout, unless its first line is a well-formed answer to it.
            #[test]
            fn junk_from_a_process_is_never_a_decision_nor_a_hang(
                lines in proptest::collection::vec(prop_oneof![
                    "\\PC{0,40}",
                    answer().prop_map(|v| v.to_string()),
                ], 0..4),
            ) {
                let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
                let junk = dir.path().join("junk");
                std::fs::write(&junk, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
                let script = format!(
                    "read l; echo '{{\"protocol\": 2, \"id\": 0}}'; read l; echo '{{\"id\": 1, \"policy\": 1}}'; \
                     read l; cat '{}'; sleep 30",
                    junk.display()
                );
                let d = External::start_with(&script, Duration::from_millis(300))
                    .unwrap_or_else(|e| panic!("{e}"));
                let (p, call) = prepared(&d);
                let started = Instant::now();
                let got = p.decide(&call, &[]);
                prop_assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
                if got.is_ok() {
                    let first: Value = serde_json::from_str(lines[0].trim()).unwrap_or(Value::Null);
                    prop_assert_eq!(id_of(&first), Some(2), "{}", lines[0]);
                }
            }
        }
    }
}
