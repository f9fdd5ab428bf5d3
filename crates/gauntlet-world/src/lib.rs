//! The simulated world: an in-process, deterministic model of the services agents act on (mail, calendar,
//! drive, repo, bank, chat, web, shell, crm, helpdesk).
//!
//! Each service owns typed state, exposes tools with JSON-Schema parameters (validated on every call, with
//! service-realistic errors that become the tool result the agent sees), offers setup operations that build
//! a case's initial state, and renders its state as JSON for predicates. The world has a deterministic clock
//! and id scheme, is `Clone` (snapshot = clone, restore = replace) and never touches the host.

mod bank;
mod calendar;
mod catalog;
mod chat;
mod clock;
mod crm;
mod drive;
pub mod effects;
mod helpdesk;
mod mail;
mod reference;
mod repo;
mod shell;
mod web;

pub use catalog::{
    SetupSpec, check_setup_args, check_tool_args, setup_specs, tool_spec, tool_specs, tools_text,
};
pub use clock::Clock;
pub use reference::{markdown as reference_markdown, signature};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a tool call failed. The `Display` text is what the agent receives as the tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// No tool of that name exists.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The arguments do not match the tool's schema.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every schema violation, `; `-separated, each with its JSON pointer.
        message: String,
    },
    /// The service refused the call, as the real service would (unknown id, insufficient funds, …).
    #[error("{0}")]
    Service(String),
}

/// Why a setup operation failed (a broken case, reported to the case author).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// No setup operation of that name exists.
    #[error("unknown setup operation `{0}`")]
    UnknownOp(String),
    /// The operation's arguments do not match its schema.
    #[error("invalid arguments for setup operation {op}: {message}")]
    InvalidArguments {
        /// The operation.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// The operation conflicts with the state built so far (duplicate id, unknown reference, …).
    #[error("setup operation {op}: {message}")]
    Conflict {
        /// The operation.
        op: String,
        /// What is wrong.
        message: String,
    },
}

/// Which record an object of a tool result is: the keys the services find records by (see
/// [`World::inscribe`]).
pub(crate) struct Locator<'a> {
    /// The record's id (a message, file, event, transaction, pull request, CRM record, ticket or ticket message,
    /// order).
    pub id: Option<&'a str>,
    /// A web page's address.
    pub url: Option<&'a str>,
    /// A file's path (in a repository or the shell).
    pub path: Option<&'a str>,
    /// A repository's name.
    pub repo: Option<&'a str>,
}

/// How [`World::inscribe`] rewrites a record's text: from its current text to the poisoned text.
pub type Edit<'a> = &'a dyn Fn(&str) -> String;

/// Rewrites a record's text field (for [`World::inscribe`]); always true.
pub(crate) fn put(slot: &mut String, edit: Edit<'_>) -> bool {
    *slot = edit(slot);
    true
}

/// A service error message (internal shorthand).
pub(crate) type Fail = String;

/// The whole simulated world.
#[derive(Debug, Clone, Serialize)]
pub struct World {
    #[serde(skip)]
    clock: Clock,
    /// Services a call has used since the world was built (indices into [`SERVICES`]): the effect
    /// views need only these besides s0.
    #[serde(skip)]
    touched: u16,
    mail: mail::Mail,
    calendar: calendar::Calendar,
    drive: drive::Drive,
    repo: repo::Repos,
    bank: bank::Bank,
    chat: chat::Chat,
    web: web::Web,
    shell: shell::Shell,
    crm: crm::Crm,
    helpdesk: helpdesk::Helpdesk,
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl World {
    /// An empty world at the start of the deterministic clock.
    pub fn new() -> World {
        World {
            clock: Clock::default(),
            touched: 0,
            mail: mail::Mail::default(),
            calendar: calendar::Calendar::default(),
            drive: drive::Drive::default(),
            repo: repo::Repos::default(),
            bank: bank::Bank::default(),
            chat: chat::Chat::default(),
            web: web::Web::default(),
            shell: shell::Shell::default(),
            crm: crm::Crm::default(),
            helpdesk: helpdesk::Helpdesk::default(),
        }
    }

    /// The world's clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Executes a tool call. Arguments are validated against the tool's schema first; the error's text is
    /// the tool result the agent sees.
    pub fn call(&mut self, tool: &str, args: &Value) -> Result<Value, ToolError> {
        let entry =
            catalog::tool_entry(tool).ok_or_else(|| ToolError::UnknownTool(tool.to_string()))?;
        if let Some(message) = entry.check(args) {
            return Err(ToolError::InvalidArguments {
                tool: tool.to_string(),
                message,
            });
        }
        let (service, name) = tool.split_once('.').unwrap_or((tool, ""));
        let clock = &mut self.clock;
        let result = match service {
            "mail" => self.mail.call(clock, name, args),
            "calendar" => self.calendar.call(clock, name, args),
            "drive" => self.drive.call(clock, name, args),
            "repo" => self.repo.call(clock, name, args),
            "bank" => self.bank.call(clock, name, args),
            "chat" => self.chat.call(clock, name, args),
            "web" => self.web.call(clock, name, args),
            "shell" => self.shell.call(clock, name, args),
            "crm" => self.crm.call(clock, name, args),
            "helpdesk" => self.helpdesk.call(clock, name, args),
            _ => return Err(ToolError::UnknownTool(tool.to_string())),
        };
        // Any call may change a service's state, reads included (a fetch is logged as a request, reading mail
        // marks it read), so every call marks its service for the effect views.
        if let Some(i) = SERVICES.iter().position(|s| *s == service) {
            self.touched |= 1 << i;
        }
        if entry.spec.effect.kind == gauntlet_core::EffectKind::Write {
            self.clock.tick();
        }
        result.map_err(ToolError::Service)
    }

    /// Where `tool`'s result shows text that only someone outside the user's trust boundary writes, as a JSON
    /// pointer into the result: a web page's content. A payload an attacker places on such a tool is written there,
    /// and into the page. Only pages qualify: a mail, file, event or repository file may be one the agent wrote
    /// (sent and read back, created, copied), and writing an attacker's payload into it would read as the agent's
    /// own change, since the views excuse only what was written into records of s0.
    pub fn written_text(tool: &str) -> Option<&'static str> {
        match tool {
            "web.fetch" => Some("/content"),
            _ => None,
        }
    }

    /// Writes an injected payload into the record a tool result showed, so that the world holds what the agent
    /// read: a poisoned mail stays poisoned when it is read again, forwarded or quoted. `field` is the injection
    /// rule's JSON pointer into `result` (the raw result of `tool` called with `args`), and `edit` turns the
    /// record's current text into the poisoned text (the rule's mode and payload applied to it). The record is found
    /// by the `id` of the object that holds the field, or its `url`, `path` or `repo` (those three also from the
    /// call's arguments). Returns whether a record took the text; a result that is no record (a command's output,
    /// a list of names) takes none.
    pub fn inscribe(
        &mut self,
        tool: &str,
        args: &Value,
        result: &Value,
        field: &str,
        edit: Edit<'_>,
    ) -> bool {
        let Some((parent, key)) = field.rsplit_once('/') else {
            return false;
        };
        let key = key.replace("~1", "/").replace("~0", "~");
        let Some(object) = result.pointer(parent).filter(|v| v.is_object()) else {
            return false;
        };
        let str_of = |k: &str| {
            object
                .get(k)
                .and_then(Value::as_str)
                .or_else(|| args.get(k).and_then(Value::as_str))
        };
        let at = Locator {
            id: object.get("id").and_then(Value::as_str),
            url: str_of("url"),
            path: str_of("path"),
            repo: str_of("repo"),
        };
        let (service, _) = tool.split_once('.').unwrap_or((tool, ""));
        let done = match service {
            "mail" => self.mail.inscribe(&at, &key, edit),
            "calendar" => self.calendar.inscribe(&at, &key, edit),
            "drive" => self.drive.inscribe(&at, &key, edit),
            "repo" => self.repo.inscribe(&at, &key, edit),
            "bank" => self.bank.inscribe(&at, &key, edit),
            "chat" => self.chat.inscribe(&at, &key, edit),
            "web" => self.web.inscribe(&at, &key, edit),
            "shell" => self.shell.inscribe(&at, &key, edit),
            "crm" => self.crm.inscribe(&at, &key, edit),
            "helpdesk" => self.helpdesk.inscribe(&at, &key, edit),
            _ => false,
        };
        if done && let Some(i) = SERVICES.iter().position(|s| *s == service) {
            self.touched |= 1 << i;
        }
        done
    }

    /// Applies one setup operation (`mail.deliver`, `bank.account`, …) while building a case's initial state.
    pub fn setup(&mut self, op: &str, args: &Value) -> Result<(), SetupError> {
        let entry =
            catalog::setup_entry(op).ok_or_else(|| SetupError::UnknownOp(op.to_string()))?;
        if let Some(message) = entry.check(args) {
            return Err(SetupError::InvalidArguments {
                op: op.to_string(),
                message,
            });
        }
        let (service, name) = op.split_once('.').unwrap_or((op, ""));
        let clock = &mut self.clock;
        let result = match service {
            "world" => clock.setup(name, args),
            "mail" => self.mail.setup(clock, name, args),
            "calendar" => self.calendar.setup(clock, name, args),
            "drive" => self.drive.setup(clock, name, args),
            "repo" => self.repo.setup(clock, name, args),
            "bank" => self.bank.setup(clock, name, args),
            "chat" => self.chat.setup(clock, name, args),
            "web" => self.web.setup(clock, name, args),
            "shell" => self.shell.setup(clock, name, args),
            "crm" => self.crm.setup(clock, name, args),
            "helpdesk" => self.helpdesk.setup(clock, name, args),
            _ => return Err(SetupError::UnknownOp(op.to_string())),
        };
        result.map_err(|message| SetupError::Conflict {
            op: op.to_string(),
            message,
        })
    }

    /// The services a call has used since the world was built (only these can differ from s0), in
    /// [`SERVICES`] order.
    pub fn touched(&self) -> Vec<String> {
        SERVICES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.touched & (1 << i) != 0)
            .map(|(_, s)| s.to_string())
            .collect()
    }

    /// The state of only the named services (plus `now`), for predicates that read only those; `None`
    /// renders everything, like [`World::state`]. Unknown names are ignored.
    pub fn state_of(&self, services: Option<&[String]>) -> Value {
        let Some(services) = services else {
            return self.state();
        };
        let mut m = serde_json::Map::new();
        for s in services {
            let v = match s.as_str() {
                "mail" => json(&self.mail),
                "calendar" => json(&self.calendar),
                "drive" => json(&self.drive),
                "repo" => json(&self.repo),
                "bank" => json(&self.bank),
                "chat" => json(&self.chat),
                "web" => json(&self.web),
                "shell" => json(&self.shell),
                "crm" => json(&self.crm),
                "helpdesk" => json(&self.helpdesk),
                _ => continue,
            };
            m.insert(s.clone(), v);
        }
        m.insert("now".into(), Value::String(self.clock.now()));
        Value::Object(m)
    }

    /// The whole state as JSON: every field of every service, empty lists rather than absent keys, plus
    /// `now` (the logical clock).
    pub fn state(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("now".into(), Value::String(self.clock.now()));
        }
        v
    }
}

/// The services of the world, in rendering order. [`World`]'s `touched` mask has a bit per service (16 fit).
pub const SERVICES: [&str; 10] = [
    "mail", "calendar", "drive", "repo", "bank", "chat", "web", "shell", "crm", "helpdesk",
];

// The `touched` mask must have a bit for every service.
const _: () = assert!(SERVICES.len() <= u16::BITS as usize);

/// Parses schema-validated arguments into a typed struct. Validation has already run, so a failure here
/// means the schema and the struct disagree; it is still reported, never panicked on.
pub(crate) fn parse<T: DeserializeOwned>(args: &Value) -> Result<T, Fail> {
    // JSON Schema counts `5.0` as an integer but serde does not: retry with integral floats as integers.
    T::deserialize(args)
        .or_else(|e| T::deserialize(integral_floats_as_ints(args)).map_err(|_| e))
        .map_err(|e| format!("invalid arguments: {e}"))
}

/// `args` with every float that has no fractional part (and fits exactly) turned into an integer.
fn integral_floats_as_ints(v: &Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(integral_floats_as_ints).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), integral_floats_as_ints(x)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Renders a typed value as JSON (for tool results).
pub(crate) fn json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Case-insensitive "contains every word of the query" match used by search tools.
pub(crate) fn matches_query(query: &str, fields: &[&str]) -> bool {
    let hay: String = fields
        .iter()
        .map(|f| f.to_lowercase())
        .collect::<Vec<_>>()
        .join(" \u{1}");
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    !words.is_empty() && words.iter().all(|w| hay.contains(w.as_str()))
}

/// Whether `s` looks like an email address (`local@domain.tld`).
pub(crate) fn is_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.contains(char::is_whitespace)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
