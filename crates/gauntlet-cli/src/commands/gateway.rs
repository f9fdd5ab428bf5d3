//! `gauntlet gateway serve|proxy`: the tool gateway over MCP.

use crate::exit::ExitStatus;
use crate::flags::{StoreArgs, open_store};
use crate::job::load_valid;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use gauntlet_cases::PreparedCase;
use gauntlet_core::Setting;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
    #[arg(
        long,
        env = "GAUNTLET_GATEWAY_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
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

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    // One thread: a call hops between several tasks (transport, session, handler, upstream client), and
    // hops on one thread cost no cross-thread wake-ups; the gateway mediates one call at a time anyway.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn log_writer(path: &Option<PathBuf>) -> Result<Option<Box<dyn std::io::Write + Send>>> {
    Ok(match path {
        Some(p) => Some(Box::new(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("--log: cannot open {}", p.display()))?,
        ))),
        None => None,
    })
}

pub(crate) fn http_options(l: &ListenArgs, addr: SocketAddr) -> gauntlet_mcp::HttpOptions {
    gauntlet_mcp::HttpOptions {
        bind: addr,
        token: l.token.clone().filter(|t| !t.is_empty()),
        max_body: l.max_body,
        rate_per_sec: l.rate,
        ..Default::default()
    }
}

/// Serves `backend` as `listen` says, until stdin closes (stdio) or the process is interrupted (HTTP).
pub(crate) fn serve<B: gauntlet_mcp::Backend>(
    rt: &tokio::runtime::Runtime,
    backend: Arc<B>,
    name: &str,
    encode: bool,
    listen: &ListenArgs,
) -> Result<()> {
    match listen.http {
        None => rt
            .block_on(gauntlet_mcp::serve_stdio(backend, name, encode))
            .context("serving MCP over stdio")?,
        Some(addr) => rt.block_on(async {
            let server =
                gauntlet_mcp::serve_http(backend, name, encode, http_options(listen, addr))
                    .await
                    .context("--http")?;
            // Handlers first: a client may stop the server as soon as it reads the URL.
            let stop = gauntlet_mcp::stop_signal();
            // The URL goes to stderr: stdout is left to the data.
            eprintln!("gauntlet gateway: MCP over HTTP at {}", server.url());
            stop.await;
            server.stop().await;
            anyhow::Ok(())
        })?,
    }
    Ok(())
}

/// `gauntlet gateway …`
pub(crate) fn cmd_gateway(c: GatewayCommand) -> Result<ExitCode> {
    match c {
        GatewayCommand::Serve(a) => cmd_serve(a),
        GatewayCommand::Proxy(a) => cmd_proxy(a),
    }
}

pub(crate) fn cmd_serve(a: ServeArgs) -> Result<ExitCode> {
    let setting: Setting = a
        .setting
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--setting: {e}"))?;
    let loaded = load_valid(&a.suites)?;
    let Some(case) = loaded.cases.into_iter().find(|c| c.id == a.case) else {
        bail!("--case: no case `{}` (see `gauntlet cases list`)", a.case);
    };
    let pc = PreparedCase::new(case);
    if !pc.applies(setting) {
        bail!(
            "--setting: case `{}` has no injection rules, so `{setting}` does not apply to it",
            a.case
        );
    }
    let models = crate::Models::for_defenses(
        &crate::config::Config::load_opt(a.config.as_deref())?,
        std::slice::from_ref(&a.defense),
    )?;
    let defense = models.defense(&a.defense)?;
    let gw = pc
        .gateway(setting, defense.as_ref())
        .map_err(|e| anyhow::anyhow!("--defense: {e}"))?;
    let backend = Arc::new(gauntlet_mcp::SandboxBackend::new(
        gw,
        log_writer(&a.listen.log)?,
    ));
    let rt = runtime()?;
    serve(&rt, backend.clone(), "gauntlet-sandbox", true, &a.listen)?;
    // The case's verdict on what the clients did (the gateway never sees their replies: the response level
    // reads an empty reply).
    let target = "mcp-client";
    let Some(record) = backend.with_gateway(|gw| pc.external_record(setting, target, gw, &[]))
    else {
        bail!("the gateway failed during the session");
    };
    let (calls, verdict, success) = (
        record
            .trace
            .turns
            .iter()
            .map(|t| t.events.len())
            .sum::<usize>(),
        record.verdict.clone(),
        record.task_success,
    );
    let errored = record.error.is_some();
    if let Some(e) = &record.error {
        eprintln!("gauntlet gateway: {calls} calls; the session is errored (exit 1): {e}");
    } else {
        eprintln!(
            "gauntlet gateway: {calls} calls; case {}: {:?}{}; task {}",
            pc.case.id,
            verdict.outcome,
            verdict.level.map_or(String::new(), |l| format!(
                " (decided at the {} level)",
                l.as_str()
            )),
            match success {
                Some(true) => "succeeded",
                Some(false) => "not done",
                None => "not checked",
            }
        );
    }
    if let Some(st) = open_store(&a.store)? {
        // Recorded as a run of one episode, so every report renders it (the HTML drill-down shows each call).
        let config = gauntlet_cases::RunConfig {
            settings: vec![setting],
            repeat: 1,
            concurrency: 1,
            seed: 0,
            max_turns: 1,
            shard: None,
        };
        let header = gauntlet_report::json::RunHeader::new(
            &config,
            &[target.to_string()],
            defense.name(),
            std::slice::from_ref(&pc.case.id),
        );
        let args = serde_json::json!({
            "gateway": "serve", "suites": a.suites, "case": a.case, "setting": a.setting, "defense": a.defense,
        });
        let id = st.create_run(
            gauntlet_store::RunKind::Gateway,
            &args,
            &serde_json::to_value(&header)?,
            1,
        )?;
        let cases = [pc];
        let mut sum = gauntlet_cases::run::Summarizer::new(&cases, vec![target.into()], &config);
        sum.add(&record);
        {
            let mut w = st.writer(&id);
            w.episode(&record)?;
            w.commit()?;
        }
        st.finish_run(
            &id,
            gauntlet_store::RunStatus::Complete,
            Some(&serde_json::to_value(sum.finish())?),
        )?;
        eprintln!(
            "gauntlet gateway: session recorded as run {id} in {} (gauntlet report {id}{} --format html)",
            a.store.path.display(),
            gauntlet_store::store_flag(&a.store.path)
        );
        models.save_ledger(&st, &id)?;
    }
    crate::flags::report_models(&models);
    // An errored session is not a pass, whatever its partial verdict.
    Ok(if errored {
        ExitStatus::Errored.into()
    } else {
        ExitCode::SUCCESS
    })
}

/// Parses `'Name: value'`, replacing each `${VAR}` in the value by `env(VAR)`. Errors name the header and the
/// variable, never the value (it is usually a credential).
pub(crate) fn upstream_header(
    spec: &str,
    env: impl Fn(&str) -> Option<String>,
) -> std::result::Result<(String, String), String> {
    let Some((name, value)) = spec.split_once(':') else {
        // Not echoed: it may be a bare credential.
        return Err("expected 'Name: value' (no colon found)".into());
    };
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(format!("{name:?} is not a header name"));
    }
    let mut out = String::new();
    let mut rest = value.trim();
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            return Err(format!("header {name}: `${{` without a closing `}}`"));
        };
        let var = &rest[at + 2..at + end];
        match env(var) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!(
                    "header {name}: environment variable {var} is not set"
                ));
            }
        }
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok((name.to_string(), out))
}

pub(crate) fn cmd_proxy(a: ProxyArgs) -> Result<ExitCode> {
    // The arguments first: a defense may start a process or load a model.
    if !(a.upstream_timeout.is_finite() && a.upstream_timeout > 0.0) {
        anyhow::bail!("--upstream-timeout: must be a positive number of seconds");
    }
    if gauntlet_defense::is_model_defense(&a.defense) && a.task.trim().is_empty() {
        anyhow::bail!(
            "--task: {} judges calls against the user's task; a proxy knows none unless told (--task TEXT)",
            a.defense
        );
    }
    if !a.upstream_header.is_empty() && a.upstream_url.is_none() {
        anyhow::bail!("--upstream-header: headers go to an HTTP upstream; give --upstream-url");
    }
    let headers = a
        .upstream_header
        .iter()
        .map(|h| upstream_header(h, gauntlet_llm::env::var))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--upstream-header: {e}"))?;
    let models = crate::Models::for_defenses(
        &crate::config::Config::load_opt(a.config.as_deref())?,
        std::slice::from_ref(&a.defense),
    )?;
    let defense = models.defense(&a.defense)?;
    let rules = match &a.inject {
        Some(p) => gauntlet_cases::case::load_injection_rules(p).map_err(|d| {
            anyhow::anyhow!(
                "--inject:\n{}",
                d.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })?,
        None => Vec::new(),
    };
    let rt = runtime()?;
    let upstream = rt.block_on(async {
        match (&a.upstream, &a.upstream_url) {
            (Some(cmd), None) => gauntlet_mcp::Upstream::command(cmd).await,
            (None, Some(url)) => {
                gauntlet_mcp::Upstream::url_with(
                    url,
                    &headers,
                    std::time::Duration::from_secs_f64(a.upstream_timeout),
                )
                .await
            }
            _ => Err(gauntlet_mcp::McpFrontError::Config(
                "give the upstream server: --upstream 'CMD ARGS' or --upstream-url URL".into(),
            )),
        }
    })?;
    let backend = Arc::new(
        rt.block_on(gauntlet_mcp::ProxyBackend::new(
            upstream,
            defense.as_ref(),
            &a.task,
            rules,
            log_writer(&a.listen.log)?,
        ))
        .context("preparing the proxy")?,
    );
    serve(&rt, backend.clone(), "gauntlet-proxy", false, &a.listen)?;
    eprintln!("gauntlet gateway proxy: {}", backend.counts());
    crate::flags::report_models(&models);
    rt.block_on(backend.close());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::upstream_header;

    #[test]
    fn upstream_headers_expand_the_environment_and_name_what_is_wrong() {
        let env = |v: &str| (v == "TOK").then(|| "s3cret".to_string());
        assert_eq!(
            upstream_header("Authorization: Bearer ${TOK}", env),
            Ok(("Authorization".into(), "Bearer s3cret".into()))
        );
        assert_eq!(
            upstream_header("X-Team:  a ${TOK}${TOK} b ", env),
            Ok(("X-Team".into(), "a s3crets3cret b".into()))
        );
        assert_eq!(
            upstream_header("Authorization: Bearer ${NOPE}", env),
            Err("header Authorization: environment variable NOPE is not set".into())
        );
        assert!(upstream_header("Authorization Bearer x", env).is_err());
        assert!(upstream_header("Bad Name: x", env).is_err());
        let e = upstream_header("A: ${TOK", env).err().unwrap_or_default();
        assert!(e.contains("closing"), "{e}");
    }
}
