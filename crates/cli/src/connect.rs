//! Connecting to servers: one HTTP/2 channel per address, or one channel
//! balanced over several.

use std::time::Duration;

use anyhow::anyhow;
use tonic::transport::{Channel, Endpoint};

/// `server` as a URL: `host:port` means plain HTTP/2 (`http://host:port`).
fn url_of(server: &str) -> String {
    if server.contains("://") {
        server.to_string()
    } else {
        format!("http://{server}")
    }
}

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// While calls are open, the client pings a server that has sent nothing
/// for this long, and gives the connection up when the ping is not
/// answered within [`KEEPALIVE_TIMEOUT`]: a server that stops answering
/// without closing its socket (stopped, or cut off) then fails its calls
/// as one that died, whose puzzles go to the other servers, instead of
/// holding the run for ever. The server answers pings on its I/O threads,
/// so one busy solving does not miss them.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

fn endpoint(server: &str) -> anyhow::Result<Endpoint> {
    let url = url_of(server);
    Endpoint::from_shared(url.clone())
        .map(|e| {
            e.tcp_nodelay(true)
                .connect_timeout(CONNECT_TIMEOUT)
                .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
                .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        })
        .map_err(|_| {
            anyhow!("bad server address {server:?}; expected host:port or http://host:port")
        })
}

/// What to do about a server that is not there.
const START_ONE: &str =
    "start a server there (sudoku-server --listen ...) or solve in this process with --local";

/// Why a connection failed, said once: the innermost cause.
fn cause_of(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    match cause.downcast_ref::<std::io::Error>() {
        Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".to_string()
        }
        _ => cause.to_string(),
    }
}

fn connect_failure(url: &str, err: &(dyn std::error::Error + 'static)) -> anyhow::Error {
    let cause = cause_of(err);
    if cause == "connection refused" {
        return anyhow!("cannot connect to {url}: connection refused; {START_ONE}");
    }
    anyhow!("cannot connect to {url}: {cause}")
}

/// Connects a channel to `server` (host:port or an http:// URL).
pub async fn connect(server: &str) -> anyhow::Result<Channel> {
    endpoint(server)?
        .connect()
        .await
        .map_err(|e| connect_failure(&url_of(server), &e))
}

/// One channel over `servers`: connected at once when there is one (so a
/// wrong address is said before any work), else balanced by tonic over all
/// of them. Each of several is tried once first: when none answers the
/// run ends at once with why, as for one; a server down at the start is
/// said on stderr and left to the balancer, which takes it in when it
/// comes up.
pub async fn connect_all(servers: &[String]) -> anyhow::Result<Channel> {
    match servers {
        [] => Err(anyhow!("no server given")),
        [one] => connect(one).await,
        many => {
            let endpoints = many
                .iter()
                .map(|s| endpoint(s))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let tried = futures::future::join_all(endpoints.iter().map(Endpoint::connect)).await;
            let down: Vec<String> = many
                .iter()
                .zip(&tried)
                .filter_map(|(s, r)| {
                    r.as_ref()
                        .err()
                        .map(|e| format!("{}: {}", url_of(s), cause_of(e)))
                })
                .collect();
            if down.len() == many.len() {
                let refused = down.iter().all(|d| d.ends_with("connection refused"));
                return Err(anyhow!(
                    "cannot connect to any of the {} servers ({}){}",
                    many.len(),
                    down.join(", "),
                    if refused {
                        format!("; {START_ONE}")
                    } else {
                        String::new()
                    }
                ));
            }
            for d in &down {
                eprintln!("sudoku: cannot connect to {d}; going on with the other servers");
            }
            Ok(Channel::balance_list(endpoints.into_iter()))
        }
    }
}
