//! The service scales out because it keeps no state between calls: three
//! `sudoku-server` processes behind nginx (`grpc_pass` to a round-robin
//! upstream, HTTP/2 on loopback) solve the 17-clue set for the `sudoku`
//! command line (SolveBatch over several streams) and for the Python client
//! (examples/python/batch_file.py), every solution checked against its
//! puzzle, and each backend's /metrics shows it did part of the work.
//!
//! Then one backend is killed with SIGKILL while the Python client runs the
//! set through unary Solve calls: nginx passes a call it has not yet sent
//! on to another backend itself, and answers a call the dead one had
//! received with a trailers-only UNAVAILABLE, which the channel's retry
//! policy sends again. Then a second backend is stopped with SIGTERM while
//! the client streams the set through SolveBatch: it drains, its streams
//! end with UNAVAILABLE, and the client re-sends what they left unanswered.
//! Both times the output must still hold every puzzle exactly once, solved,
//! and the backends left must have taken over.
//!
//! Needs nginx (Debian's `nginx` package) and the Python virtualenv; skips
//! without them, except under CI=true, where it fails.
//! .ci/setup-clients.sh installs both.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::{free_ports, http_get, python_venv, repo, run, skip, target_dir};
use sudoku_core::puzzle::Grid;

const TEST: &str = "three_backends_behind_nginx_share_the_work_and_survive_a_kill";
const DATA_SET: &str = "puzzles2_17_clue";

/// A child process that is stopped when dropped, so a failing test leaves
/// nothing running. Its stdout and stderr go to files in the run directory.
struct Proc {
    name: String,
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Proc {
    fn start(name: &str, mut cmd: Command, dir: &Path) -> Proc {
        let stdout = dir.join(format!("{name}.stdout"));
        let stderr = dir.join(format!("{name}.stderr"));
        let child = cmd
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).expect("create stdout file"))
            .stderr(File::create(&stderr).expect("create stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({cmd:?}): {e}"));
        Proc {
            name: name.to_string(),
            child,
            stdout,
            stderr,
        }
    }

    /// Sends `signal` (a `kill -s` name, such as TERM or KILL); false when
    /// it could not be sent.
    fn signal(&self, signal: &str) -> bool {
        Command::new("kill")
            .args(["-s", signal, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }

    fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the process to exit; None when it is still running at `limit`.
    fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What it printed so far, for assertion messages.
    fn logs(&self) -> String {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!(
            "--- {} stdout ---\n{}\n--- {} stderr ---\n{}",
            self.name,
            read(&self.stdout),
            self.name,
            read(&self.stderr)
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // TERM first: nginx's master stops its workers only when asked (a
        // KILLed master leaves them serving), and a server drains quickly.
        if self.running() && (!self.signal("TERM") || self.wait(Duration::from_secs(5)).is_none()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One `sudoku-server` process with its gRPC and metrics addresses.
struct Backend {
    grpc: SocketAddr,
    metrics: SocketAddr,
    proc: Proc,
}

impl Backend {
    fn start(index: usize, [grpc, metrics]: [u16; 2], dir: &Path) -> Backend {
        let grpc: SocketAddr = ([127, 0, 0, 1], grpc).into();
        let metrics: SocketAddr = ([127, 0, 0, 1], metrics).into();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sudoku-server"));
        cmd.arg("--listen")
            .arg(grpc.to_string())
            .arg("--metrics-listen")
            .arg(metrics.to_string())
            // Three servers share the machine's cores.
            .args(["--workers", "1", "--drain-timeout-ms", "2000"]);
        let proc = Proc::start(&format!("backend-{index}"), cmd, dir);
        Backend {
            grpc,
            metrics,
            proc,
        }
    }

    /// `sudoku_puzzles_total{outcome="solved"}`; None while the metrics
    /// endpoint does not answer.
    fn solved(&self) -> Option<u64> {
        let text = http_get(self.metrics, "/metrics").ok()?;
        Some(
            text.lines()
                .find_map(|l| l.strip_prefix(r#"sudoku_puzzles_total{outcome="solved"} "#))
                .map_or(0, |v| v.trim().parse::<f64>().unwrap_or(0.0) as u64),
        )
    }
}

/// The nginx binary and whether it wants `http2 on;` (1.25.1 and later)
/// rather than `listen ... http2`; None when there is none that runs.
fn find_nginx() -> Option<(PathBuf, bool)> {
    let candidates = std::env::var_os("SUDOKU_NGINX")
        .map(PathBuf::from)
        .into_iter()
        // Debian installs it in /usr/sbin, which a non-root PATH may lack.
        .chain(["nginx".into(), "/usr/sbin/nginx".into()]);
    for nginx in candidates {
        let mut cmd = Command::new(&nginx);
        cmd.arg("-v");
        let Ok(out) = run(cmd, Duration::from_secs(10)) else {
            continue;
        };
        // "nginx version: nginx/1.22.1", on stderr.
        let version = out.stderr.split("nginx/").nth(1).unwrap_or_default();
        let mut parts = version.trim().split('.').map(|p| p.parse::<u32>().ok());
        if let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
            (parts.next(), parts.next(), parts.next())
        {
            return Some((nginx, (major, minor, patch) >= (1, 25, 1)));
        }
    }
    None
}

/// nginx's configuration: every path inside `dir`, so it runs without root
/// and leaves the system's nginx alone.
fn nginx_conf(dir: &Path, port: u16, backends: &[Backend], http2_directive: bool) -> String {
    let d = dir.display();
    let (listen, http2) = if http2_directive {
        (format!("127.0.0.1:{port}"), "http2 on;")
    } else {
        (format!("127.0.0.1:{port} http2"), "")
    };
    let mut servers = String::new();
    for b in backends {
        // One failure takes a backend out of the rotation for 2 s; then
        // nginx tries it again with one request.
        let _ = writeln!(
            servers,
            "        server {} max_fails=1 fail_timeout=2s;",
            b.grpc
        );
    }
    format!(
        r#"daemon off;
master_process on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log notice;
events {{ worker_connections 1024; }}
http {{
    log_format grpc '$status $upstream_addr $upstream_status $request_time';
    access_log {d}/access.log grpc;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;

    upstream sudoku {{
        # Round robin, the default: each call (HTTP/2 stream) goes to the
        # next backend.
{servers}        # Reuse upstream connections instead of one per call.
        keepalive 32;
    }}

    server {{
        listen {listen};
        {http2}
        # A SolveBatch stream is one request body of any length; the
        # servers limit each message (--max-message-bytes).
        client_max_body_size 0;
        # One client connection carries every call; nginx's default would
        # close it after 1,000.
        keepalive_requests 1000000;

        location / {{
            grpc_pass grpc://sudoku;
            # A call whose connection fails before nginx sent it (refused,
            # or a kept-alive connection found dead) goes to the next
            # backend. One already sent is not resent (a POST, and the
            # body is not buffered): it gets the error below.
            grpc_next_upstream error timeout;
            grpc_connect_timeout 2s;
            # Longest silence between two reads or writes of one call.
            grpc_read_timeout 60s;
            grpc_send_timeout 60s;
            # nginx's own 502 page is an HTML body: gRPC clients map it to
            # UNAVAILABLE, but grpcio may take its headers as the answer
            # and not retry. A trailers-only UNAVAILABLE is retried.
            error_page 502 503 504 = @unavailable;
        }}

        location @unavailable {{
            default_type application/grpc;
            add_header grpc-status 14 always;
            add_header grpc-message "no backend answered" always;
            return 204;
        }}
    }}
}}
"#
    )
}

/// Polls `ready` every 100 ms until it is true; false after `limit`.
fn eventually(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// True when `url` answers a health check with SERVING.
fn healthy(url: &str) -> bool {
    let mut cmd = Command::new(crate::support::sudoku_cli());
    cmd.args(["health", "--server", url]);
    run(cmd, Duration::from_secs(10)).is_ok_and(|o| o.success)
}

/// Each backend's solved count. The servers publish their counters twice a
/// second, so this waits until the counts add up to `total` (or 5 s pass).
fn solved_counts(backends: &[Backend], total: u64) -> Vec<u64> {
    let mut counts = Vec::new();
    eventually(Duration::from_secs(5), || {
        counts = backends.iter().map(|b| b.solved().unwrap_or(0)).collect();
        counts.iter().sum::<u64>() >= total
    });
    counts
}

/// Asserts `solution` is a full valid grid that keeps `puzzle`'s givens.
fn check_solution(what: &str, puzzle: &str, solution: &str) {
    let p = Grid::from_text(puzzle).unwrap_or_else(|e| panic!("{what}: puzzle {puzzle}: {e}"));
    let s = Grid::from_text(solution)
        .unwrap_or_else(|e| panic!("{what}: answer {solution:?} for {puzzle}: {e}"));
    assert!(
        s.is_valid_solution() && p.is_kept_by(&s),
        "{what}: {solution} does not solve {puzzle}"
    );
}

/// Checks batch_file.py's `ID SOLUTION` lines: every puzzle exactly once,
/// each solved.
fn check_python_output(what: &str, path: &Path, puzzles: &[String]) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut seen = vec![0u32; puzzles.len()];
    for line in text.lines() {
        let (id, solution) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{what}: bad line {line:?}"));
        let id: usize = id
            .parse()
            .unwrap_or_else(|_| panic!("{what}: bad id {line:?}"));
        let puzzle = puzzles
            .get(id)
            .unwrap_or_else(|| panic!("{what}: unknown id {id}"));
        seen[id] += 1;
        check_solution(&format!("{what}, id {id}"), puzzle, solution);
    }
    let missing: Vec<usize> = (0..seen.len()).filter(|&i| seen[i] == 0).collect();
    let repeated: Vec<usize> = (0..seen.len()).filter(|&i| seen[i] > 1).collect();
    assert!(
        missing.is_empty() && repeated.is_empty(),
        "{what}: {} ids missing (first {:?}), {} repeated (first {:?})",
        missing.len(),
        missing.first(),
        repeated.len(),
        repeated.first()
    );
}

/// batch_file.py over the data set through `target`, writing to `output`.
fn python_batch_file(python: &Path, target: &str, output: &Path, rpc_args: &[&str]) -> Command {
    let mut cmd = Command::new(python);
    cmd.arg("batch_file.py")
        .arg(repo().join("data").join(DATA_SET))
        .args(["--target", target])
        .args(rpc_args)
        .arg("--output")
        .arg(output)
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(repo().join("examples/python"));
    cmd
}

/// From line `from` of nginx's access log: how many calls got each HTTP
/// status, and how many nginx passed to another backend after the first
/// failed (`$upstream_addr` then lists both).
fn access_log(path: &Path, from: usize) -> (BTreeMap<String, usize>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut statuses = BTreeMap::new();
    let mut rerouted = 0;
    for line in text.lines().skip(from) {
        let status = line.split(' ').next().unwrap_or_default().to_string();
        *statuses.entry(status).or_insert(0) += 1;
        rerouted += usize::from(line.contains(", "));
    }
    (statuses, rerouted)
}

/// What the fault phases share.
struct Scene<'a> {
    dir: &'a Path,
    python: &'a Path,
    /// nginx's address.
    front: &'a str,
    puzzles: &'a [String],
}

impl Scene<'_> {
    /// Runs batch_file.py with `args` over the whole set through nginx,
    /// sends `signal` to backend `victim` once it has solved 2,000 puzzles
    /// of the run, and checks that the output still has every puzzle once,
    /// solved, and that the backends left took over.
    fn stop_one_mid_run(
        &self,
        backends: &mut [Backend],
        victim: usize,
        signal: &str,
        args: &[&str],
    ) {
        let what = format!(
            "batch_file.py {} (SIG{signal} backend {victim})",
            args.join(" ")
        );
        let log = self.dir.join("access.log");
        let log_from = std::fs::read_to_string(&log).map_or(0, |t| t.lines().count());
        let start: Vec<u64> = backends.iter().map(|b| b.solved().unwrap_or(0)).collect();
        let phase = Instant::now();
        let output = self.dir.join(format!("python-sig{signal}.out"));
        let cmd = python_batch_file(self.python, self.front, &output, args);
        let mut client = Proc::start(&format!("python-sig{signal}"), cmd, self.dir);
        let mut at_stop = start.clone();
        let reached = eventually(Duration::from_secs(120), || {
            at_stop = backends.iter().map(|b| b.solved().unwrap_or(0)).collect();
            at_stop[victim] >= start[victim] + 2_000 || !client.running()
        });
        assert!(
            reached && client.running(),
            "{what}: the client should still be running when backend {victim} has \
             solved 2,000 (solved {at_stop:?} from {start:?})\n{}",
            client.logs()
        );
        assert!(
            backends[victim].proc.signal(signal),
            "kill -s {signal} backend {victim}"
        );
        let stopped_after = phase.elapsed();
        let exit = backends[victim].proc.wait(Duration::from_secs(10));
        assert!(exit.is_some(), "{what}: backend {victim} exits");
        let status = client.wait(Duration::from_secs(240));
        let elapsed = phase.elapsed();
        assert!(
            status.is_some_and(|s| s.success()),
            "{what}: {status:?}\n{}",
            client.logs()
        );
        check_python_output(&what, &output, self.puzzles);

        // The servers publish their counters twice a second.
        std::thread::sleep(Duration::from_millis(1_200));
        let mut took_over = Vec::new();
        for (i, b) in backends.iter_mut().enumerate() {
            if i != victim && b.proc.running() {
                let end = b.solved().unwrap_or(0);
                took_over.push((i, end - start[i], end - at_stop[i]));
            }
        }
        let (statuses, rerouted) = access_log(&log, log_from);
        let client_said = std::fs::read_to_string(&client.stderr).unwrap_or_default();
        eprintln!(
            "scale-out: {what}: {} puzzles in {:.1} s; backend {victim} stopped after {:.1} s \
             having solved at least {} of them, {}; (backend, solved in the run, of \
             which after the stop) {took_over:?}; nginx answered {statuses:?} and passed \
             {rerouted} calls on to the next backend itself; client: {}",
            self.puzzles.len(),
            elapsed.as_secs_f64(),
            stopped_after.as_secs_f64(),
            at_stop[victim] - start[victim],
            exit.map_or("still running".into(), |e| e.to_string()),
            client_said.trim().replace('\n', " | "),
        );
        assert!(
            !took_over.is_empty() && took_over.iter().all(|&(_, _, after)| after > 0),
            "{what}: the backends left took over: {took_over:?}"
        );
        if signal == "TERM" {
            assert_eq!(
                exit.and_then(|e| e.code()),
                Some(0),
                "{what}: a drained backend exits 0"
            );
        }
    }
}

#[test]
fn three_backends_behind_nginx_share_the_work_and_survive_a_kill() {
    let Some((nginx, http2_directive)) = find_nginx() else {
        return skip(TEST, "no nginx on PATH, in /usr/sbin or at $SUDOKU_NGINX");
    };
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip(TEST, &e),
    };
    let started = Instant::now();
    // Kept after the run, for its logs; the next run starts it afresh.
    let dir = target_dir().join("scale-out");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the run directory");
    let puzzles = crate::support::data_set(DATA_SET);
    let total = puzzles.len() as u64;

    let ports = free_ports(7);
    let mut backends: Vec<Backend> = (0..3)
        .map(|i| Backend::start(i, [ports[2 * i], ports[2 * i + 1]], &dir))
        .collect();
    for b in &backends {
        let url = format!("http://{}", b.grpc);
        assert!(
            eventually(Duration::from_secs(20), || healthy(&url)),
            "backend {} never served\n{}",
            b.grpc,
            b.proc.logs()
        );
    }

    let port = ports[6];
    let conf = dir.join("nginx.conf");
    std::fs::write(&conf, nginx_conf(&dir, port, &backends, http2_directive))
        .expect("write nginx.conf");
    let mut cmd = Command::new(&nginx);
    cmd.arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf)
        // The error log before the configuration is read (Debian's default
        // is stderr, a build's may be a root-owned path).
        .arg("-e")
        .arg(dir.join("error.log"));
    let mut proxy = Proc::start("nginx", cmd, &dir);
    let front = format!("127.0.0.1:{port}");
    let front_url = format!("http://{front}");
    assert!(
        eventually(Duration::from_secs(20), || proxy.running()
            && healthy(&front_url)),
        "nginx never proxied a health check\n{}\n{}",
        proxy.logs(),
        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
    );
    eprintln!(
        "scale-out: 3 backends {:?} behind {nginx:?} on {front} ({:.1} s)",
        backends.iter().map(|b| b.grpc).collect::<Vec<_>>(),
        started.elapsed().as_secs_f64()
    );

    // a. The command line: six SolveBatch streams on one connection, which
    // round robin deals two to each backend.
    let before = solved_counts(&backends, 0);
    let phase = Instant::now();
    let mut cmd = Command::new(crate::support::sudoku_cli());
    cmd.arg("solve")
        .arg(repo().join("data").join(DATA_SET))
        .args(["--server", &front_url, "--streams", "6", "--batch", "64"]);
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "sudoku solve through nginx:\n{}", out.both());
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), puzzles.len(), "one line per puzzle");
    for (i, (puzzle, line)) in puzzles.iter().zip(&lines).enumerate() {
        check_solution(&format!("sudoku solve, puzzle {i}"), puzzle, line);
    }
    let after_cli = solved_counts(&backends, before.iter().sum::<u64>() + total);
    let cli: Vec<u64> = after_cli.iter().zip(&before).map(|(a, b)| a - b).collect();
    eprintln!(
        "scale-out: sudoku solve --streams 6: {total} puzzles in {:.1} s, per backend {cli:?}",
        phase.elapsed().as_secs_f64()
    );
    assert_eq!(cli.iter().sum::<u64>(), total, "each puzzle solved once");
    assert!(cli.iter().all(|&n| n > 0), "every backend worked: {cli:?}");

    // b. Python, SolveBatch over six streams.
    let phase = Instant::now();
    let output = dir.join("python-batch.out");
    let cmd = python_batch_file(
        &python,
        &front,
        &output,
        &["--rpc", "batch", "--streams", "6"],
    );
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.success, "batch_file.py --rpc batch:\n{}", out.both());
    check_python_output("batch_file.py --rpc batch", &output, &puzzles);
    let after_py = solved_counts(&backends, after_cli.iter().sum::<u64>() + total);
    let py: Vec<u64> = after_py
        .iter()
        .zip(&after_cli)
        .map(|(a, b)| a - b)
        .collect();
    eprintln!(
        "scale-out: batch_file.py --rpc batch --streams 6: {total} puzzles in {:.1} s, per backend {py:?}",
        phase.elapsed().as_secs_f64()
    );
    assert_eq!(py.iter().sum::<u64>(), total, "each puzzle solved once");
    assert!(py.iter().all(|&n| n > 0), "every backend worked: {py:?}");

    // d. Python, unary Solve with the retry policy; backend 0 is killed
    // (SIGKILL: no drain, its connections reset mid-call).
    let scene = Scene {
        dir: &dir,
        python: &python,
        front: &front,
        puzzles: &puzzles,
    };
    scene.stop_one_mid_run(
        &mut backends,
        0,
        "KILL",
        &["--rpc", "solve", "--in-flight", "32"],
    );

    // e. Python, SolveBatch with re-sending; backend 1 is stopped with
    // SIGTERM: it drains, its streams answer what they hold and end with
    // UNAVAILABLE, and the client sends the rest again (to backend 2, the
    // last one). Four items per message keeps the run long enough to stop
    // a backend in the middle.
    scene.stop_one_mid_run(
        &mut backends,
        1,
        "TERM",
        &["--rpc", "batch", "--streams", "4", "--batch", "4"],
    );
    eprintln!(
        "scale-out: test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Copies of the 17-clue set the command line solves in the test below:
/// 393,264 puzzles, a few seconds over three single-thread servers.
const KILL_REPEATS: usize = 8;

/// No proxy: `sudoku solve --server a,b,c` balances its streams over three
/// servers itself (tonic's balancer), and one of them dies mid-run. The
/// streams it carried fail with a transport error; the client sends what
/// they left unanswered again on new streams, which the balancer puts on
/// the servers left. The output must hold every puzzle exactly once, in
/// input order, each solution right, and the exit must be 0. The victim is
/// the server that had solved most when a fifth of the output was read
/// (their metrics), so it certainly carried part of the run; it is stopped
/// (SIGSTOP) and, once the output stalls behind it, killed (SIGKILL), so it
/// certainly held puzzles the client must say it re-sent.
#[test]
fn three_servers_balanced_by_the_client_survive_a_kill() {
    use std::io::{BufRead, BufReader};
    let started = Instant::now();
    let dir = target_dir().join("scale-out-kill");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the run directory");
    let set = crate::support::data_set(DATA_SET);
    let puzzles: Vec<&String> = set.iter().cycle().take(set.len() * KILL_REPEATS).collect();
    let input = dir.join("puzzles.txt");
    let mut text = String::with_capacity(puzzles.len() * 82);
    for p in &puzzles {
        text.push_str(p);
        text.push('\n');
    }
    std::fs::write(&input, text).expect("write the input");

    let ports = free_ports(6);
    let mut backends: Vec<Backend> = (0..3)
        .map(|i| Backend::start(i, [ports[2 * i], ports[2 * i + 1]], &dir))
        .collect();
    for b in &backends {
        let url = format!("http://{}", b.grpc);
        assert!(
            eventually(Duration::from_secs(20), || healthy(&url)),
            "backend {} never served\n{}",
            b.grpc,
            b.proc.logs()
        );
    }
    let servers: Vec<String> = backends.iter().map(|b| b.grpc.to_string()).collect();
    let before = solved_counts(&backends, 0);

    let stderr_path = dir.join("sudoku.stderr");
    let mut child = Command::new(crate::support::sudoku_cli())
        .arg("solve")
        .arg(&input)
        .args(["--server", &servers.join(",")])
        // A reorder window of 32,768 puzzles rather than 4,096: every
        // server then has work at every moment, not only the one holding
        // the oldest puzzles while the window waits for it.
        .args(["--window", "512"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(File::create(&stderr_path).expect("create stderr file"))
        .spawn()
        .expect("the sudoku binary runs");
    let phase = Instant::now();
    // Read on a thread of its own, so the output keeps flowing while the
    // victim is chosen: a pause here would fill the pipe and then the
    // reorder window, and the servers would be idle at the kill.
    let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = {
        let read = read.clone();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in stdout.lines() {
                lines.push(line.expect("read the output"));
                read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            lines
        })
    };
    let count = || read.load(std::sync::atomic::Ordering::Relaxed);
    // The counters are published twice a second: a fifth of the output
    // read, wait until the servers' figures show the work under way.
    let mut run = vec![0u64; 3];
    let under_way = eventually(Duration::from_secs(60), || {
        if count() < puzzles.len() / 5 {
            return false;
        }
        run = backends
            .iter()
            .zip(&before)
            .map(|(b, before)| b.solved().unwrap_or(0).saturating_sub(*before))
            .collect();
        run.iter().any(|&n| n > 0) || count() == puzzles.len()
    });
    let victim = (0..3).max_by_key(|&i| run[i]).unwrap_or(0);
    let at_kill = (count(), phase.elapsed());
    assert!(
        under_way && at_kill.0 < puzzles.len(),
        "the run should still be going when a server has answered: {} of {} lines, \
         solved {run:?}",
        at_kill.0,
        puzzles.len()
    );
    // Stopped first, then killed once the output stalls behind it: the
    // puzzles it holds are then certainly unanswered (the client outruns
    // the servers, so a server killed at a random moment may hold none).
    assert!(
        backends[victim].proc.signal("STOP"),
        "kill -s STOP backend {victim}"
    );
    let mut last = (count(), Instant::now());
    let stalled = eventually(Duration::from_secs(20), || {
        let now = count();
        if now != last.0 {
            last = (now, Instant::now());
        }
        last.1.elapsed() > Duration::from_millis(300)
    });
    let at_kill = (count(), phase.elapsed(), at_kill.0);
    assert!(
        stalled && at_kill.0 < puzzles.len(),
        "the output should stall behind the stopped backend {victim}: {} of {} lines",
        at_kill.0,
        puzzles.len()
    );
    assert!(
        backends[victim].proc.signal("KILL"),
        "kill -s KILL backend {victim}"
    );
    let victim_solved = run[victim];
    let lines = reader.join().expect("the output reader");
    let status = child.wait().expect("wait for sudoku");
    let elapsed = phase.elapsed();
    let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        backends[victim]
            .proc
            .wait(Duration::from_secs(10))
            .is_some(),
        "backend {victim} exits on SIGKILL"
    );
    assert!(status.success(), "sudoku solve: {status}\n{said}");
    assert_eq!(lines.len(), puzzles.len(), "one line per puzzle\n{said}");
    for (i, (puzzle, line)) in puzzles.iter().zip(&lines).enumerate() {
        check_solution(&format!("line {}", i + 1), puzzle, line);
    }
    assert!(
        victim_solved > 0,
        "backend {victim} had answered nothing before the kill: {run:?}"
    );
    // One line per lost server, saying how many puzzles were sent again.
    let losses: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("lost a server"))
        .collect();
    assert_eq!(losses.len(), 1, "one loss said:\n{said}");
    let resent: u64 = losses[0]
        .split("re-sending ")
        .nth(1)
        .and_then(|r| r.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count in {:?}", losses[0]));
    assert!(
        resent > 0,
        "the lost streams held unanswered puzzles: {}",
        losses[0]
    );

    std::thread::sleep(Duration::from_millis(1_200));
    let after: Vec<u64> = backends
        .iter_mut()
        .enumerate()
        .map(|(i, b)| {
            if i == victim {
                0
            } else {
                b.solved().unwrap_or(0) - before[i]
            }
        })
        .collect();
    eprintln!(
        "scale-out: sudoku solve --server a,b,c: {} puzzles in {:.1} s; backend {victim} \
         SIGSTOPped at line {}, SIGKILLed after {:.1} s and {} lines, having solved at least {victim_solved} (per \
         backend then {run:?}); {resent} puzzles re-sent; survivors solved {after:?} in all; \
         {}; test took {:.1} s",
        puzzles.len(),
        elapsed.as_secs_f64(),
        at_kill.2,
        at_kill.1.as_secs_f64(),
        at_kill.0,
        losses[0],
        started.elapsed().as_secs_f64()
    );
    assert!(
        (0..3).all(|i| i == victim || after[i] > run[i]),
        "the servers left took over: {after:?} at the end, {run:?} at the kill"
    );
}
