//! The listening socket: binding it with a backlog of our choosing, taking
//! the connections the kernel queued when the server stops listening, and
//! the shutdown signal that starts a drain.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

/// Listens on `addr` with room for `backlog` connections waiting to be
/// accepted, with SO_REUSEADDR as tokio sets it (a restarted server binds
/// at once while the old one's connections are in TIME_WAIT). tokio's own
/// bind fixes the backlog at 128: a burst of connects past it (a fleet of
/// clients reconnecting after a restart) waits for SYN retransmits, a
/// second or more each.
pub(super) fn bind(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(not(windows))]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    socket.set_nonblocking(true)?;
    let listener = TcpListener::from_std(socket.into())?;
    #[cfg(target_os = "linux")]
    if let Some(somaxconn) = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&max| max < backlog)
    {
        tracing::warn!(
            backlog,
            somaxconn,
            "the kernel caps the listen backlog at net.core.somaxconn"
        );
    }
    Ok(listener)
}

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
