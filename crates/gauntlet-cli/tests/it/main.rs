//! End-to-end tests: they run the `gauntlet` binary.

mod cases;
mod defenses;
mod mcp;
mod models;
mod readme;
mod redteam;
mod run;
mod shape;
mod store;

use std::path::PathBuf;
use std::process::Output;

/// Runs the binary with `args`. Unless a test passes `--store`, each call records into a store of its own
/// that is removed afterwards, so parallel tests never share (or lock) one database.
pub fn gauntlet(args: &[&str]) -> Output {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let store = std::env::temp_dir().join(format!("gauntlet-it-{}-{n}.db", std::process::id()));
    let out = assert_cmd::Command::cargo_bin("gauntlet")
        .unwrap_or_else(|e| panic!("binary: {e}"))
        .env("GAUNTLET_STORE", &store)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
    out
}

/// Runs the binary with `args` and SIGKILLs it once `store` shows some results recorded and more to come; the run
/// must still have been going.
pub fn kill_midway(args: &[&str], store: &str) {
    assert!(
        kill_past(args, store, 0).is_some(),
        "the run ended before it could be killed"
    );
}

/// Runs the binary with `args` and SIGKILLs it once the newest run in `store` has more than `done` results recorded
/// and fewer than its total. Returns the results recorded at the kill, or `None` when the process ended first.
pub fn kill_past(args: &[&str], store: &str, done: u64) -> Option<u64> {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gauntlet"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // Poll the store for the state the test needs, never a fixed delay: a busy machine may take any time to get
    // there.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let at = loop {
        if child.try_wait().ok().flatten().is_some() {
            return None;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no progress recorded in 300 s"
        );
        let o = gauntlet(&["runs", "list", "--json", "--store", store]);
        let row = stdout(&o)
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok());
        if let Some(r) = row
            && let (Some(d), Some(total)) = (r["done"].as_u64(), r["total"].as_u64())
            && d > done
            && d < total
        {
            break d;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    Some(at)
}

/// The newest run's id in a store, if it holds any.
pub fn newest_run(store: &str) -> Option<String> {
    let o = gauntlet(&["runs", "list", "--json", "--store", store]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|v| v["id"].as_str().map(String::from))
}

/// A path under tests/fixtures.
pub fn fixture(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A mock model server answering from `rules` (its script), and a config file naming it as provider `mock`.
pub struct MockModel {
    /// The server (for its counters).
    pub server: gauntlet_mock::MockServer,
    /// The config file's path.
    pub cfg: String,
    _dir: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
}

/// Starts a [`MockModel`].
pub fn mock_model(rules: serde_json::Value) -> MockModel {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let script = serde_json::from_value(rules).unwrap_or_else(|e| panic!("{e}"));
    let server = rt
        .block_on(gauntlet_mock::MockServer::start_local(
            gauntlet_mock::MockConfig {
                script,
                ..Default::default()
            },
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = dir.path().join("g.yaml");
    std::fs::write(
        &cfg,
        format!(
            "providers:\n  mock: {{base_url: \"{}\"}}\n",
            server.base_url()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    MockModel {
        server,
        cfg: cfg.to_string_lossy().into_owned(),
        _dir: dir,
        _rt: rt,
    }
}

/// Serves `router` on a loopback port from a runtime of its own; returns the runtime (keep it alive) and the
/// address.
pub fn serve(router: axum::Router) -> (tokio::runtime::Runtime, std::net::SocketAddr) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        addr
    });
    (rt, addr)
}
