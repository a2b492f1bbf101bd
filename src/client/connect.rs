//! Connecting to servers: one HTTP/2 channel per address, or one channel
//! balanced over several.

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

fn endpoint(server: &str) -> anyhow::Result<Endpoint> {
    let url = url_of(server);
    Endpoint::from_shared(url.clone())
        .map(|e| e.tcp_nodelay(true))
        .map_err(|_| {
            anyhow!("bad server address {server:?}; expected host:port or http://host:port")
        })
}

/// Why a connection failed, said once: the innermost cause, and what to
/// do about a refused connection.
fn connect_failure(url: &str, err: &(dyn std::error::Error + 'static)) -> anyhow::Error {
    let mut cause: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if let Some(io) = cause.downcast_ref::<std::io::Error>()
        && io.kind() == std::io::ErrorKind::ConnectionRefused
    {
        return anyhow!(
            "cannot connect to {url}: connection refused; start a server there \
             (sudoku-server --listen ...) or solve in this process with --local"
        );
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
/// of them, each connected as the balancer needs it.
pub async fn connect_all(servers: &[String]) -> anyhow::Result<Channel> {
    match servers {
        [] => Err(anyhow!("no server given")),
        [one] => connect(one).await,
        many => {
            let endpoints = many
                .iter()
                .map(|s| endpoint(s))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(Channel::balance_list(endpoints.into_iter()))
        }
    }
}
