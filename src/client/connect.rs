//! Connecting to a server: one HTTP/2 channel per address.

use anyhow::Context;
use tonic::transport::{Channel, Endpoint};

/// Connects a channel to `server` (an http:// URL).
pub async fn connect(server: &str) -> anyhow::Result<Channel> {
    Endpoint::from_shared(server.to_string())
        .with_context(|| format!("bad server address {server:?}"))?
        .tcp_nodelay(true)
        .connect()
        .await
        .with_context(|| format!("cannot connect to {server}"))
}
