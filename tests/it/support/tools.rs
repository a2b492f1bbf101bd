//! For the tests that drive other programs: bootstrap a Python virtualenv
//! or npm packages, run a program with a time bound, pick a free port,
//! fetch a page over HTTP/1.1, and skip (or, under CI=true, fail) when a
//! tool is missing.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's target directory: `$CARGO_TARGET_DIR`, else `target/` in the
/// repository. .ci/setup-clients.sh uses the same rule.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                repo().join(dir)
            }
        }
        _ => repo().join("target"),
    }
}

/// True when running in CI, where a missing tool is a failure, not a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Reports why a test cannot run: a skip on a developer's machine (the
/// caller returns), a failure under CI=true. For the tools
/// .ci/setup-clients.sh installs; see [`skip_until`] for the others.
pub fn skip(test: &str, reason: &str) {
    skip_until(test, reason, ".ci/setup-clients.sh");
}

/// [`skip`] for a test whose tools the script `setup` installs, so the
/// message names the script that makes it run.
pub fn skip_until(test: &str, reason: &str, setup: &str) {
    if in_ci() {
        panic!("{test}: cannot run under CI=true: {reason}");
    }
    // Straight to the process's stderr: libtest captures eprintln! of passing
    // tests, and a skip should be seen.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {reason} (run {setup} to install what it needs)"
    );
}

/// What a finished program printed.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Both streams, for assertion messages.
    pub fn both(&self) -> String {
        format!(
            "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to completion with no standard input, killing it past `limit`.
/// Err means it could not be started or timed out.
pub fn run(mut cmd: Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                let stdout =
                    String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
                let stderr =
                    String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
                return Err(format!(
                    "{shown} timed out after {limit:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    Ok(Output {
        success: status.success(),
        code: status.code(),
        stdout,
        stderr,
    })
}

/// Runs `cmd` and requires success; Err carries the reason and its output.
fn run_ok(cmd: Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{cmd:?}");
    let out = run(cmd, limit)?;
    if out.success {
        Ok(out)
    } else {
        Err(format!("{shown} failed: {}", out.both()))
    }
}

/// Serialises bootstraps within one test binary (tests run in parallel).
static BOOTSTRAP: Mutex<()> = Mutex::new(());

/// The Python interpreter that creates the virtualenv: `$SUDOKU_PYTHON`, or
/// `python3`.
fn base_python() -> String {
    std::env::var("SUDOKU_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// The requirements files of the virtualenv: the example client's, and
/// what the test scripts need besides. .ci/setup-clients.sh installs the
/// same files.
pub const PYTHON_REQUIREMENTS: [&str; 2] = [
    "examples/python/requirements.txt",
    "tests/it/scripts/requirements.txt",
];

/// The virtualenv's python, with [`PYTHON_REQUIREMENTS`] installed:
/// `<target>/py-venv`, created on first use and reused while the
/// requirements it was made from are unchanged. Err says why not.
pub fn python_venv() -> Result<PathBuf, String> {
    let _guard = BOOTSTRAP.lock().unwrap_or_else(|e| e.into_inner());
    let venv = target_dir().join("py-venv");
    let python = venv.join("bin").join("python");
    // The stamp is the files one after the other, as setup-clients.sh
    // writes it.
    let mut wanted = String::new();
    for file in PYTHON_REQUIREMENTS {
        let path = repo().join(file);
        wanted += &std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    }
    let stamp = venv.join(".sudoku-requirements");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&wanted) {
        return Ok(python);
    }
    if !python.exists() {
        let mut cmd = Command::new(base_python());
        cmd.args(["-m", "venv"]).arg(&venv);
        run_ok(cmd, Duration::from_secs(120))
            .map_err(|e| format!("cannot create a virtualenv (python3 with venv needed): {e}"))?;
    }
    let mut cmd = Command::new(&python);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    for file in PYTHON_REQUIREMENTS {
        cmd.arg("-r").arg(repo().join(file));
    }
    run_ok(cmd, Duration::from_secs(600)).map_err(|e| format!("pip install failed: {e}"))?;
    std::fs::write(&stamp, &wanted).map_err(|e| format!("cannot write the stamp: {e}"))?;
    Ok(python)
}

/// Installs `dir`'s npm packages from its package-lock.json (`npm ci`) into
/// `dir/node_modules` unless the lock file is unchanged since the last time.
pub fn npm_ci(dir: &Path) -> Result<(), String> {
    let _guard = BOOTSTRAP.lock().unwrap_or_else(|e| e.into_inner());
    let lock = std::fs::read_to_string(dir.join("package-lock.json"))
        .map_err(|e| format!("no package-lock.json in {}: {e}", dir.display()))?;
    let stamp = dir.join("node_modules").join(".sudoku-lock");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(&lock) {
        return Ok(());
    }
    let mut cmd = Command::new("npm");
    cmd.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir);
    run_ok(cmd, Duration::from_secs(600)).map_err(|e| format!("npm ci failed: {e}"))?;
    std::fs::write(&stamp, &lock).map_err(|e| format!("cannot write the stamp: {e}"))?;
    Ok(())
}

/// True when `program --version` runs.
pub fn have(program: &str) -> bool {
    let mut cmd = Command::new(program);
    cmd.arg("--version");
    run(cmd, Duration::from_secs(30)).is_ok_and(|o| o.success)
}

/// A port free on 127.0.0.1 a moment ago, for a program that must be told
/// its port before it starts (and cannot report an ephemeral one). Another
/// process could take it in between; on a test machine that is rare enough.
pub fn free_port() -> u16 {
    free_ports(1)[0]
}

/// `n` different free ports, as `free_port`: every listener is held until
/// all are bound, so the system cannot hand out one port twice.
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("a bound address").port())
        .collect()
}

/// The body of `GET path` from `addr` (HTTP/1.1, `Connection: close`, 5 s
/// timeouts): enough for a Prometheus endpoint without an HTTP client crate.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    s.read_to_string(&mut response)?;
    match response.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.1 200") => Ok(body.to_string()),
        _ => Err(std::io::Error::other(format!(
            "GET {path} from {addr}: {response}"
        ))),
    }
}

/// Reads one line from `reader` (a child's stdout) on a thread of its own,
/// and fails the test if none comes within `limit`, where a plain
/// `read_line` would hang the suite. Gives the reader back.
pub fn read_line_within<R>(mut reader: R, limit: Duration) -> (String, R)
where
    R: std::io::BufRead + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = reader.read_line(&mut line);
        let _ = tx.send((read, line, reader));
    });
    match rx.recv_timeout(limit) {
        Ok((Ok(_), line, reader)) => (line, reader),
        Ok((Err(e), ..)) => panic!("reading a line: {e}"),
        Err(_) => panic!("no line within {limit:?}"),
    }
}

/// The value of the Prometheus sample `name` (with labels, as printed).
pub fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// The Prometheus text a server's metrics endpoint at `addr` serves.
pub async fn scrape(addr: SocketAddr) -> String {
    tokio::task::spawn_blocking(move || http_get(addr, "/metrics"))
        .await
        .unwrap()
        .unwrap()
}
