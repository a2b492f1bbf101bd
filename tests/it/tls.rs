//! TLS and mutual TLS with throw-away certificates: a valid client
//! certificate is accepted; none, or one from another CA, is refused; a
//! plaintext client on the TLS port (and the reverse) fails cleanly and the
//! server stays up.

use std::path::PathBuf;

use crate::support::{CLASSIC, TestServer};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use sudoku_grpc::pb::{self, sudoku_service_client::SudokuServiceClient};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

struct Ca {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        cert_pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A leaf certificate for `names`, signed by `ca`: (cert PEM, key PEM).
fn leaf(ca: &Ca, names: &[&str]) -> (String, String) {
    let params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sudoku-tls-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn solve_over(channel: Channel) -> Result<pb::SolveResponse, tonic::Status> {
    SudokuServiceClient::new(channel)
        .solve(pb::SolveRequest {
            puzzle: Some(pb::Grid {
                text: CLASSIC.into(),
                cells: vec![],
                ..Default::default()
            }),
            options: None,
        })
        .await
        .map(|r| r.into_inner())
}

async fn tls_channel(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    identity: Option<(String, String)>,
) -> Result<Channel, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca_pem))
        .domain_name("localhost");
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    Channel::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(tls)?
        .connect()
        .await
}

#[tokio::test]
async fn mutual_tls_accepts_valid_clients_and_refuses_others() {
    let dir = tmpdir("mtls");
    let server_ca = ca("server ca");
    let client_ca = ca("client ca");
    let other_ca = ca("someone else");
    let (cert, key) = leaf(&server_ca, &["localhost", "127.0.0.1"]);
    let cert_path = write(&dir, "server.pem", &cert);
    let key_path = write(&dir, "server.key", &key);
    let client_ca_path = write(&dir, "client-ca.pem", &client_ca.cert_pem);
    let server = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert_path);
            c.tls_key = Some(key_path);
            c.tls_client_ca = Some(client_ca_path);
        },
        |s| s,
    )
    .await;

    // A client certificate from the trusted CA: accepted.
    let good = tls_channel(
        server.addr,
        &server_ca.cert_pem,
        Some(leaf(&client_ca, &["client"])),
    )
    .await
    .expect("a valid client certificate connects");
    let r = solve_over(good).await.expect("and solves");
    assert_eq!(r.solution.unwrap().outcome(), pb::Outcome::Solved);

    // No client certificate, or one from another CA: refused.
    for identity in [None, Some(leaf(&other_ca, &["intruder"]))] {
        let refused = match tls_channel(server.addr, &server_ca.cert_pem, identity).await {
            Err(_) => true,
            Ok(ch) => solve_over(ch).await.is_err(),
        };
        assert!(refused, "a client without a trusted certificate is refused");
    }

    // Plaintext to the TLS port fails cleanly; the server stays up.
    let plain = Channel::from_shared(format!("http://{}", server.addr)).unwrap();
    let plain_failed = match plain.connect().await {
        Err(_) => true,
        Ok(ch) => solve_over(ch).await.is_err(),
    };
    assert!(plain_failed);
    let again = tls_channel(
        server.addr,
        &server_ca.cert_pem,
        Some(leaf(&client_ca, &["client"])),
    )
    .await
    .unwrap();
    assert!(solve_over(again).await.is_ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn server_only_tls_and_a_tls_client_on_the_plaintext_port() {
    let dir = tmpdir("tls");
    let server_ca = ca("server ca");
    let (cert, key) = leaf(&server_ca, &["localhost"]);
    let cert_path = write(&dir, "server.pem", &cert);
    let key_path = write(&dir, "server.key", &key);
    let server = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert_path);
            c.tls_key = Some(key_path);
        },
        |s| s,
    )
    .await;
    let ch = tls_channel(server.addr, &server_ca.cert_pem, None)
        .await
        .unwrap();
    assert!(solve_over(ch).await.is_ok());

    // The wrong CA on the client side: the server is not trusted.
    let other = ca("other");
    let wrong = match tls_channel(server.addr, &other.cert_pem, None).await {
        Err(_) => true,
        Ok(ch) => solve_over(ch).await.is_err(),
    };
    assert!(wrong);

    // A TLS client against a plaintext server fails; the server stays up.
    let plain = TestServer::start().await;
    let failed = match tls_channel(plain.addr, &server_ca.cert_pem, None).await {
        Err(_) => true,
        Ok(ch) => solve_over(ch).await.is_err(),
    };
    assert!(failed);
    assert!(solve_over(plain.channel().await).await.is_ok());
    let _ = std::fs::remove_dir_all(dir);
}
