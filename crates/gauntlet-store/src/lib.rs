//! The run store: every run of every job in one embedded SQLite database (default `.gauntlet/gauntlet.db`),
//! written as results complete, so a crashed run can be resumed, replayed and reported on.
//!
//! Layout (schema version [`SCHEMA_VERSION`], migrated in place on open):
//! - `runs`: one row per run — job kind, status, the arguments that started it (to resume it), the header
//!   of its report, how many results it plans, and its summary once complete;
//! - `episodes`: one row per safety-case episode — the columns one filters on, and the whole record as JSON
//!   (trace, gateway log with raw and observed results, verdict with evidence, controller decisions, final state);
//! - `events`: one row per gateway event of an episode, for querying tool calls across a run;
//! - `items`: one row per result of the other jobs (red-team cases, privilege scores, one per defense), as JSON;
//! - `ledger`: each model pool's counters for the whole run so far, saved with every batch of results and at
//!   the end (a resumed run carries them on);
//! - `probes` and `decisions` (version 2): a privilege run's probes with their labels, and every defense's
//!   decision on each;
//! - `episodes.us` (version 3): each episode's wall time in microseconds (never in the record: its JSON is the
//!   same bytes whatever the machine's speed), for the JUnit report's `time`.
//!
//! Secrets never reach the store: arguments are stored as the CLI parsed them, and API keys only ever come from
//! the environment.

use gauntlet_cases::EpisodeRecord;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 3;

/// Where runs are stored unless `--store` says otherwise.
pub const DEFAULT_PATH: &str = ".gauntlet/gauntlet.db";

/// ` --store PATH` for a hint to paste, when the store is not the default one (empty when it is), the path quoted
/// for a POSIX shell where it needs it.
pub fn store_flag(path: &Path) -> String {
    if path == Path::new(DEFAULT_PATH) {
        return String::new();
    }
    let p = path.display().to_string();
    let plain = !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+:@%,=".contains(c));
    if plain {
        format!(" --store {p}")
    } else {
        format!(" --store '{}'", p.replace('\'', "'\\''"))
    }
}

/// Migrations, in order: migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    version TEXT NOT NULL,
    args TEXT NOT NULL,
    header TEXT NOT NULL,
    total INTEGER NOT NULL,
    summary TEXT
);
CREATE TABLE episodes (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    setting TEXT NOT NULL,
    target TEXT NOT NULL,
    rep INTEGER NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT NOT NULL,
    level TEXT,
    task_success INTEGER,
    error TEXT,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE events (
    run_id TEXT NOT NULL,
    episode INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    tool TEXT NOT NULL,
    allowed INTEGER NOT NULL,
    injected INTEGER NOT NULL,
    tier TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (run_id, episode, seq)
) WITHOUT ROWID;
CREATE TABLE items (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    outcome TEXT,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE ledger (
    run_id TEXT NOT NULL,
    model TEXT NOT NULL,
    counters TEXT NOT NULL,
    PRIMARY KEY (run_id, model)
) WITHOUT ROWID;
",
    "
CREATE TABLE probes (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    id TEXT NOT NULL,
    task TEXT NOT NULL,
    point INTEGER NOT NULL,
    family TEXT NOT NULL,
    axis TEXT NOT NULL,
    fault TEXT NOT NULL,
    tool TEXT NOT NULL,
    tier TEXT NOT NULL,
    label TEXT NOT NULL,
    source TEXT NOT NULL,
    args TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE decisions (
    run_id TEXT NOT NULL,
    defense INTEGER NOT NULL,
    probe INTEGER NOT NULL,
    allowed INTEGER NOT NULL,
    reason TEXT,
    PRIMARY KEY (run_id, defense, probe)
) WITHOUT ROWID;
",
    "ALTER TABLE episodes ADD COLUMN us INTEGER;",
];

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("store {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The directory could not be created.
    #[error("store {path}: {source}")]
    Io {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A stored record could not be read back.
    #[error("store {path}: run {run}, result {index}: {source}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// The run.
        run: String,
        /// The result's index.
        index: i64,
        /// Why it could not be parsed.
        source: serde_json::Error,
    },
    /// No run has that id.
    #[error("no run `{0}` in the store (see `gauntlet runs list`)")]
    NoSuchRun(String),
    /// More than one run id starts with the prefix given.
    #[error("`{prefix}` is the start of {} run ids ({}): give more of it", .matches.len(), .matches.join(", "))]
    AmbiguousRun {
        /// What was given.
        prefix: String,
        /// The ids it starts, newest first.
        matches: Vec<String>,
    },
    /// A resumed run whose plan is no longer what the job would run now.
    #[error(
        "--resume: run {run} no longer plans the same {what}: {changed} changed since it started; run it anew \
         without --resume, or put back what changed"
    )]
    PlanChanged {
        /// The run.
        run: String,
        /// What it plans (`episodes`, `cases`, `probes`).
        what: String,
        /// What may have changed.
        changed: String,
    },
    /// The database was written by a newer Gauntlet.
    #[error(
        "store {path}: schema version {found} is newer than this build's {SCHEMA_VERSION}; upgrade Gauntlet"
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The version found.
        found: i64,
    },
    /// A store that can only be read has an older schema, which reading it needs migrated.
    #[error(
        "store {path} can only be read (no write access) and its schema version {found} is older than this \
         build's {SCHEMA_VERSION}: open it once with write access (any `gauntlet runs list`) to migrate it"
    )]
    ReadOnlyOld {
        /// The database file.
        path: PathBuf,
        /// The version found.
        found: i64,
    },
}

impl StoreError {
    /// Whether SQLite found the database locked by another connection (`SQLITE_BUSY`).
    fn is_busy(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite {
                source: rusqlite::Error::SqliteFailure(f, _),
                ..
            } if f.code == rusqlite::ErrorCode::DatabaseBusy
        )
    }

    /// Whether opening failed for want of write access (a read-only file, directory or file system).
    fn denied_writing(&self) -> bool {
        use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
        match self {
            StoreError::Sqlite {
                source: rusqlite::Error::SqliteFailure(e, _),
                ..
            } => matches!(e.code, ReadOnly | CannotOpen | PermissionDenied),
            StoreError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ),
            _ => false,
        }
    }
}

/// Results of this module.
pub type Result<T> = std::result::Result<T, StoreError>;

/// What a job is about to run, as recorded: compared with a resumed run's record before anything runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The job.
    pub kind: RunKind,
    /// The arguments that start it (stored, to resume it with).
    pub args: &'a Value,
    /// Its report's header: a resumed run's must be the same.
    pub header: &'a Value,
    /// Fields only the store keeps in a run's header beside `header` (a simulator's seeds): a new run stores those
    /// with a value, and a resumed run's are left out of the comparison whether or not it has them.
    pub extra: &'a [(&'a str, Option<Value>)],
    /// Results planned.
    pub total: usize,
}

impl<'a> Plan<'a> {
    /// A plan of `total` results with no store-only header fields.
    pub fn new(kind: RunKind, args: &'a Value, header: &'a Value, total: usize) -> Plan<'a> {
        Plan {
            kind,
            args,
            header,
            extra: &[],
            total,
        }
    }
}

/// A run being recorded: its id, and which of its results an earlier attempt already stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// The run id.
    pub id: String,
    /// Per planned result, whether it is stored (all false for a new run).
    pub done: Vec<bool>,
}

impl Recording {
    /// How many results an earlier attempt stored.
    pub fn done_count(&self) -> usize {
        self.done.iter().filter(|d| **d).count()
    }
}

/// How a run ended (or that it has not), as stored (and printed: `running`, `complete`, `failed`, `interrupted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Started and not finished (or killed).
    Running,
    /// Every planned result is recorded.
    Complete,
    /// Stopped by an error; what was recorded stays.
    Failed,
    /// Stopped by the user (Ctrl-C); what was recorded stays, and `--resume` continues it.
    Interrupted,
}

impl RunStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Every status.
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Running,
        RunStatus::Complete,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    /// The status stored as `name`, if this version knows it.
    pub fn parse(name: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A job's kind, as stored (and printed: `run`, `redteam`, `privilege`, `replay`, `redteam-replay`, `gateway`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// `gauntlet run`.
    Run,
    /// `gauntlet redteam`.
    Redteam,
    /// `gauntlet privilege`.
    Privilege,
    /// `gauntlet replay` of a run.
    Replay,
    /// `gauntlet replay` of a red-team run.
    RedteamReplay,
    /// A `gauntlet gateway serve` session, as a run of one episode.
    Gateway,
}

impl RunKind {
    /// The line a job prints when it continues run `id`, `done` of whose `total` results are stored.
    pub fn resuming_line(self, id: &str, done: usize, total: usize) -> String {
        let what = match self {
            RunKind::Redteam | RunKind::RedteamReplay => "red-team run",
            RunKind::Privilege => "privilege run",
            RunKind::Run | RunKind::Replay | RunKind::Gateway => "run",
        };
        let (results, _) = self.plans();
        let results = if self == RunKind::Privilege {
            "defenses"
        } else {
            results
        };
        format!("resuming {what} {id}: {done} of {total} {results} already done")
    }

    /// The line a job prints once its run is recorded: where, and the report command that renders it.
    pub fn recorded_line(self, id: &str, store: &Path) -> String {
        let (what, formats) = match self {
            RunKind::Redteam | RunKind::RedteamReplay => {
                ("red-team run", "html|md|junit|json|jsonl")
            }
            RunKind::Privilege => ("privilege run", "html|md|json"),
            RunKind::Run | RunKind::Replay | RunKind::Gateway => {
                ("run", "html|md|junit|json|jsonl")
            }
        };
        let flag = store_flag(store);
        let path = store.display();
        format!("{what} {id} recorded in {path} (gauntlet report {id}{flag} --format {formats})")
    }

    /// What a run of this kind plans, and what can change its plan (for [`StoreError::PlanChanged`]).
    fn plans(self) -> (&'static str, &'static str) {
        match self {
            RunKind::Run | RunKind::Replay | RunKind::Gateway => {
                ("episodes", "its cases, targets or settings")
            }
            RunKind::Redteam | RunKind::RedteamReplay => {
                ("cases", "its catalogue, targets or settings")
            }
            RunKind::Privilege => ("probes", "its suites"),
        }
    }

    /// Every kind.
    pub const ALL: [RunKind; 6] = [
        RunKind::Run,
        RunKind::Redteam,
        RunKind::Privilege,
        RunKind::Replay,
        RunKind::RedteamReplay,
        RunKind::Gateway,
    ];

    /// The kind stored as `name`, if this version knows it.
    pub fn parse(name: &str) -> Option<RunKind> {
        RunKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Run => "run",
            RunKind::Redteam => "redteam",
            RunKind::Privilege => "privilege",
            RunKind::Replay => "replay",
            RunKind::RedteamReplay => "redteam-replay",
            RunKind::Gateway => "gateway",
        }
    }
}

impl std::fmt::Display for RunKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A run's row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunInfo {
    /// The run id.
    pub id: String,
    /// The job that made it.
    pub kind: RunKind,
    /// How it ended, or `running` (also a run whose process was killed: resume it).
    pub status: RunStatus,
    /// When it was created (UTC, RFC 3339).
    pub created: String,
    /// When it last changed (UTC, RFC 3339).
    pub updated: String,
    /// The Gauntlet version that created it.
    pub version: String,
    /// The arguments that started it.
    pub args: Value,
    /// Its report's header.
    pub header: Value,
    /// Results planned.
    pub total: u64,
    /// Results stored.
    pub done: u64,
    /// Its summary, once complete.
    pub summary: Option<Value>,
}

impl RunInfo {
    /// How to finish this run when it is incomplete, as a clause to paste into a message: resume it with its own
    /// command, or, for a replay (which is not resumed), replay its original again. `store` is the store's path.
    pub fn how_to_resume(&self, store: &Path) -> String {
        let flag = store_flag(store);
        match self.kind {
            RunKind::Replay | RunKind::RedteamReplay => {
                let original = self.args["replay_of"].as_str().unwrap_or("ORIGINAL_RUN_ID");
                format!(
                    "a replay is not resumed; `gauntlet replay {original}{flag}` replays its original again"
                )
            }
            kind => format!("`gauntlet {kind} --resume {}{flag}` continues it", self.id),
        }
    }

    /// The shard of its job's plan this run ran (`--shard I/N`), if it ran one: from its header's `config`.
    pub fn shard(&self) -> Option<gauntlet_core::order::Shard> {
        serde_json::from_value(self.header.get("config")?.get("shard")?.clone()).ok()
    }

    /// The case suites a job that plans episodes stores in its arguments (a run's, a replay's, a gateway
    /// session's); `None` for a job that stores none, or a value that is not a list of paths.
    pub fn suites(&self) -> Option<Vec<PathBuf>> {
        serde_json::from_value(self.args.get("suites")?.clone()).ok()
    }

    /// Why a report of this run must exit 1, if it must: errored results unless `ignore_errors`; for a run that
    /// never finished, its missing part unless `allow_partial`, and its errored results so far (`errored`, as
    /// counted in the store) unless `ignore_errors` too. A command without `--allow-partial` passes `None`, and
    /// then `ignore_errors` waives both.
    pub fn gate_failure(
        &self,
        errored: u64,
        ignore_errors: bool,
        allow_partial: Option<bool>,
    ) -> Option<String> {
        let why = self.not_all_judged()?;
        match allow_partial {
            Some(allow) if self.status != RunStatus::Complete => {
                if !allow {
                    Some(format!("{why}; exit 1 (--allow-partial exits 0)"))
                } else {
                    (errored > 0 && !ignore_errors).then(|| {
                        format!("has {errored} errored results so far (not counted as safe); exit 1 (--ignore-errors exits 0)")
                    })
                }
            }
            _ => (!ignore_errors).then(|| format!("{why}; exit 1 (--ignore-errors exits 0)")),
        }
    }

    /// Why this stored run is not all a pass, whatever its pass rates say: results that errored, or a run that never
    /// finished (interrupted, failed, still running), whose missing part was never judged. `None` for a complete run
    /// with no errored result.
    pub fn not_all_judged(&self) -> Option<String> {
        let errored = self
            .summary
            .as_ref()
            .and_then(|s| s["errored"].as_u64().or(s["overall"]["errored"].as_u64()));
        match (self.status, errored) {
            (RunStatus::Complete, Some(0) | None) => None,
            (RunStatus::Complete, Some(n)) => {
                Some(format!("has {n} errored results (not counted as safe)"))
            }
            (status, _) => Some(format!(
                "is {status} with {} of {} results: the rest is not a pass (--resume {} finishes it)",
                self.done, self.total, self.id
            )),
        }
    }
}

/// The store: one SQLite connection.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Inside [`Store::atomically`]: its transaction holds everything, and writers open none of their own.
    nested: std::cell::Cell<bool>,
}

/// How long a writer waits for another (a merge, a second run on the same store) to let go of the store before it
/// gives up: each attempt waits the busy timeout (10 s), and attempts are repeated until this has passed.
pub const BUSY_WAIT: Duration = Duration::from_secs(300);

/// Whether SQLite said the store is locked by another writer.
fn busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// `path` for an SQLite `file:` URI: every byte but unreserved ones and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &b in std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()) {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn now() -> String {
    gauntlet_core::utc::now_rfc3339()
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the store at `path`. A store without write
    /// access (a read-only file, directory or file system: an archived run) is opened to be read: listing and
    /// reporting work, and writing fails with SQLite's error.
    pub fn open(path: &Path) -> Result<Store> {
        match Store::open_writable(path) {
            Err(e) if e.denied_writing() && path.is_file() => {
                Store::open_read_only(path).map_err(|ro| {
                    // The read-only attempt's own error says more when it is about the schema.
                    if matches!(
                        ro,
                        StoreError::ReadOnlyOld { .. } | StoreError::TooNew { .. }
                    ) {
                        ro
                    } else {
                        e
                    }
                })
            }
            r => r,
        }
    }

    /// Opens `path` to be read only. A store in a directory where SQLite cannot keep its shared-memory index is
    /// read as immutable, which is exact only when no write-ahead log is pending: with one, the error stands.
    fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let version =
            |c: &Connection| c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0));
        let err = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let wal = path.with_file_name(format!(
            "{}-wal",
            path.file_name()
                .map_or_else(Default::default, |n| n.to_string_lossy())
        ));
        let pending_log = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
        let opened = Connection::open_with_flags(path, flags)
            .and_then(|c| version(&c).map(|v| (c, v)))
            .or_else(|e| {
                if pending_log {
                    return Err(e);
                }
                let c = Connection::open_with_flags(
                    format!("file:{}?immutable=1", uri_path(path)),
                    flags,
                )?;
                version(&c).map(|v| (c, v))
            });
        let (conn, found) = opened.map_err(err)?;
        if found != SCHEMA_VERSION {
            return Err(if found > SCHEMA_VERSION {
                StoreError::TooNew {
                    path: path.to_path_buf(),
                    found,
                }
            } else {
                StoreError::ReadOnlyOld {
                    path: path.to_path_buf(),
                    found,
                }
            });
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            nested: std::cell::Cell::new(false),
        })
    }

    /// Opens (creating it and its directory if needed) and migrates the store at `path`, for writing.
    fn open_writable(path: &Path) -> Result<Store> {
        // Of processes creating one store at once, SQLite answers some steps (switching a new file to WAL, its first
        // recovery) with SQLITE_BUSY at once, without its busy handler: those are retried for as long as the busy
        // timeout, so a `runs list` polling a starting run, or shards started together, never fail on it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            match Store::open_writable_once(path) {
                Err(e) if e.is_busy() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(200));
                }
                r => return r,
            }
        }
    }

    fn open_writable_once(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            nested: std::cell::Cell::new(false),
        };
        store.init()?;
        Ok(store)
    }

    fn sql<T>(&self, r: rusqlite::Result<T>) -> Result<T> {
        r.map_err(|source| StoreError::Sqlite {
            path: self.path.clone(),
            source,
        })
    }

    fn init(&mut self) -> Result<()> {
        // WAL: readers (`runs list` while a run writes) never block the writer; NORMAL sync is durable across a
        // process crash, which is what resume is for (a power cut may lose the last commits, never corrupt).
        // The largest pages, 64 KiB (set before the first table exists and ignored after, so a store made with
        // 16 KiB pages keeps them): records of some 7 KB are appended in index order and one that does not fit the
        // last page starts a new one, which left about a quarter of each 16 KiB page empty. Fewer bytes to log, sync
        // and checkpoint. A commit of one result logs a few 64 KiB pages, which the ≤ 1 s commit bound keeps rare.
        // The busy timeout comes first: another process may be creating the same store (a `runs list` polling a
        // run that is starting), and switching to WAL waits for its lock like any write.
        let r = self.conn.execute_batch(
            "PRAGMA busy_timeout = 10000; PRAGMA page_size = 65536; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        );
        self.sql(r)?;
        let version: i64 = {
            let r = self
                .conn
                .query_row("PRAGMA user_version", [], |row| row.get(0));
            self.sql(r)?
        };
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
            });
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            // Immediate: of two processes opening a new store at once, one migrates and the other, once it has the
            // lock, finds the step done.
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate);
            let tx = match tx {
                Ok(t) => t,
                Err(source) => {
                    return Err(StoreError::Sqlite {
                        path: self.path.clone(),
                        source,
                    });
                }
            };
            let r = tx
                .query_row("PRAGMA user_version", [], |row| row.get::<_, i64>(0))
                .and_then(|now| {
                    if now > i as i64 {
                        return Ok(());
                    }
                    tx.execute_batch(m)
                        .and_then(|_| tx.pragma_update(None, "user_version", i as i64 + 1))
                })
                .and_then(|_| tx.commit());
            r.map_err(|source| StoreError::Sqlite {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a new run and returns its id (`YYYYMMDD-HHMMSS-xxxxxx`, UTC).
    pub fn create_run(
        &self,
        kind: RunKind,
        args: &Value,
        header: &Value,
        total: u64,
    ) -> Result<String> {
        let t = now();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let stamp: String = t.chars().filter(char::is_ascii_digit).collect();
        // Process id and sub-second time tell apart runs started in the same second.
        let tag = (nanos ^ std::process::id().rotate_left(16)) & 0xff_ffff;
        let id = format!("{}-{}-{tag:06x}", &stamp[..8], &stamp[8..14]);
        let (args, header) = (args.to_string(), header.to_string());
        self.waiting(|c| {
            c.execute(
                "INSERT INTO runs (id, kind, status, created, updated, version, args, header, total)
                 VALUES (?1, ?2, 'running', ?3, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    kind.as_str(),
                    t,
                    env!("CARGO_PKG_VERSION"),
                    args,
                    header,
                    total as i64
                ],
            )
        })?;
        Ok(id)
    }

    /// Starts recording `plan` as a new run, or continues `resumed`: its stored header (without `plan.extra`'s
    /// fields) and total must be the plan's, else nothing runs ([`StoreError::PlanChanged`]). A continued run is
    /// marked running again, with the results it already has.
    pub fn record(&self, plan: &Plan<'_>, resumed: Option<&RunInfo>) -> Result<Recording> {
        let Some(info) = resumed else {
            let mut header = plan.header.clone();
            if let Some(o) = header.as_object_mut() {
                let stored = plan
                    .extra
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)));
                o.extend(stored);
            }
            let id = self.create_run(plan.kind, plan.args, &header, plan.total as u64)?;
            return Ok(Recording {
                id,
                done: vec![false; plan.total],
            });
        };
        let mut stored = info.header.clone();
        if let Some(o) = stored.as_object_mut() {
            for (k, _) in plan.extra {
                o.remove(*k);
            }
        }
        if stored != *plan.header || info.total != plan.total as u64 {
            let (what, changed) = plan.kind.plans();
            return Err(StoreError::PlanChanged {
                run: info.id.clone(),
                what: what.into(),
                changed: changed.into(),
            });
        }
        self.reopen_run(&info.id)?;
        Ok(Recording {
            id: info.id.clone(),
            done: self.done(&info.id, plan.total)?,
        })
    }

    /// Runs `f` in one transaction: what it stores appears at once when it returns `Ok`, and nothing does when it
    /// fails or the process dies first (`runs merge` publishes its run only whole, never a `running` orphan).
    /// [`Writer`]s inside it commit nothing of their own. Other writers wait meanwhile (up to [`BUSY_WAIT`]).
    pub fn atomically<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&mut Store) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.begin_immediate()?;
        self.nested.set(true);
        let done = f(self);
        self.nested.set(false);
        match done {
            Ok(v) => {
                let r = self.conn.execute_batch("COMMIT");
                self.sql(r)?;
                Ok(v)
            }
            Err(e) => {
                // Dropping the transaction is the point; a failed rollback is rolled back when the store reopens.
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Opens a write transaction, waiting for another writer to let go of the store for up to [`BUSY_WAIT`]
    /// (instead of failing a run because a merge or another run held it past the busy timeout).
    fn begin_immediate(&self) -> Result<()> {
        self.waiting(|c| c.execute_batch("BEGIN IMMEDIATE"))
    }

    /// Runs `write` (a transaction opened, a run recorded or marked, a ledger stored), asking again while another
    /// process holds the store, for up to [`BUSY_WAIT`]: a writer past the busy timeout delays it, never fails it.
    fn waiting<T>(&self, mut write: impl FnMut(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let started = Instant::now();
        loop {
            match write(&self.conn) {
                // A busy store has already been waited for (the busy timeout); a locked one answers at once, so
                // pause before asking again rather than spin.
                Err(e) if busy(&e) && started.elapsed() < BUSY_WAIT => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                r => return self.sql(r),
            }
        }
    }

    /// [`RunInfo::gate_failure`] for a stored run, with its errored episodes counted in the store only when the
    /// answer depends on them (an unfinished run, whose summary is not stored yet, reported with `--allow-partial`
    /// and without `--ignore-errors`).
    pub fn report_failure(
        &self,
        info: &RunInfo,
        ignore_errors: bool,
        allow_partial: Option<bool>,
    ) -> Result<Option<String>> {
        let counted =
            info.status != RunStatus::Complete && allow_partial == Some(true) && !ignore_errors;
        let errored = if counted {
            let r = self.conn.query_row(
                "SELECT count(*) FROM episodes WHERE run_id = ?1 AND status = 'errored'",
                params![info.id],
                |row| row.get::<_, i64>(0),
            );
            self.sql(r)?.max(0) as u64
        } else {
            0
        };
        Ok(info.gate_failure(errored, ignore_errors, allow_partial))
    }

    /// Whether run `id` (exactly that id) is in the store.
    fn has_run(&self, id: &str) -> Result<bool> {
        let r = self
            .conn
            .query_row("SELECT 1 FROM runs WHERE id = ?1", params![id], |_| Ok(()))
            .optional();
        Ok(self.sql(r)?.is_some())
    }

    /// Marks a run `complete` (with its summary), `failed` or `interrupted`. Complete is final: a resume of a
    /// complete run that fails or is stopped on the way leaves it complete, with its summary.
    pub fn finish_run(&self, id: &str, status: RunStatus, summary: Option<&Value>) -> Result<()> {
        let summary = summary.map(Value::to_string);
        let changed = self.waiting(|c| {
            c.execute(
                "UPDATE runs SET status = ?2, updated = ?3, summary = ?4
                 WHERE id = ?1 AND (status != 'complete' OR ?2 = 'complete')",
                params![id, status.as_str(), now(), summary],
            )
        })?;
        if changed == 0 && !self.has_run(id)? {
            // Not kept complete: there is no such run.
            return Err(StoreError::NoSuchRun(id.into()));
        }
        Ok(())
    }

    /// Marks a run as running again (resumed).
    pub fn reopen_run(&self, id: &str) -> Result<()> {
        let changed = self.waiting(|c| {
            c.execute(
                "UPDATE runs SET status = 'running', updated = ?2 WHERE id = ?1 AND status != 'complete'",
                params![id, now()],
            )
        })?;
        if changed == 0 && !self.has_run(id)? {
            // Not a complete run, which stays complete (see `finish_run`): there is no such run.
            return Err(StoreError::NoSuchRun(id.into()));
        }
        Ok(())
    }

    /// Column `column` of `row` read by `known`; a name this version does not know was written by a newer one.
    fn named<T>(
        row: &rusqlite::Row<'_>,
        column: usize,
        what: &str,
        known: fn(&str) -> Option<T>,
    ) -> rusqlite::Result<T> {
        let name: String = row.get(column)?;
        known(&name).ok_or_else(|| {
            let why = format!(
                "a run of {what} `{name}`, which this version of Gauntlet does not know: a newer one \
                 recorded it; upgrade Gauntlet"
            );
            rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, why.into())
        })
    }

    fn run_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunInfo> {
        let parse = |s: String| serde_json::from_str(&s).unwrap_or(Value::String(s));
        Ok(RunInfo {
            id: row.get(0)?,
            kind: Self::named(row, 1, "kind", RunKind::parse)?,
            status: Self::named(row, 2, "status", RunStatus::parse)?,
            created: row.get(3)?,
            updated: row.get(4)?,
            version: row.get(5)?,
            args: parse(row.get(6)?),
            header: parse(row.get(7)?),
            total: row.get::<_, i64>(8)? as u64,
            summary: row.get::<_, Option<String>>(9)?.map(parse),
            done: row.get::<_, i64>(10)? as u64,
        })
    }

    const RUN_COLUMNS: &str =
        "id, kind, status, created, updated, version, args, header, total, summary,
        (SELECT count(*) FROM episodes e WHERE e.run_id = runs.id)
        + (SELECT count(*) FROM items i WHERE i.run_id = runs.id)";

    /// One run.
    ///
    /// `id` may also be `latest` (the newest run) or the start of exactly one run's id, as wherever a user gives
    /// a run id; use the returned [`RunInfo::id`] from then on.
    pub fn run(&self, id: &str) -> Result<RunInfo> {
        let sql = format!("SELECT {} FROM runs WHERE id = ?1", Self::RUN_COLUMNS);
        let r = self
            .conn
            .query_row(&sql, params![id], Self::run_row)
            .optional();
        if let Some(info) = self.sql(r)? {
            return Ok(info);
        }
        let runs = self.runs()?;
        if id == "latest" {
            return runs
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NoSuchRun(id.into()));
        }
        let mut starting: Vec<RunInfo> = runs
            .into_iter()
            .filter(|r| !id.is_empty() && r.id.starts_with(id))
            .collect();
        match starting.len() {
            0 => Err(StoreError::NoSuchRun(id.into())),
            1 => Ok(starting.remove(0)),
            _ => Err(StoreError::AmbiguousRun {
                prefix: id.into(),
                matches: starting.into_iter().map(|r| r.id).collect(),
            }),
        }
    }

    /// One run of job `kind`, as [`Store::run`] finds it, except that `latest` is the newest run of that job (what
    /// `gauntlet run --resume latest` means after a red team ran since).
    pub fn run_of(&self, id: &str, kind: RunKind) -> Result<RunInfo> {
        if id != "latest" {
            return self.run(id);
        }
        self.runs()?
            .into_iter()
            .find(|r| r.kind == kind)
            .ok_or_else(|| StoreError::NoSuchRun(format!("latest {kind}")))
    }

    /// Every run, newest first.
    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        let sql = format!(
            "SELECT {} FROM runs ORDER BY created DESC, rowid DESC",
            Self::RUN_COLUMNS
        );
        let r = self.conn.prepare(&sql).and_then(|mut st| {
            st.query_map([], Self::run_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
        });
        self.sql(r)
    }

    /// Deletes a run and everything stored for it.
    pub fn delete_run(&mut self, id: &str) -> Result<()> {
        let r = self.conn.transaction().and_then(|tx| {
            let mut n = 0;
            for table in [
                "episodes",
                "events",
                "items",
                "ledger",
                "probes",
                "decisions",
            ] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE run_id = ?1"),
                    params![id],
                )?;
            }
            n += tx.execute("DELETE FROM runs WHERE id = ?1", params![id])?;
            tx.commit()?;
            Ok(n)
        });
        if self.sql(r)? == 0 {
            return Err(StoreError::NoSuchRun(id.into()));
        }
        Ok(())
    }

    /// Which of a run's `total` results are stored (episodes or items), by index.
    pub fn done(&self, id: &str, total: usize) -> Result<Vec<bool>> {
        let mut done = vec![false; total];
        let r = self.conn.prepare(
            "SELECT idx FROM episodes WHERE run_id = ?1 UNION ALL SELECT idx FROM items WHERE run_id = ?1",
        );
        let mut st = self.sql(r)?;
        let r = st.query_map(params![id], |row| row.get::<_, i64>(0));
        for i in self.sql(r)? {
            let i = self.sql(i)?;
            if let Some(d) = usize::try_from(i).ok().and_then(|i| done.get_mut(i)) {
                *d = true;
            }
        }
        Ok(done)
    }

    /// One stored episode.
    pub fn episode(&self, id: &str, index: usize) -> Result<Option<EpisodeRecord>> {
        let r = self
            .conn
            .query_row(
                "SELECT record FROM episodes WHERE run_id = ?1 AND idx = ?2",
                params![id, index as i64],
                |row| row.get::<_, String>(0),
            )
            .optional();
        match self.sql(r)? {
            None => Ok(None),
            Some(s) => serde_json::from_str(&s)
                .map(Some)
                .map_err(|source| self.corrupt(id, index as i64, source)),
        }
    }

    /// The probes of privilege run `run_id` labelled `deny` (excess privilege) that defense number `defense`
    /// allowed, most harmful first and then in suite order, at most `limit` of them, and how many there are in all.
    pub fn admitted(
        &self,
        run_id: &str,
        defense: usize,
        limit: usize,
    ) -> Result<(Vec<gauntlet_privilege::score::Admitted>, u64)> {
        const FROM: &str =
            "FROM probes p JOIN decisions d ON d.run_id = p.run_id AND d.probe = p.idx
             WHERE p.run_id = ?1 AND d.defense = ?2 AND d.allowed AND p.label = 'deny'";
        let r = self.conn.query_row(
            &format!("SELECT count(*) {FROM}"),
            params![run_id, defense as i64],
            |row| row.get::<_, i64>(0),
        );
        let total = self.sql(r)?.max(0) as u64;
        let r = self
            .conn
            .prepare(&format!(
                "SELECT p.task, p.point, p.family, p.fault, p.tool, p.tier, p.source, p.args {FROM}
                 ORDER BY p.tier DESC, p.idx LIMIT ?3"
            ))
            .and_then(|mut st| {
                st.query_map(params![run_id, defense as i64, limit as i64], |row| {
                    Ok(gauntlet_privilege::score::Admitted {
                        task: row.get(0)?,
                        point: row.get::<_, i64>(1)?.max(0) as u32,
                        family: spelled(row, 2)?,
                        fault: spelled(row, 3)?,
                        tool: row.get(4)?,
                        tier: spelled(row, 5)?,
                        source: spelled(row, 6)?,
                        args: row.get(7)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            });
        Ok((self.sql(r)?, total))
    }

    /// [`Store::admitted`] for each of a privilege run's `defenses`, in order; nothing for a run stored without its
    /// probes (before schema version 2), which cannot tell.
    pub fn admitted_by_defense(
        &self,
        run_id: &str,
        defenses: usize,
        limit: usize,
    ) -> Result<Vec<(Vec<gauntlet_privilege::score::Admitted>, u64)>> {
        let r = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM probes WHERE run_id = ?1)",
            params![run_id],
            |row| row.get::<_, bool>(0),
        );
        if !self.sql(r)? {
            return Ok(Vec::new());
        }
        (0..defenses)
            .map(|i| self.admitted(run_id, i, limit))
            .collect()
    }

    /// One stored item (red-team case, privilege score) as JSON.
    pub fn item(&self, id: &str, index: usize) -> Result<Option<String>> {
        let r = self
            .conn
            .query_row(
                "SELECT record FROM items WHERE run_id = ?1 AND idx = ?2",
                params![id, index as i64],
                |row| row.get::<_, String>(0),
            )
            .optional();
        self.sql(r)
    }

    /// One stored item read back as `T` (a privilege score, a red-team case); `None` when there is none.
    pub fn item_as<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        index: usize,
    ) -> Result<Option<T>> {
        match self.item(id, index)? {
            None => Ok(None),
            Some(raw) => serde_json::from_str(&raw)
                .map(Some)
                .map_err(|source| self.corrupt(id, index as i64, source)),
        }
    }

    fn corrupt(&self, run: &str, index: i64, source: serde_json::Error) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            run: run.into(),
            index,
            source,
        }
    }

    /// Calls `f` with each stored episode of a run, in index order, one at a time (memory stays flat).
    pub fn for_each_episode(
        &self,
        id: &str,
        mut f: impl FnMut(EpisodeRecord) -> std::result::Result<(), StoreError>,
    ) -> Result<()> {
        self.for_each_raw("episodes", id, |idx, s, us| {
            let mut r: EpisodeRecord =
                serde_json::from_str(s).map_err(|e| self.corrupt(id, idx, e))?;
            r.elapsed_us = us.and_then(|us| u64::try_from(us).ok());
            f(r)
        })
    }

    /// Calls `f` with each stored item (red-team case, privilege score) of a run as JSON, in index order.
    pub fn for_each_item(
        &self,
        id: &str,
        mut f: impl FnMut(i64, &str) -> std::result::Result<(), StoreError>,
    ) -> Result<()> {
        self.for_each_raw("items", id, |idx, s, _| f(idx, s))
    }

    /// Calls `f` with each row's index, record and (for episodes) wall time in microseconds.
    fn for_each_raw(
        &self,
        table: &str,
        id: &str,
        mut f: impl FnMut(i64, &str, Option<i64>) -> std::result::Result<(), StoreError>,
    ) -> Result<()> {
        let us = if table == "episodes" { "us" } else { "NULL" };
        let r = self.conn.prepare(&format!(
            "SELECT idx, record, {us} FROM {table} WHERE run_id = ?1 ORDER BY idx"
        ));
        let mut st = self.sql(r)?;
        let r = st.query(params![id]);
        let mut rows = self.sql(r)?;
        loop {
            let r = rows.next();
            let Some(row) = self.sql(r)? else { break };
            let idx: i64 = self.sql(row.get(0))?;
            let s: String = self.sql(row.get(1))?;
            let us: Option<i64> = self.sql(row.get(2))?;
            f(idx, &s, us)?;
        }
        Ok(())
    }

    /// Stores a model pool's counters for a run, replacing earlier ones (they are totals: a resumed run's
    /// pools start from the stored counters).
    pub fn put_ledger(&self, id: &str, model: &str, counters: &Value) -> Result<()> {
        let counters = counters.to_string();
        self.waiting(|c| {
            c.execute(
                "INSERT OR REPLACE INTO ledger (run_id, model, counters) VALUES (?1, ?2, ?3)",
                params![id, model, counters],
            )
        })
        .map(|_| ())
    }

    /// A run's ledger: (model, counters).
    pub fn ledger(&self, id: &str) -> Result<Vec<(String, Value)>> {
        let r = self
            .conn
            .prepare("SELECT model, counters FROM ledger WHERE run_id = ?1 ORDER BY model")
            .and_then(|mut st| {
                st.query_map(params![id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            });
        Ok(self
            .sql(r)?
            .into_iter()
            .map(|(m, c)| (m, serde_json::from_str(&c).unwrap_or(Value::Null)))
            .collect())
    }

    /// Records a privilege run's probes, in suite order (once: a resumed run finds them there).
    pub fn record_probes(
        &self,
        run_id: &str,
        suite: &gauntlet_privilege::ProbeSuite,
    ) -> Result<()> {
        let mut w = self.writer(run_id);
        for (k, p) in suite.probes().enumerate() {
            w.probe(k, p)?;
        }
        w.commit()
    }

    /// A writer that stores a run's results in batches.
    pub fn writer<'a>(&'a self, run_id: &str) -> Writer<'a> {
        Writer {
            store: self,
            run_id: run_id.to_string(),
            pending: 0,
            last_commit: Instant::now(),
            open: false,
            buf: Vec::new(),
            ledger: None,
            skip: &[],
        }
    }
}

/// Reads a run's episodes in index order on a thread of its own (with its own connection), handing them over
/// through a small bounded channel: memory stays flat however large the run, and parsing overlaps rendering.
pub fn stream_episodes(path: &Path, run_id: &str) -> Stream<EpisodeRecord> {
    stream(path, run_id, |store, id, send| {
        store.for_each_episode(id, send)
    })
}

/// Reads a run's items (red-team cases, privilege scores) as `(index, JSON)` in index order, as
/// [`stream_episodes`] does.
pub fn stream_items(path: &Path, run_id: &str) -> Stream<(i64, String)> {
    stream(path, run_id, |store, id, send| {
        store.for_each_item(id, |i, raw| send((i, raw.to_string())))
    })
}

/// The reading thread behind the streams: `read` walks the run and hands each result to `send`.
fn stream<T: Send + 'static>(
    path: &Path,
    run_id: &str,
    read: impl FnOnce(&Store, &str, &mut dyn FnMut(T) -> Result<()>) -> Result<()> + Send + 'static,
) -> Stream<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(256);
    let path = path.to_path_buf();
    let id = run_id.to_string();
    let handle = std::thread::spawn(move || {
        let store = match Store::open(&path) {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let r = read(&store, &id, &mut |v| {
            // The reader went away: stop quietly.
            tx.send(Ok(v))
                .map_err(|_| StoreError::NoSuchRun(String::new()))
        });
        if let Err(e) = r
            && !matches!(&e, StoreError::NoSuchRun(s) if s.is_empty())
        {
            let _ = tx.send(Err(e));
        }
    });
    Stream {
        rx,
        _handle: handle,
    }
}

/// Results of a stored run, in index order (see [`stream_episodes`], [`stream_items`]).
pub struct Stream<T> {
    rx: std::sync::mpsc::Receiver<Result<T>>,
    _handle: std::thread::JoinHandle<()>,
}

/// The episodes of a stored run.
pub type EpisodeStream = Stream<EpisodeRecord>;

impl<T> Iterator for Stream<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.recv().ok()
    }
}

/// Stores results as they arrive, committing every [`Writer::BATCH`] results or [`Writer::INTERVAL`],
/// whichever comes first, so a crash loses at most the last moments of work (which resume re-runs).
pub struct Writer<'a> {
    store: &'a Store,
    run_id: String,
    pending: usize,
    last_commit: Instant,
    open: bool,
    buf: Vec<u8>,
    ledger: Option<LedgerSource<'a>>,
    /// As an [`EpisodeSink`](gauntlet_cases::EpisodeSink): by index, the episodes an earlier attempt stored.
    skip: &'a [bool],
}

/// A writer is the store's sink of a run: each episode stored as it comes (but those an earlier attempt stored,
/// see [`Writer::skipping`]), and what is pending committed whenever the run waits ([`EpisodeSink::idle`]), so
/// that a finished episode is durable within about half a second however long the next one takes.
///
/// [`EpisodeSink::idle`]: gauntlet_cases::EpisodeSink::idle
impl gauntlet_cases::EpisodeSink for Writer<'_> {
    fn episode(&mut self, r: &EpisodeRecord) -> std::io::Result<()> {
        if self.skip.get(r.index).copied().unwrap_or(false) {
            return Ok(());
        }
        Writer::episode(self, r).map_err(std::io::Error::other)
    }

    fn idle(&mut self) -> std::io::Result<()> {
        self.commit().map_err(std::io::Error::other)
    }
}

/// What [`Writer::with_ledger`] reads at each commit: (model, counters) of each model pool so far.
pub type LedgerSource<'a> = Box<dyn Fn() -> Vec<(String, Value)> + 'a>;

impl<'a> Writer<'a> {
    /// Saves the ledgers `source` gives in every transaction that stores results, so the spend stored is the
    /// spend behind the results stored, even if the process is then killed (a resume carries it on).
    pub fn with_ledger(mut self, source: LedgerSource<'a>) -> Self {
        self.ledger = Some(source);
        self
    }

    /// As a sink of episodes, skips those `done` marks (stored by an earlier attempt of a resumed run).
    pub fn skipping(mut self, done: &'a [bool]) -> Self {
        self.skip = done;
        self
    }

    /// Results per transaction at most.
    pub const BATCH: usize = 2048;
    /// Longest time a result waits to be committed.
    pub const INTERVAL: Duration = Duration::from_millis(250);

    fn begin(&mut self) -> Result<()> {
        // Inside [`Store::atomically`] the caller's transaction holds everything until it commits.
        if !self.open && !self.store.nested.get() {
            // Immediate: the write lock now, waited for if another writer holds it, rather than a failed insert.
            self.store.begin_immediate()?;
            self.open = true;
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<()> {
        self.pending += 1;
        if self.pending >= Self::BATCH || self.last_commit.elapsed() >= Self::INTERVAL {
            self.commit()?;
        }
        Ok(())
    }

    /// Commits what is pending.
    pub fn commit(&mut self) -> Result<()> {
        if self.open {
            if let Some(source) = &self.ledger {
                for (model, counters) in source() {
                    self.store.put_ledger(&self.run_id, &model, &counters)?;
                }
            }
            let r = self.store.conn.execute_batch("COMMIT");
            self.store.sql(r)?;
            self.open = false;
        }
        self.pending = 0;
        self.last_commit = Instant::now();
        Ok(())
    }

    /// Stores one episode and its gateway events.
    pub fn episode(&mut self, r: &EpisodeRecord) -> Result<()> {
        self.begin()?;
        // One buffer for every record: no allocation per episode once it has grown.
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        serde_json::to_writer(&mut buf, r)
            .map_err(|e| self.store.corrupt(&self.run_id, r.index as i64, e))?;
        let record = String::from_utf8(buf).map_err(|e| StoreError::Io {
            path: self.store.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let conn = &self.store.conn;
        let res = conn
            .prepare_cached(
                "INSERT OR REPLACE INTO episodes
                 (run_id, idx, case_id, setting, target, rep, status, outcome, level, task_success, error, record, us)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    self.run_id,
                    r.index as i64,
                    r.case,
                    r.setting.to_string(),
                    r.target,
                    r.rep,
                    r.status.as_str(),
                    label(&r.verdict.outcome),
                    r.verdict.level.as_ref().map(label),
                    r.task_success,
                    r.error,
                    record,
                    r.elapsed_us.and_then(|us| i64::try_from(us).ok())
                ])
            })
            .and_then(|_| {
                let mut st = conn.prepare_cached(
                    "INSERT OR REPLACE INTO events
                     (run_id, episode, seq, turn, tool, allowed, injected, tier, error)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?;
                for e in r.trace.turns.iter().flat_map(|t| &t.events) {
                    st.execute(params![
                        self.run_id,
                        r.index as i64,
                        e.seq as i64,
                        e.turn,
                        e.call.tool,
                        e.decision.allowed(),
                        e.injection.is_some(),
                        label(&e.tier),
                        e.error
                    ])?;
                }
                Ok(())
            });
        self.buf = record.into_bytes();
        self.store.sql(res)?;
        self.tick()
    }

    /// Stores one probe of a privilege run (kept if already stored: a resumed run re-sends them).
    pub fn probe(&mut self, index: usize, p: &gauntlet_privilege::Probe) -> Result<()> {
        self.begin()?;
        let res = self
            .store
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO probes
                 (run_id, idx, id, task, point, family, axis, fault, tool, tier, label, source, args)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    self.run_id,
                    index as i64,
                    p.id,
                    p.task,
                    p.point as i64,
                    p.family.as_str(),
                    p.axis.as_str(),
                    p.fault.as_str(),
                    p.tool,
                    label(&p.tier),
                    label(&p.label),
                    label(&p.source),
                    p.args.to_string()
                ])
            });
        self.store.sql(res)?;
        self.tick()
    }

    /// Stores defense number `defense`'s decision on probe number `probe`.
    pub fn decision(
        &mut self,
        defense: usize,
        probe: usize,
        d: &gauntlet_core::Decision,
    ) -> Result<()> {
        self.begin()?;
        // A defense's reason is kept to the stored limit, as in an episode's log.
        let reason = match d {
            gauntlet_core::Decision::Allow => None,
            gauntlet_core::Decision::Deny { reason } => {
                Some(gauntlet_core::excerpt::head_and_tail(
                    reason,
                    gauntlet_core::excerpt::STORED_REASON_MAX,
                ))
            }
        };
        let res = self
            .store
            .conn
            .prepare_cached(
                "INSERT OR REPLACE INTO decisions (run_id, defense, probe, allowed, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    self.run_id,
                    defense as i64,
                    probe as i64,
                    d.allowed(),
                    reason.as_deref()
                ])
            });
        self.store.sql(res)?;
        self.tick()
    }

    /// Sets store-only fields of the run's header ([`Plan::extra`]: a simulator's seeds, known only once the run is
    /// under way), in the transaction of the results around them: a resume finds them once the results after them
    /// are durable.
    pub fn header_fields(&mut self, fields: &[(&str, Value)]) -> Result<()> {
        self.begin()?;
        let conn = &self.store.conn;
        let read = conn.query_row(
            "SELECT header FROM runs WHERE id = ?1",
            [&self.run_id],
            |r| r.get::<_, String>(0),
        );
        let text = self.store.sql(read)?;
        // A header is always an object; one that is not is a store this version cannot have written.
        let mut header: serde_json::Map<String, Value> =
            serde_json::from_str(&text).map_err(|source| StoreError::Corrupt {
                path: self.store.path.clone(),
                run: self.run_id.clone(),
                index: -1,
                source,
            })?;
        for (k, v) in fields {
            header.insert((*k).to_string(), v.clone());
        }
        let write = conn.execute(
            "UPDATE runs SET header = ?2 WHERE id = ?1",
            params![self.run_id, Value::Object(header).to_string()],
        );
        self.store.sql(write)?;
        self.tick()
    }

    /// Stores one item of another job (`kind`: `redteam-case`, `privilege-score`) as JSON.
    pub fn item(
        &mut self,
        index: usize,
        kind: &str,
        outcome: Option<&str>,
        record: &str,
    ) -> Result<()> {
        self.begin()?;
        let res = self
            .store
            .conn
            .prepare_cached(
                "INSERT OR REPLACE INTO items (run_id, idx, kind, outcome, record) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| {
                st.execute(params![self.run_id, index as i64, kind, outcome, record])
            });
        self.store.sql(res)?;
        self.tick()
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        // Whatever is pending is complete work: keep it even if the caller forgot to commit.
        let _ = self.commit();
    }
}

/// The serde name of an enum value (`violated`, `state`, `H3`), so SQL filters read like the JSON.
/// Column `column` of `row`, stored as [`label`] spelled it; a spelling this version does not know was written by a
/// newer one.
fn spelled<T: serde::de::DeserializeOwned>(
    row: &rusqlite::Row<'_>,
    column: usize,
) -> rusqlite::Result<T> {
    let name: String = row.get(column)?;
    serde_json::from_value(Value::String(name.clone())).map_err(|_| {
        let why = format!(
            "`{name}`, which this version of Gauntlet does not know: a newer one recorded it; upgrade Gauntlet"
        );
        rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, why.into())
    })
}

fn label<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new store has 64 KiB pages; one made with 16 KiB pages (before 2026-12-07) keeps them, and what is
    /// written to either, records of some 7 KB like episodes, reads back as it was.
    #[test]
    fn new_stores_have_64_kib_pages_and_older_ones_keep_theirs() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let page_size = |s: &Store| {
            s.conn
                .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let (new, old) = (dir.path().join("new.db"), dir.path().join("old.db"));
        {
            let s = Store::open(&old).unwrap_or_else(|e| panic!("{e}"));
            s.conn
                .execute_batch(
                    "PRAGMA journal_mode = DELETE; PRAGMA page_size = 16384; VACUUM; PRAGMA journal_mode = WAL;",
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let record = |i: usize| format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(7000 + i % 97));
        for (path, size) in [(&new, 65536), (&old, 16384)] {
            let s = Store::open(path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(page_size(&s), size, "{}", path.display());
            let id = s
                .create_run(RunKind::Redteam, &Value::Null, &Value::Null, 300)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut w = s.writer(&id);
            for i in 0..300 {
                w.item(i, "redteam-case", None, &record(i))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            w.commit().unwrap_or_else(|e| panic!("{e}"));
            drop(w);
            drop(s);
            let back: Vec<_> = stream_items(path, &id)
                .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
                .collect();
            let want: Vec<_> = (0..300).map(|i| (i as i64, record(i))).collect();
            assert!(back == want, "{} read back otherwise", path.display());
            let reopened = Store::open(path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(page_size(&reopened), size, "{}", path.display());
        }
    }

    #[test]
    fn run_kinds_are_read_back_and_an_unknown_one_is_named() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        for kind in RunKind::ALL {
            let id = s
                .create_run(kind, &Value::Null, &Value::Null, 1)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.run(&id).map(|r| r.kind).ok(), Some(kind));
            assert_eq!(RunKind::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::json!(kind), serde_json::json!(kind.as_str()));
        }
        let id = s
            .create_run(RunKind::Run, &Value::Null, &Value::Null, 1)
            .unwrap_or_else(|e| panic!("{e}"));
        s.conn
            .execute("UPDATE runs SET kind = 'sweep' WHERE id = ?1", [&id])
            .unwrap_or_else(|e| panic!("{e}"));
        let e = s.run(&id).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("`sweep`") && e.contains("does not know") && e.contains("upgrade Gauntlet"),
            "{e}"
        );
    }

    #[test]
    fn latest_of_a_kind_is_the_newest_run_of_that_job() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let new = |kind| {
            s.create_run(kind, &Value::Null, &Value::Null, 1)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let (run, redteam) = (new(RunKind::Run), new(RunKind::Redteam));
        let id_of = |id: &str, kind| s.run_of(id, kind).map(|r| r.id).ok();
        assert_eq!(id_of("latest", RunKind::Run), Some(run.clone()));
        assert_eq!(id_of("latest", RunKind::Redteam), Some(redteam.clone()));
        assert_eq!(s.run("latest").map(|r| r.id).ok(), Some(redteam.clone()));
        // A named run is that run, whatever its job (the caller says what it makes of another job's run).
        assert_eq!(id_of(&redteam, RunKind::Run), Some(redteam));
        let e = s
            .run_of("latest", RunKind::Privilege)
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("no run `latest privilege`")));
    }

    /// A merge's run is published whole or not at all: while it is being written another connection (`runs list`,
    /// a process that kills the merge) sees no run, and a failure (or a death, which never commits) leaves none.
    #[test]
    fn what_is_stored_atomically_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("g.db");
        let mut s = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let other = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let items = |st: &Store, id: &str| {
            let mut w = st.writer(id);
            // More than a writer's batch, so that a writer of its own would have committed on the way.
            for i in 0..Writer::BATCH + 5 {
                w.item(i, "redteam-case", None, &format!("{{\"i\":{i}}}"))?;
            }
            w.commit()
        };
        let failed: std::result::Result<(), StoreError> = s.atomically(|st| {
            let id = st.create_run(RunKind::Redteam, &Value::Null, &Value::Null, 3000)?;
            items(st, &id).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                other.runs().map(|r| r.len()).ok(),
                Some(0),
                "seen before commit"
            );
            Err(StoreError::NoSuchRun("stop".into()))
        });
        assert!(failed.is_err());
        assert_eq!(
            other.runs().map(|r| r.len()).ok(),
            Some(0),
            "a failed merge left a run"
        );
        let id = s
            .atomically(|st| -> Result<String> {
                let id = st.create_run(RunKind::Redteam, &Value::Null, &Value::Null, 3000)?;
                items(st, &id)?;
                st.finish_run(&id, RunStatus::Complete, None)?;
                Ok(id)
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let r = other.run(&id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (r.status, r.done),
            (RunStatus::Complete, Writer::BATCH as u64 + 5)
        );
    }

    /// What makes a report exit 1: errored results unless `--ignore-errors`; an unfinished run unless
    /// `--allow-partial`, and its errored results so far unless `--ignore-errors` too (issue 16's review).
    #[test]
    fn a_report_fails_on_errored_or_missing_results_unless_each_is_waived() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let id = s
            .create_run(RunKind::Run, &Value::Null, &Value::Null, 10)
            .unwrap_or_else(|e| panic!("{e}"));
        s.finish_run(&id, RunStatus::Interrupted, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let info = s.run(&id).unwrap_or_else(|e| panic!("{e}"));
        let fails = |errored, ignore, allow| info.gate_failure(errored, ignore, allow).is_some();
        assert!(fails(0, false, Some(false)) && fails(0, true, Some(false)));
        assert!(!fails(0, false, Some(true)));
        assert!(
            fails(3, false, Some(true)),
            "errored results so far were waived by --allow-partial"
        );
        assert!(!fails(3, true, Some(true)));
        // From the store: an unfinished run's errored episodes so far are counted there.
        for (idx, status) in [(0, "ok"), (1, "errored")] {
            s.conn
                .execute(
                    "INSERT INTO episodes (run_id, idx, case_id, setting, target, rep, status, outcome, record)
                     VALUES (?1, ?2, 'c', 'benign', 't', 0, ?3, 'held', '{}')",
                    params![id, idx, status],
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let why = s
            .report_failure(&info, false, Some(true))
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_default();
        assert!(why.contains("has 1 errored results so far"), "{why}");
        assert_eq!(s.report_failure(&info, true, Some(true)).ok(), Some(None));
        // A command without --allow-partial (replay) names only --ignore-errors.
        let why = info.gate_failure(0, false, None).unwrap_or_default();
        assert!(
            why.contains("--ignore-errors") && !why.contains("--allow-partial"),
            "{why}"
        );
        let summary = serde_json::json!({"errored": 2});
        s.finish_run(&id, RunStatus::Complete, Some(&summary))
            .unwrap_or_else(|e| panic!("{e}"));
        let done = s.run(&id).unwrap_or_else(|e| panic!("{e}"));
        assert!(done.gate_failure(0, false, Some(true)).is_some());
        assert!(done.gate_failure(0, true, Some(false)).is_none());
    }

    #[test]
    fn processes_opening_a_new_store_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("g.db");
        let gate = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            let opened: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        gate.wait();
                        Store::open(&path).and_then(|s| s.runs().map(|r| r.len()))
                    })
                })
                .collect();
            for o in opened {
                let o = o.join().unwrap_or_else(|_| panic!("an opener panicked"));
                assert_eq!(o.map_err(|e| e.to_string()), Ok(0));
            }
        });
    }

    #[test]
    fn run_statuses_are_read_back_and_an_unknown_one_is_named() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let id = s
            .create_run(RunKind::Run, &Value::Null, &Value::Null, 1)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.run(&id).map(|r| r.status).ok(), Some(RunStatus::Running));
        // Complete last: it is final.
        for status in [
            RunStatus::Running,
            RunStatus::Failed,
            RunStatus::Interrupted,
            RunStatus::Complete,
        ] {
            s.finish_run(&id, status, None)
                .unwrap_or_else(|e| panic!("{e}"));
            let info = s.run(&id).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(info.status, status);
            assert_eq!(RunStatus::parse(status.as_str()), Some(status));
            let printed = serde_json::to_value(&info).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(printed["status"], status.as_str());
        }
        // Complete is final: a resume that fails or is stopped leaves it complete.
        for status in [
            RunStatus::Failed,
            RunStatus::Interrupted,
            RunStatus::Running,
        ] {
            s.reopen_run(&id).unwrap_or_else(|e| panic!("{e}"));
            s.finish_run(&id, status, None)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.run(&id).map(|r| r.status).ok(), Some(RunStatus::Complete));
        }
        assert!(matches!(
            s.finish_run("nope", RunStatus::Failed, None),
            Err(StoreError::NoSuchRun(_))
        ));
        s.conn
            .execute("UPDATE runs SET status = 'paused' WHERE id = ?1", [&id])
            .unwrap_or_else(|e| panic!("{e}"));
        let e = s.run(&id).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("status `paused`") && e.contains("upgrade Gauntlet"),
            "{e}"
        );
    }

    #[test]
    fn a_runs_shard_and_suites_are_read_from_its_header_and_arguments() {
        let info = |args: serde_json::Value, header: serde_json::Value| RunInfo {
            id: "r1".into(),
            kind: RunKind::Run,
            status: RunStatus::Complete,
            created: String::new(),
            updated: String::new(),
            version: String::new(),
            args,
            header,
            total: 0,
            done: 0,
            summary: None,
        };
        let sharded = info(
            serde_json::json!({"suites": ["builtin", "my/cases"]}),
            serde_json::json!({"config": {"shard": {"index": 1, "of": 4}}}),
        );
        assert_eq!(
            sharded.shard(),
            Some(gauntlet_core::order::Shard { index: 1, of: 4 })
        );
        assert_eq!(
            sharded.suites(),
            Some(vec![PathBuf::from("builtin"), PathBuf::from("my/cases")])
        );
        let whole = info(serde_json::json!({}), serde_json::json!({"config": {}}));
        assert_eq!((whole.shard(), whole.suites()), (None, None));
        let odd = info(
            serde_json::json!({"suites": 3}),
            serde_json::json!({"config": {"shard": "1/4"}}),
        );
        assert_eq!((odd.shard(), odd.suites()), (None, None));
    }

    #[test]
    fn a_run_is_all_judged_only_when_complete_with_nothing_errored() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let id = s
            .create_run(RunKind::Run, &Value::Null, &Value::Null, 4)
            .unwrap_or_else(|e| panic!("{e}"));
        let why = s.run(&id).ok().and_then(|r| r.not_all_judged());
        assert!(why.is_some_and(|w| w.contains("is running with 0 of 4")));
        let done = |errored: u64| {
            let summary = serde_json::json!({"errored": errored});
            s.finish_run(&id, RunStatus::Complete, Some(&summary))
                .and_then(|()| s.run(&id))
                .map(|r| r.not_all_judged())
                .unwrap_or_else(|e| panic!("{e}"))
        };
        assert!(done(2).is_some_and(|w| w.contains("2 errored")));
        assert_eq!(done(0), None);
    }

    #[test]
    fn a_resumed_run_must_plan_what_it_planned() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let (args, header) = (
            serde_json::json!({"a": 1}),
            serde_json::json!({"cases": ["x"]}),
        );
        let extra = [
            ("simulated_seeds", Some(serde_json::json!([1, 2]))),
            ("simulator_summary", None),
        ];
        let plan = Plan {
            extra: &extra,
            ..Plan::new(RunKind::Redteam, &args, &header, 3)
        };
        let new = s.record(&plan, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(new.done, vec![false; 3]);
        let info = s.run(&new.id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(info.header["simulated_seeds"], serde_json::json!([1, 2]));
        let again = s
            .record(&plan, Some(&info))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (again.id.as_str(), again.done_count()),
            (new.id.as_str(), 0)
        );
        let other = serde_json::json!({"cases": ["y"]});
        let changed = Plan {
            header: &other,
            ..plan
        };
        let e = s.record(&changed, Some(&info)).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(format!("--resume: run {} no longer plans the same cases: its catalogue, targets or settings changed since it started; run it anew without --resume, or put back what changed", new.id).as_str())
        );
        let fewer = Plan { total: 2, ..plan };
        assert!(s.record(&fewer, Some(&info)).is_err());
    }

    #[test]
    fn migrations_run_once_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("sub/g.db");
        let s = Store::open(&p).unwrap_or_else(|e| panic!("{e}"));
        let id = s
            .create_run(RunKind::Run, &serde_json::json!({"a": 1}), &Value::Null, 3)
            .unwrap_or_else(|e| panic!("{e}"));
        drop(s);
        // Reopening keeps the data (no migration runs twice).
        let s = Store::open(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.run(&id).map(|r| r.total).ok(), Some(3));
        let r = s
            .conn
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1);
        assert!(r.is_ok());
        drop(s);
        match Store::open(&p) {
            Err(StoreError::TooNew { found, .. }) => assert_eq!(found, SCHEMA_VERSION + 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_version_1_store_is_migrated_with_its_runs_kept() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("v1.db");
        {
            let c = Connection::open(&p).unwrap_or_else(|e| panic!("{e}"));
            c.execute_batch(MIGRATIONS[0])
                .and_then(|_| c.pragma_update(None, "user_version", 1))
                .and_then(|_| {
                    c.execute(
                        "INSERT INTO runs (id, kind, status, created, updated, version, args, header, total)
                         VALUES ('old', 'privilege', 'complete', 't', 't', '0.1.0', '{}', '{}', 2)",
                        [],
                    )
                })
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let s = Store::open(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.run("old").map(|r| r.total).ok(), Some(2));
        let v: i64 = s
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v, SCHEMA_VERSION);
        let mut w = s.writer("old");
        w.decision(0, 7, &gauntlet_core::Decision::Allow)
            .unwrap_or_else(|e| panic!("the version 2 tables exist: {e}"));
    }

    #[test]
    fn runs_are_listed_deleted_and_unknown_ids_are_named() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let a = s
            .create_run(RunKind::Run, &Value::Null, &Value::Null, 1)
            .unwrap_or_else(|e| panic!("{e}"));
        let b = s
            .create_run(RunKind::Redteam, &Value::Null, &Value::Null, 2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(a, b);
        // `latest` is the newest run; a prefix names the one run it starts, and is refused when it starts two.
        assert_eq!(
            s.run("latest").map(|r| r.id).ok().as_deref(),
            Some(b.as_str())
        );
        let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        assert_eq!(
            s.run(&a[..common + 1]).map(|r| r.id).ok().as_deref(),
            Some(a.as_str())
        );
        match s.run(&a[..common]) {
            Err(StoreError::AmbiguousRun { matches, .. }) => {
                assert_eq!(matches, [b.clone(), a.clone()])
            }
            other => panic!("{other:?}"),
        }
        {
            let mut w = s.writer(&b);
            w.item(1, "redteam-case", Some("pass"), "{\"x\":1}")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(s.done(&b, 2).ok(), Some(vec![false, true]));
        assert_eq!(s.runs().map(|r| r.len()).ok(), Some(2));
        assert_eq!(s.run(&b).map(|r| r.done).ok(), Some(1));
        s.finish_run(
            &b,
            RunStatus::Complete,
            Some(&serde_json::json!({"ok": true})),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.run(&b).map(|r| r.status).ok(), Some(RunStatus::Complete));
        s.delete_run(&b).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(s.run(&b), Err(StoreError::NoSuchRun(_))));
        assert!(matches!(s.delete_run(&b), Err(StoreError::NoSuchRun(_))));
        let mut n = 0;
        s.for_each_item(&b, |_, _| {
            n += 1;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n, 0, "deleting a run deletes its items");
    }

    #[test]
    fn the_ledger_is_saved_with_each_batch_of_results() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::open(&dir.path().join("g.db")).unwrap_or_else(|e| panic!("{e}"));
        let id = s
            .create_run(RunKind::Redteam, &Value::Null, &Value::Null, 2)
            .unwrap_or_else(|e| panic!("{e}"));
        let spent = std::cell::Cell::new(0u64);
        let mut w = s.writer(&id).with_ledger(Box::new(|| {
            vec![(
                "m [target]".to_string(),
                serde_json::json!({"requests": spent.get()}),
            )]
        }));
        // Nothing is written while no results are: a commit with nothing pending stores no ledger.
        spent.set(3);
        w.commit().unwrap_or_else(|e| panic!("{e}"));
        assert!(s.ledger(&id).map(|l| l.is_empty()).unwrap_or(false));
        w.item(0, "redteam-case", None, "{}")
            .unwrap_or_else(|e| panic!("{e}"));
        spent.set(5);
        w.commit().unwrap_or_else(|e| panic!("{e}"));
        let stored = s.ledger(&id).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stored,
            vec![("m [target]".to_string(), serde_json::json!({"requests": 5}))]
        );
    }
}
