//! `gauntlet gateway serve|proxy`: the tool gateway over MCP.

use crate::exit::ExitStatus;
use crate::flags::{StoreArgs, open_store, report_models};
use clap::{Args, Subcommand};
use gauntlet_setup::gateway as gw;
use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

/// `gauntlet gateway …`
#[derive(Subcommand)]
pub(crate) enum GatewayCommand {
    /// Serve a case's sandbox (its world's tools behind the gateway) to any MCP client, over stdio or HTTP.
    Serve(ServeArgs),
    /// Sit in front of a real MCP server: record, inject and enforce on its tools.
    Proxy(ProxyArgs),
}

/// How an MCP front listens.
#[derive(Args, Clone)]
pub(crate) struct ListenArgs {
    /// Serve over streamable HTTP on this address (`127.0.0.1:8765`; the endpoint is `/mcp`) instead of stdio.
    /// Any address but loopback needs --token.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    /// Bearer token HTTP clients must send (`Authorization: Bearer TOKEN`).
    #[arg(long, env = "GAUNTLET_GATEWAY_TOKEN", hide_env_values = true)]
    #[arg(value_name = "TOKEN")]
    pub(crate) token: Option<String>,
    /// Largest HTTP request body accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub(crate) max_body: usize,
    /// HTTP requests accepted per second (beyond: 429).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub(crate) rate: u32,
    /// Append every gateway event (raw and observed result, decision, injection) to this file as JSON lines.
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
}

/// `gauntlet gateway serve`
#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The case whose world to serve.
    #[arg(long, value_name = "ID")]
    pub(crate) case: String,
    /// Case files or directories, `builtin` or `builtin:SERVICE` (default: the built-in suite).
    #[arg(long = "suite", value_name = "PATH")]
    pub(crate) suites: Vec<PathBuf>,
    /// The setting: `benign` and `direct` serve the world as it is; `indirect` and `multi` apply the case's
    /// injection rules to tool results.
    #[arg(long, default_value = "benign")]
    pub(crate) setting: String,
    /// The defense in the gateway (as for `gauntlet run`; a model-based one reads the case's task).
    #[arg(long, default_value = "allow-all", value_name = "DEFENSE")]
    pub(crate) defense: String,
    /// Config file (YAML: providers, pool limits) for a model-based defense.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) listen: ListenArgs,
    /// When the session ends it is recorded as a one-episode run (`gauntlet report RUN_ID`).
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// `gauntlet gateway proxy`
#[derive(Args)]
pub(crate) struct ProxyArgs {
    /// The upstream MCP server as a command line, started as a child process speaking stdio
    /// (`'python3 server.py --flag'`).
    #[arg(long, value_name = "CMD ARGS", conflicts_with = "upstream_url")]
    pub(crate) upstream: Option<String>,
    /// The upstream MCP server's streamable HTTP endpoint.
    #[arg(long, value_name = "URL")]
    pub(crate) upstream_url: Option<String>,
    /// A header sent with every request to `--upstream-url`, as `'Name: value'` (repeatable). `${VAR}` in the
    /// value is replaced by the environment variable, so a credential need not appear on the command line:
    /// `--upstream-header 'Authorization: Bearer ${UPSTREAM_TOKEN}'`.
    #[arg(long, value_name = "NAME: VALUE")]
    pub(crate) upstream_header: Vec<String>,
    /// Longest wait, in seconds, for an HTTP upstream to answer one call.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub(crate) upstream_timeout: f64,
    /// The defense deciding each call before it is forwarded (as for `gauntlet run`).
    #[arg(long, default_value = "allow-all", value_name = "DEFENSE")]
    pub(crate) defense: String,
    /// The user's task, for defenses that read it (`alignment-check:MODEL`, `tool-filter:MODEL`, a policy's
    /// `task.prompt`): a proxy otherwise knows no task.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub(crate) task: String,
    /// Config file (YAML: providers, pool limits) for a model-based defense.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Injection rules applied to upstream results (YAML: a list of `{tool, when?, mode, text, field?, uses?}`,
    /// as in a case's `attack.inject`).
    #[arg(long, value_name = "FILE")]
    pub(crate) inject: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) listen: ListenArgs,
}

// Where an HTTP front listens goes to stderr: stdout is left to the data.
fn ready(url: &str) {
    eprintln!("gauntlet gateway: MCP over HTTP at {url}");
}

/// `gauntlet gateway …`
pub(crate) fn cmd_gateway(c: GatewayCommand) -> anyhow::Result<ExitCode> {
    match c {
        GatewayCommand::Serve(a) => cmd_serve(a),
        GatewayCommand::Proxy(a) => cmd_proxy(a),
    }
}

fn cmd_serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    gw::setting(&a.setting)?; // before the suite is loaded, as ever
    let l = a.listen;
    let sandbox = gw::Sandbox::new(gw::SandboxOptions {
        cases: crate::job::load_valid(&a.suites)?.cases,
        suites: a.suites,
        case: a.case,
        setting: a.setting,
        defense: a.defense,
        config: a.config,
        listen: gauntlet_mcp::Listen::new(l.http, l.token, l.max_body, l.rate, l.log),
    })?;
    let session = sandbox.serve(ready)?;
    eprintln!("gauntlet gateway: {session}");
    if let Some(st) = open_store(&a.store)? {
        sandbox.record(&st, &session, |run| eprintln!("gauntlet gateway: {run}"))?;
    }
    report_models(sandbox.models());
    let errored = session.errored().then(|| ExitStatus::Errored.into());
    Ok(errored.unwrap_or(ExitCode::SUCCESS))
}

fn cmd_proxy(a: ProxyArgs) -> anyhow::Result<ExitCode> {
    let l = a.listen;
    let proxy = gw::Proxy::start(&gw::ProxyOptions {
        upstream: a.upstream,
        upstream_url: a.upstream_url,
        upstream_headers: a.upstream_header,
        upstream_timeout: a.upstream_timeout,
        defense: a.defense,
        task: a.task,
        config: a.config,
        inject: a.inject,
        listen: gauntlet_mcp::Listen::new(l.http, l.token, l.max_body, l.rate, l.log),
    })?;
    eprintln!("gauntlet gateway proxy: {}", proxy.serve(ready)?);
    report_models(proxy.models());
    proxy.close();
    Ok(ExitCode::SUCCESS)
}
