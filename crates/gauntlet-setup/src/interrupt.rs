//! Ctrl-C (or SIGTERM) during a job: the `--json` document is closed with `"stopped": "interrupted"` (so it still
//! parses); once the job's run is recorded, the run is marked `interrupted` in the store and the command that resumes
//! it is printed; the process exits 130 (143 for SIGTERM) either way. What was stored stays; `--resume` runs the rest.
//! A second Ctrl-C while the store is being marked (a writer may hold it for a moment) exits at once.

use std::path::PathBuf;
use std::sync::Mutex;

/// The run being recorded: its store, id and job (`run`, `redteam`).
struct Recording {
    store: PathBuf,
    id: String,
    kind: &'static str,
}

static RECORDING: Mutex<Option<Recording>> = Mutex::new(None);

/// What closes the job's `--json` document.
static CLOSE: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);

/// From now on, Ctrl-C closes `doc` (as stopped by an interrupt) before anything else.
pub fn closes<W: std::io::Write + Send + 'static>(doc: &gauntlet_report::json::SharedDoc<W>) {
    let doc = doc.clone();
    let close = move || drop(doc.finish("stopped", &"interrupted"));
    if let Ok(mut c) = CLOSE.lock() {
        *c = Some(Box::new(close));
    }
}

/// Handles Ctrl-C from now on (call it when a job starts, before anything is recorded).
pub fn install() {
    // Returns only once the handlers are in: a signal sent right after is never the default one that kills.
    let (ready, armed) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                // SIGTERM (a `kill`, a container or CI runner stopping) is handled as Ctrl-C is.
                let stop = gauntlet_mcp::stop_signal();
                let _ = ready.send(());
                let code = stop.await.exit_code();
                // Closing waits for an item being written (to a pipe that may be full): a second signal quits.
                if let Some(close) = CLOSE.lock().ok().and_then(|mut c| c.take()) {
                    let closing = tokio::task::spawn_blocking(close);
                    tokio::select! {
                        _ = closing => {}
                        _ = gauntlet_mcp::stop_signal() => std::process::exit(code),
                    }
                }
                let recording = RECORDING.lock().ok().and_then(|mut r| r.take());
                let Some(Recording { store, id, kind }) = recording else {
                    eprintln!("\ninterrupted before anything was recorded");
                    std::process::exit(code);
                };
                eprintln!("\ninterrupted: marking run {id} as interrupted (Ctrl-C again to quit at once)");
                let mark = {
                    let (store, id) = (store.clone(), id.clone());
                    tokio::task::spawn_blocking(move || {
                        gauntlet_store::Store::open(&store).and_then(|st| {
                            st.finish_run(&id, gauntlet_store::RunStatus::Interrupted, None)
                        })
                    })
                };
                tokio::select! {
                    marked = mark => {
                        if let Ok(Err(e)) = marked {
                            eprintln!("interrupted: could not mark the run: {e}");
                        }
                        eprintln!(
                            "run {id} interrupted; what finished is stored: `gauntlet {kind} --resume {id}{}` continues it",
                            gauntlet_store::store_flag(&store)
                        );
                    }
                    _ = gauntlet_mcp::stop_signal() => eprintln!("quit"),
                }
                std::process::exit(code);
            });
        });
    match spawned {
        Ok(_) => drop(armed.recv()),
        Err(e) => eprintln!("warning: Ctrl-C will not mark a run as interrupted: {e}"),
    }
}

/// From now on, Ctrl-C marks run `id` of job `kind` in the store at `store` as interrupted.
pub fn recording(store: PathBuf, id: String, kind: &'static str) {
    if let Ok(mut r) = RECORDING.lock() {
        *r = Some(Recording { store, id, kind });
    }
}

/// The run is finished (complete or failed): Ctrl-C from now on must not mark it interrupted.
pub fn finished() {
    if let Ok(mut r) = RECORDING.lock() {
        *r = None;
    }
}
