//! `cargo bench -p gauntlet-cli --bench mcp`: latency the proxy adds per tool call, over stdio and over HTTP.
//! The upstream is `gauntlet gateway serve` (a real MCP server process); each transport is measured called
//! directly and through `gauntlet gateway proxy` (allow-all, no injection rules, events logged in memory), with
//! the same client (`gauntlet_mcp::Upstream`, the proxy's own: rmcp's client over stdio, the crate's streamable
//! HTTP client over HTTP) making sequential `mail__list` calls. Over HTTP the
//! proxy is measured reaching the upstream both over HTTP and over stdio; the direct call is over HTTP in both.

use gauntlet_mcp::Upstream;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CASE: &str = "mail.credential-exfiltration.001";
const WARMUP: usize = 200;
const CALLS: usize = 3000;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_gauntlet")
}

/// Starts a gauntlet HTTP front; returns it and the URL it printed.
fn http(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(bin())
        .args(args)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut line = String::new();
    if let Some(err) = child.stderr.take() {
        let _ = std::io::BufReader::new(err).read_line(&mut line);
    }
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(url.starts_with("http://"), "{line}");
    (child, url)
}

async fn measure(up: &Upstream) -> Vec<Duration> {
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let t = Instant::now();
        let r = up
            .call("mail__list", serde_json::json!({}))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if i >= WARMUP {
            times.push(t.elapsed());
        }
        assert_ne!(r.is_error, Some(true));
    }
    times.sort();
    times
}

fn pct(t: &[Duration], p: f64) -> f64 {
    let i = ((t.len() as f64 - 1.0) * p).round() as usize;
    t[i.min(t.len() - 1)].as_secs_f64() * 1e3
}

fn report(transport: &str, direct: &[Duration], proxied: &[Duration]) {
    let (d50, d99, p50, p99) = (
        pct(direct, 0.5),
        pct(direct, 0.99),
        pct(proxied, 0.5),
        pct(proxied, 0.99),
    );
    println!(
        "{transport}: direct p50 {d50:.3} ms p99 {d99:.3} ms; through the proxy p50 {p50:.3} ms p99 {p99:.3} ms; added p50 {:.3} ms p99 {:.3} ms ({CALLS} calls)",
        p50 - d50,
        p99 - d99
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let serve = format!("{} gateway serve --no-store --case {CASE}", bin());
        let direct = Upstream::command(&serve)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let d = measure(&direct).await;
        direct.close().await;
        let proxy = format!("{} gateway proxy --upstream '{serve}'", bin());
        let proxied = Upstream::command(&proxy)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let p = measure(&proxied).await;
        proxied.close().await;
        report("stdio", &d, &p);

        let (mut server, url) = http(&[
            "gateway",
            "serve",
            "--no-store",
            "--case",
            CASE,
            "--rate",
            "100000",
        ]);
        let direct = Upstream::url(&url).await.unwrap_or_else(|e| panic!("{e}"));
        let d = measure(&direct).await;
        direct.close().await;
        let (mut proxy, purl) = http(&[
            "gateway",
            "proxy",
            "--upstream-url",
            &url,
            "--rate",
            "100000",
        ]);
        let proxied = Upstream::url(&purl).await.unwrap_or_else(|e| panic!("{e}"));
        let p = measure(&proxied).await;
        proxied.close().await;
        let _ = proxy.kill();
        report("http front, http upstream", &d, &p);
        // The same HTTP front, with the proxy reaching the upstream over stdio.
        let (mut proxy, purl) =
            http(&["gateway", "proxy", "--upstream", &serve, "--rate", "100000"]);
        let proxied = Upstream::url(&purl).await.unwrap_or_else(|e| panic!("{e}"));
        let p = measure(&proxied).await;
        proxied.close().await;
        let _ = proxy.kill();
        let _ = server.kill();
        report("http front, stdio upstream", &d, &p);
    });
}
