//! Preflight: can each endpoint a job will call be reached at all? One TCP connection per distinct `host:port`,
//! made before the job starts, so an unreachable provider or app stops the job within seconds with its cause
//! instead of erroring every episode one retry at a time.

use std::time::Duration;

/// An endpoint a job will call: what it is for (`--judge openai/gpt-4.1-mini`) and its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The flag and spec that name it.
    pub what: String,
    /// Its URL (only the host and port are used).
    pub url: String,
}

/// Why an endpoint cannot be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// Every endpoint at this address.
    pub what: Vec<String>,
    /// `host:port`.
    pub at: String,
    /// What failed.
    pub cause: String,
}

/// `host:port` of a URL (the scheme's default port when none is given), or why there is none.
pub fn address(url: &str) -> Result<String, String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    let host = u
        .host_str()
        .ok_or_else(|| format!("`{url}` names no host"))?;
    let port = u
        .port_or_known_default()
        .ok_or_else(|| format!("`{url}` names no port and its scheme has none"))?;
    Ok(format!("{host}:{port}"))
}

/// Checks every distinct address of `endpoints` at once, each within `timeout`; returns those that failed.
pub async fn check(endpoints: &[Endpoint], timeout: Duration) -> Vec<Unreachable> {
    let mut by_address: Vec<(String, Vec<String>)> = Vec::new();
    let mut failed = Vec::new();
    for e in endpoints {
        match address(&e.url) {
            Ok(at) => match by_address.iter_mut().find(|(a, _)| *a == at) {
                Some((_, what)) => what.push(e.what.clone()),
                None => by_address.push((at, vec![e.what.clone()])),
            },
            Err(cause) => failed.push(Unreachable {
                what: vec![e.what.clone()],
                at: e.url.clone(),
                cause,
            }),
        }
    }
    let tasks: Vec<_> = by_address
        .into_iter()
        .map(|(at, what)| {
            tokio::spawn(async move {
                let cause = connect(&at, timeout).await.err();
                cause.map(|cause| Unreachable { what, at, cause })
            })
        })
        .collect();
    for t in tasks {
        if let Ok(Some(u)) = t.await {
            failed.push(u);
        }
    }
    failed
}

/// One TCP connection to `at` (`host:port`), closed at once.
async fn connect(at: &str, timeout: Duration) -> Result<(), String> {
    let attempt = async {
        let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(at)
            .await
            .map_err(|e| format!("cannot resolve the host ({e})"))?
            .collect();
        let mut last = String::from("the host has no address");
        for a in addrs {
            match tokio::net::TcpStream::connect(a).await {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    last = format!("connection refused ({e})");
                }
                Err(e) => last = format!("cannot connect ({e})"),
            }
        }
        Err(last)
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {} s", timeout.as_secs_f64())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_port_passes_and_a_closed_one_is_named_with_its_cause() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let open_port = open
            .local_addr()
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        let endpoints = [
            Endpoint {
                what: "--judge mock/j".into(),
                url: format!("http://127.0.0.1:{open_port}/v1"),
            },
            Endpoint {
                what: "--agent mock/a".into(),
                url: format!("http://127.0.0.1:{open_port}/v1"),
            },
            Endpoint {
                what: "--agent http://…".into(),
                url: format!("http://127.0.0.1:{closed_port}/chat"),
            },
            Endpoint {
                what: "--agent bad".into(),
                url: "not a url".into(),
            },
        ];
        let failed = rt.block_on(check(&endpoints, Duration::from_secs(5)));
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(
            failed
                .iter()
                .any(|u| u.at == format!("127.0.0.1:{closed_port}")
                    && u.cause.starts_with("connection refused"))
        );
        assert!(failed.iter().any(|u| u.cause.contains("is not a URL")));
        assert_eq!(
            address("https://api.openai.com/v1").ok().as_deref(),
            Some("api.openai.com:443")
        );
        drop(open);
    }
}
