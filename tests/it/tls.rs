//! TLS and mutual TLS with throw-away certificates: a valid client
//! certificate is accepted; none, or one from another CA, is refused; a
//! plaintext client on the TLS port (and the reverse) fails cleanly and the
//! server stays up. The `sudoku` command against the same servers: every
//! command over TLS and mutual TLS, and each refusal (wrong CA, no client
//! certificate, an expired server certificate, the wrong scheme) one
//! sentence and exit code 2.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::solve_request;
use crate::support::tools::Output;
use crate::support::{CLASSIC, CLASSIC_SOLVED, TestServer, data_set};
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
    leaf_with(ca, names, |_| {})
}

/// [`leaf`] after `tweak` adjusts its parameters.
fn leaf_with(
    ca: &Ca,
    names: &[&str],
    tweak: impl FnOnce(&mut CertificateParams),
) -> (String, String) {
    let mut params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    tweak(&mut params);
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
        .solve(solve_request(CLASSIC))
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

/// How long one `sudoku` run may take before the test calls it hung: a
/// bound on a regression, not a speed.
const CLI_LIMIT: Duration = Duration::from_secs(60);

/// Runs the `sudoku` command with `args` (and `env`) off the test's
/// runtime, which serves the servers meanwhile.
async fn sudoku(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(crate::support::sudoku_cli());
    cmd.args(args);
    for var in [
        "SUDOKU_SERVER",
        "SUDOKU_CA_CERT",
        "SUDOKU_CLIENT_CERT",
        "SUDOKU_CLIENT_KEY",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || crate::support::run(cmd, CLI_LIMIT))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn stderr(out: &Output) -> &str {
    &out.stderr
}

/// Exit code 2 and `said` on stderr, with none of the words of a server
/// lost mid-run (a refusal is said once, not retried).
fn refused(out: &Output, said: &str) {
    let err = stderr(out);
    assert_eq!(out.code, Some(2), "{said}: {err}");
    assert!(err.contains(said), "expected {said:?} in: {err}");
    assert!(!err.contains("lost the server"), "{err}");
    assert_eq!(err.lines().count(), 1, "one sentence: {err}");
}

/// A few puzzles in a file, and their count.
fn puzzles(dir: &Path) -> (PathBuf, usize) {
    let mut set = data_set("puzzles2_17_clue");
    set.truncate(3);
    set.push(CLASSIC.to_string());
    let text: String = set.iter().map(|p| format!("{p}\n")).collect();
    (write(dir, "puzzles.txt", &text), set.len())
}

/// Asserts a `solve` run answered every puzzle of `count`, the last one
/// the classic.
fn solved(out: &Output, count: usize) {
    assert!(out.success, "{}", stderr(out));
    let stdout = &out.stdout;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), count, "{stdout}");
    assert!(lines.iter().all(|l| l.len() == 81 && !l.contains('.')));
    assert_eq!(lines[count - 1], CLASSIC_SOLVED);
}

#[tokio::test]
async fn the_cli_over_tls_every_command_and_each_refusal() {
    let dir = tmpdir("cli-tls");
    let server_ca = ca("server ca");
    let (cert, key) = leaf(&server_ca, &["localhost", "127.0.0.1"]);
    let cert_path = write(&dir, "server.pem", &cert);
    let key_path = write(&dir, "server.key", &key);
    let ca_path = write(&dir, "ca.pem", &server_ca.cert_pem);
    let other_path = write(&dir, "other.pem", &ca("someone else").cert_pem);
    let (file, count) = puzzles(&dir);
    let file = file.to_str().unwrap();
    let tls = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert_path);
            c.tls_key = Some(key_path);
        },
        |s| s,
    )
    .await;
    let https = format!("https://{}", tls.addr);
    let by_name = format!("https://localhost:{}", tls.addr.port());
    let ca = ca_path.to_str().unwrap();

    // Solve, by address and by name, on one stream and on several.
    for server in [&https, &by_name] {
        let out = sudoku(&["solve", "--server", server, "--ca-cert", ca, file], &[]).await;
        solved(&out, count);
    }
    let out = sudoku(
        &[
            "solve",
            "--server",
            &https,
            "--ca-cert",
            ca,
            "--streams",
            "3",
            "--batch",
            "2",
            file,
        ],
        &[],
    )
    .await;
    solved(&out, count);
    // Several servers, the CA from the environment.
    let two = format!("{https},{by_name}");
    let out = sudoku(
        &["solve", "--server", &two, file],
        &[("SUDOKU_CA_CERT", &ca_path)],
    )
    .await;
    solved(&out, count);
    // Grids of another size, on the same SolveBatch stream (cells and box).
    let four = write(
        &dir,
        "four.txt",
        "1.3.\n..2.\n.2..\n3.1.\n\n12..\n..12\n2..1\n.1..\n",
    );
    let out = sudoku(
        &[
            "solve",
            "--server",
            &https,
            "--ca-cert",
            ca,
            four.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert_ne!(out.code, Some(2), "{}", stderr(&out));

    // Every other command that calls a server.
    let out = sudoku(&["health", "--server", &https, "--ca-cert", ca], &[]).await;
    assert!(out.success, "{}", stderr(&out));
    assert_eq!(out.stdout.trim(), "SERVING");
    for command in ["validate", "hint", "rate"] {
        let out = sudoku(&[command, "--server", &https, "--ca-cert", ca, file], &[]).await;
        assert!(out.success, "{command}: {}", stderr(&out));
        assert_eq!(out.stdout.lines().count(), count);
    }
    let out = sudoku(
        &[
            "generate",
            "--server",
            &https,
            "--ca-cert",
            ca,
            "--seed",
            "7",
            "-n",
            "2",
        ],
        &[],
    )
    .await;
    assert!(out.success, "{}", stderr(&out));
    assert_eq!(out.stdout.lines().count(), 2);
    let out = sudoku(
        &[
            "bench",
            "--server",
            &https,
            "--ca-cert",
            ca,
            "--mode",
            "unary",
            "--requests",
            "20",
            "--connections",
            "2",
            "--concurrency",
            "4",
            "--verify",
            file,
        ],
        &[],
    )
    .await;
    assert!(out.success, "{}", stderr(&out));
    assert!(out.stdout.contains("errors: none"));

    // The wrong CA: the server is not trusted.
    let out = sudoku(
        &[
            "solve",
            "--server",
            &https,
            "--ca-cert",
            other_path.to_str().unwrap(),
            file,
        ],
        &[],
    )
    .await;
    refused(&out, "is not signed by the CA in --ca-cert");
    // http:// to the TLS port, from each kind of command; and among several servers.
    let http = format!("http://{}", tls.addr);
    let speaks = format!(
        "the server at {} speaks TLS: use https://{}",
        tls.addr, tls.addr
    );
    for args in [
        vec!["solve", "--server", &http, file],
        vec!["solve", "--server", &http, "--streams", "2", file],
        vec!["health", "--server", &http],
        vec!["rate", "--server", &http, file],
        vec!["generate", "--server", &http],
        vec![
            "bench",
            "--server",
            &http,
            "--mode",
            "health",
            "--requests",
            "5",
        ],
    ] {
        refused(&sudoku(&args, &[]).await, &speaks);
    }
    // https:// to a plaintext port.
    let plain = TestServer::start().await;
    let no_tls = format!(
        "the server at {} does not speak TLS: use http://{}",
        plain.addr, plain.addr
    );
    let plain_https = format!("https://{}", plain.addr);
    for args in [
        vec!["solve", "--server", &plain_https, "--ca-cert", ca, file],
        vec!["health", "--server", &plain_https, "--ca-cert", ca],
    ] {
        refused(&sudoku(&args, &[]).await, &no_tls);
    }
    let mixed = format!("{https},{plain_https}");
    refused(
        &sudoku(&["solve", "--server", &mixed, "--ca-cert", ca, file], &[]).await,
        &no_tls,
    );
    // The servers are still up.
    let out = sudoku(&["health", "--server", &https, "--ca-cert", ca], &[]).await;
    assert!(out.success, "{}", stderr(&out));
    assert!(solve_over(plain.channel().await).await.is_ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_cli_over_mutual_tls() {
    let dir = tmpdir("cli-mtls");
    let server_ca = ca("server ca");
    let client_ca = ca("client ca");
    let (cert, key) = leaf(&server_ca, &["localhost", "127.0.0.1"]);
    let cert_path = write(&dir, "server.pem", &cert);
    let key_path = write(&dir, "server.key", &key);
    let client_ca_path = write(&dir, "client-ca.pem", &client_ca.cert_pem);
    let ca_path = write(&dir, "ca.pem", &server_ca.cert_pem);
    let (client_cert, client_key) = leaf(&client_ca, &["client"]);
    let client_cert = write(&dir, "client.pem", &client_cert);
    let client_key = write(&dir, "client.key", &client_key);
    let (intruder_cert, intruder_key) = leaf(&ca("someone else"), &["intruder"]);
    let intruder_cert = write(&dir, "intruder.pem", &intruder_cert);
    let intruder_key = write(&dir, "intruder.key", &intruder_key);
    let (file, count) = puzzles(&dir);
    let file = file.to_str().unwrap();
    let server = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert_path);
            c.tls_key = Some(key_path);
            c.tls_client_ca = Some(client_ca_path);
        },
        |s| s,
    )
    .await;
    let https = format!("https://{}", server.addr);
    let ca = ca_path.to_str().unwrap();
    let (cert, key) = (client_cert.to_str().unwrap(), client_key.to_str().unwrap());

    // The trusted client certificate: flags, or the environment.
    let out = sudoku(
        &[
            "solve",
            "--server",
            &https,
            "--ca-cert",
            ca,
            "--client-cert",
            cert,
            "--client-key",
            key,
            file,
        ],
        &[],
    )
    .await;
    solved(&out, count);
    let env = [
        ("SUDOKU_CA_CERT", ca_path.as_path()),
        ("SUDOKU_CLIENT_CERT", client_cert.as_path()),
        ("SUDOKU_CLIENT_KEY", client_key.as_path()),
    ];
    let out = sudoku(&["health", "--server", &https], &env).await;
    assert!(out.success, "{}", stderr(&out));
    let two = format!("{https},{https}");
    let out = sudoku(&["solve", "--server", &two, file], &env).await;
    solved(&out, count);

    // No client certificate; one from a CA the server does not trust. In
    // TLS 1.3 the server says so after the client's side of the
    // handshake: still one sentence, before any call.
    let wanted = format!(
        "the server at {} asks for a client certificate",
        server.addr
    );
    for args in [
        vec!["solve", "--server", &https, "--ca-cert", ca, file],
        vec!["solve", "--server", &two, "--ca-cert", ca, file],
        vec!["health", "--server", &https, "--ca-cert", ca],
    ] {
        refused(&sudoku(&args, &[]).await, &wanted);
    }
    let (cert, key) = (
        intruder_cert.to_str().unwrap(),
        intruder_key.to_str().unwrap(),
    );
    let out = sudoku(
        &[
            "solve",
            "--server",
            &https,
            "--ca-cert",
            ca,
            "--client-cert",
            cert,
            "--client-key",
            key,
            file,
        ],
        &[],
    )
    .await;
    refused(&out, "refused the client certificate");
    // A key without its certificate is a usage error.
    let out = sudoku(&["health", "--server", &https, "--client-key", key], &[]).await;
    assert_eq!(out.code, Some(2));
    assert!(stderr(&out).contains("--client-cert"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_cli_says_an_expired_server_certificate_expired() {
    let dir = tmpdir("cli-expired");
    let server_ca = ca("server ca");
    let (cert, key) = leaf_with(&server_ca, &["localhost", "127.0.0.1"], |p| {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    });
    let cert_path = write(&dir, "server.pem", &cert);
    let key_path = write(&dir, "server.key", &key);
    let ca_path = write(&dir, "ca.pem", &server_ca.cert_pem);
    let server = TestServer::start_with(
        |c| {
            c.tls_cert = Some(cert_path);
            c.tls_key = Some(key_path);
        },
        |s| s,
    )
    .await;
    let https = format!("https://{}", server.addr);
    let (file, _) = puzzles(&dir);
    for args in [
        vec!["solve", "--server", &https, file.to_str().unwrap()],
        vec!["health", "--server", &https],
    ] {
        let out = sudoku(&args, &[("SUDOKU_CA_CERT", &ca_path)]).await;
        refused(
            &out,
            &format!(
                "the certificate of the server at {} expired on 2021-01-01",
                server.addr
            ),
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
