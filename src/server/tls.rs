//! TLS: an acceptor from PEM files (ring only, ALPN h2), with client
//! certificates checked when a client CA is given (mutual TLS).
//!
//! The handshake is bounded by `--handshake-timeout-ms` from accept,
//! together with the HTTP/2 preface that follows it (see `deadlines.rs`).

use std::sync::Arc;

use crate::StartError;

/// A TLS acceptor for `cert` and `key` (PEM), asking for client
/// certificates signed by `client_ca` when given. Uses the ring provider
/// only, and offers HTTP/2 alone through ALPN.
pub(super) fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
    client_ca: Option<&std::path::Path>,
) -> Result<tokio_rustls::TlsAcceptor, StartError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls;

    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            StartError::tls(
                format!("cannot read certificates from {}", cert.display()),
                e,
            )
        })?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        StartError::tls(
            format!("cannot read a private key from {}", key.display()),
            e,
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| StartError::tls("TLS protocol versions", e))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for ca in CertificateDer::pem_file_iter(path).map_err(|e| {
                StartError::tls(format!("cannot read client CA from {}", path.display()), e)
            })? {
                roots
                    .add(ca.map_err(|e| {
                        StartError::tls(format!("bad certificate in {}", path.display()), e)
                    })?)
                    .map_err(|e| {
                        StartError::tls(format!("bad client CA in {}", path.display()), e)
                    })?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(|e| StartError::tls("client certificate verifier", e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut tls = builder
        .with_single_cert(certs, key)
        .map_err(|e| StartError::tls("the TLS certificate and key do not match", e))?;
    // h2 first: gRPC needs it; HTTP/1.1 for gRPC-Web clients without it.
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(tls)))
}
