//! Why the server could not start: one typed error for everything set up
//! before the first call (sockets, settings, threads, TLS, metrics, traces,
//! reflection), so that callers of the library need no error crate. Each
//! variant's message says what failed and where; its source says why.

use std::error::Error;

/// The cause beneath a [`StartError`].
pub type Cause = Box<dyn Error + Send + Sync + 'static>;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Occurs when a socket (the gRPC listener, the metrics endpoint)
    /// cannot be bound.
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why the bind failed.
        source: std::io::Error,
    },
    /// Occurs when settings contradict each other or are out of range.
    #[error("invalid settings: {0}")]
    Settings(String),
    /// Occurs when the solver threads cannot be started.
    #[error("cannot start the solver threads")]
    Threads(#[source] std::io::Error),
    /// Occurs when a TLS file cannot be read, holds no usable certificate
    /// or key, or the certificate and key do not match.
    #[error("{what}")]
    Tls {
        /// What was being done, naming the file.
        what: String,
        /// Why it failed.
        source: Cause,
    },
    /// Occurs when the metrics recorder cannot be set up.
    #[error("{what}")]
    Metrics {
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: Cause,
    },
    /// Occurs when the trace exporter cannot be built for its endpoint.
    #[error("cannot export traces to {endpoint}")]
    Traces {
        /// The OTLP endpoint asked for.
        endpoint: String,
        /// Why it failed.
        source: Cause,
    },
    /// Occurs when the reflection service cannot read the contract's
    /// descriptor set.
    #[error("cannot build the reflection service")]
    Reflection(#[source] Cause),
}

impl StartError {
    /// A [`StartError::Tls`] for `what` failing with `source`.
    pub(crate) fn tls(what: impl Into<String>, source: impl Into<Cause>) -> StartError {
        StartError::Tls {
            what: what.into(),
            source: source.into(),
        }
    }
}
