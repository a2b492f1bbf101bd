//! The client's TLS: roots, identity, the rustls config of the connector
//! and the verifier tonic's balanced channel shares.

use super::*;

/// The client's TLS, read from the flags' files once.
#[derive(Clone)]
pub(super) struct Tls {
    pub(super) config: Arc<ClientConfig>,
    pub(super) verifier: Arc<WebPkiServerVerifier>,
    /// The PEM of --client-cert and --client-key, for tonic's TLS.
    pub(super) identity: Option<(Vec<u8>, Vec<u8>)>,
    /// --ca-cert, as a refused certificate's advice names it.
    pub(super) ca_cert: Option<PathBuf>,
}

pub(super) fn read(flag: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {flag} {}", path.display()))
}

pub(super) fn certificates(
    flag: &str,
    path: &Path,
    pem: &[u8],
) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("bad PEM in {flag} {}", path.display()))?;
    if certs.is_empty() {
        return Err(anyhow!("no certificate in {flag} {}", path.display()));
    }
    Ok(certs)
}

impl Tls {
    pub(super) fn load(args: &TlsArgs) -> anyhow::Result<Tls> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        match &args.ca_cert {
            Some(path) => {
                let pem = read("--ca-cert", path)?;
                for cert in certificates("--ca-cert", path, &pem)? {
                    roots.add(cert).with_context(|| {
                        format!("bad CA certificate in --ca-cert {}", path.display())
                    })?;
                }
            }
            None => {
                // Certificates the system holds but rustls cannot use are
                // skipped, as a browser would.
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(anyhow!(
                        "found no CA certificates on this system; give the server's CA with --ca-cert FILE"
                    ));
                }
            }
        }
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .context("cannot build the certificate verifier")?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_webpki_verifier(verifier.clone());
        let (mut config, identity) = match (&args.client_cert, &args.client_key) {
            (Some(cert_path), Some(key_path)) => {
                let cert_pem = read("--client-cert", cert_path)?;
                let key_pem = read("--client-key", key_path)?;
                let chain = certificates("--client-cert", cert_path, &cert_pem)?;
                let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
                    anyhow!("no private key in --client-key {}: {e}", key_path.display())
                })?;
                let config = builder.with_client_auth_cert(chain, key).with_context(|| {
                    format!(
                        "--client-key {} does not fit --client-cert {}",
                        key_path.display(),
                        cert_path.display()
                    )
                })?;
                (config, Some((cert_pem, key_pem)))
            }
            _ => (builder.with_no_client_auth(), None),
        };
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            verifier,
            identity,
            ca_cert: args.ca_cert.clone(),
        })
    }

    /// `target`'s endpoint with tonic's TLS on this verifier and identity.
    pub(super) fn tonic_endpoint(&self, target: &Target) -> anyhow::Result<Endpoint> {
        let mut tls = ClientTlsConfig::new();
        if let Some((cert, key)) = &self.identity {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        target
            .endpoint()
            .tls_config_with_verifier(tls, self.verifier.clone())
            .with_context(|| format!("TLS for {}", target.url))
    }
}
