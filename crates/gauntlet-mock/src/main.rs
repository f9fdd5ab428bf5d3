//! `gauntlet-mock`: serve the OpenAI-compatible mock on loopback.

use clap::Parser;
use gauntlet_mock::{Faults, MockConfig, MockServer, Rule};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// An OpenAI-compatible mock model server for testing Gauntlet offline.
#[derive(Parser)]
#[command(name = "gauntlet-mock", version)]
struct Args {
    /// Address to bind (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port (0: any free port; the chosen one is printed).
    #[arg(long, default_value_t = 8089)]
    port: u16,
    /// Delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Share of requests answered 429 (0–1).
    #[arg(long, default_value_t = 0.0)]
    rate_429: f64,
    /// Share answered 500.
    #[arg(long, default_value_t = 0.0)]
    rate_500: f64,
    /// Share held for --hang-ms before answering.
    #[arg(long, default_value_t = 0.0)]
    rate_hang: f64,
    /// Share answered with a body that is not JSON.
    #[arg(long, default_value_t = 0.0)]
    rate_malformed: f64,
    /// Share of tool-call replies with invalid arguments.
    #[arg(long, default_value_t = 0.0)]
    rate_bad_args: f64,
    /// Retry-After sent with 429s, in milliseconds.
    #[arg(long, default_value_t = 100)]
    retry_after_ms: u64,
    /// How long a hung request is held, in milliseconds.
    #[arg(long, default_value_t = 300_000)]
    hang_ms: u64,
    /// Seed of the fault draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// JSON file of scripted replies: [{"when": "...", "content": "...", "tool_calls": [{"name": "mail.send", "arguments": {...}}]}].
    #[arg(long)]
    script: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let a = Args::parse();
    for (name, v) in [
        ("--rate-429", a.rate_429),
        ("--rate-500", a.rate_500),
        ("--rate-hang", a.rate_hang),
        ("--rate-malformed", a.rate_malformed),
        ("--rate-bad-args", a.rate_bad_args),
    ] {
        if !(0.0..=1.0).contains(&v) {
            eprintln!("error: {name}: {v} is not a rate between 0 and 1");
            return std::process::ExitCode::from(2);
        }
    }
    let script: Vec<Rule> = match &a.script {
        None => vec![],
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: --script {}: {e}", p.display());
                return std::process::ExitCode::from(2);
            }
        },
    };
    let cfg = MockConfig {
        latency: Duration::from_millis(a.latency_ms),
        faults: Faults {
            rate_429: a.rate_429,
            rate_500: a.rate_500,
            rate_hang: a.rate_hang,
            rate_malformed: a.rate_malformed,
            rate_bad_args: a.rate_bad_args,
        },
        retry_after_ms: a.retry_after_ms,
        hang: Duration::from_millis(a.hang_ms),
        seed: a.seed,
        script,
        stall_after: None,
    };
    let server = match MockServer::start(SocketAddr::new(a.host, a.port), cfg).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot bind {}:{}: {e}", a.host, a.port);
            return std::process::ExitCode::from(2);
        }
    };
    println!(
        "gauntlet-mock listening on {} (stats at http://{}/stats)",
        server.base_url(),
        server.addr()
    );
    let _ = tokio::signal::ctrl_c().await;
    std::process::ExitCode::SUCCESS
}
