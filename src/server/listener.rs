//! The listening socket: taking the connections the kernel queued when the
//! server stops listening, and the shutdown signal that starts a drain.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

/// Closes `listener`, returning the connections the kernel had already
/// accepted for it but the server had not taken yet.
pub(super) fn take_backlog(listener: TcpListener) -> Vec<(TcpStream, SocketAddr)> {
    let mut taken = Vec::new();
    let listener = match listener.into_std() {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "could not take the listen backlog");
            return taken;
        }
    };
    // The socket is still non-blocking: accept until the backlog is empty.
    loop {
        match listener.accept() {
            Ok((stream, peer)) => {
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => taken.push((stream, peer)),
                    Err(e) => tracing::warn!(%peer, error = %e, "dropping a backlog connection"),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return taken,
        }
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
