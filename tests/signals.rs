//! The server binary as an orchestrator runs it: started with flags, stopped
//! with SIGTERM, exiting 0 after the drain.

mod peers;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use peers::free_port;

#[test]
fn sigterm_drains_and_exits_zero() {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_sudoku-server"))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--log-format",
            "json",
        ])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let healthy = loop {
        let out = Command::new(env!("CARGO_BIN_EXE_sudoku"))
            .args(["health", "--server", &url])
            .output()
            .unwrap();
        if out.status.success() {
            break true;
        }
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(healthy, "the server answered health checks");
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server exits after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut logs = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut logs).unwrap();
    assert!(logs.contains("shutdown requested"), "{logs}");
    assert!(
        logs.lines().all(|l| l.trim_start().starts_with('{')),
        "JSON logs: {logs}"
    );
}
