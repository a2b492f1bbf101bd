//! What the tests share: real servers to test against ([`server`]), the
//! tools to drive other programs ([`tools`]), and puzzles.

#![allow(dead_code)]

pub mod server;
pub mod tools;

pub use server::{BinaryServer, TestServer, bare_client};
pub use tools::{
    free_port, free_ports, have, http_get, npm_ci, python_venv, repo, run, sample, scrape, skip,
    skip_until, target_dir,
};

/// Puzzles of a data set committed in data/, skipping '#' lines.
pub fn data_set(name: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && l.len() >= 81)
        .map(|l| l[..81].to_string())
        .collect()
}

/// A grid in the text form, for a request's `puzzle`.
pub fn text_grid(text: &str) -> Option<sudoku_grpc::pb::Grid> {
    Some(sudoku_grpc::pb::Grid {
        text: text.to_string(),
        ..Default::default()
    })
}

/// A Solve request for the grid `text`, without options.
pub fn solve_request(text: &str) -> sudoku_grpc::pb::SolveRequest {
    sudoku_grpc::pb::SolveRequest {
        puzzle: text_grid(text),
        options: None,
    }
}

/// Starts `sudoku` with `args`, its stdin from `stdin`, its stdout and
/// stderr piped.
pub fn spawn_sudoku<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    stdin: std::process::Stdio,
) -> std::process::Child {
    std::process::Command::new(sudoku_cli())
        .args(args)
        .stdin(stdin)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the sudoku binary runs")
}

/// Runs `sudoku` with `args` and `stdin` written to it; its output.
pub fn sudoku_stdin<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = spawn_sudoku(args, std::process::Stdio::piped());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The JSON objects of a run's `--output jsonl`, one a line.
pub fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e} in {l}")))
        .collect()
}

/// The JSON objects of two runs, with their solving times zeroed (the
/// only member that differs from run to run).
pub fn timeless(objects: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    objects
        .into_iter()
        .map(|mut o| {
            o["stats"]["solve_time_us"] = 0.into();
            o
        })
        .collect()
}

/// A Solve call whose answer the test expects: the solution, the test
/// failing on any status.
pub trait SolveExt {
    fn solved(
        &mut self,
        request: sudoku_grpc::pb::SolveRequest,
    ) -> impl std::future::Future<Output = sudoku_grpc::pb::Solution>;
}

impl SolveExt
    for sudoku_grpc::pb::sudoku_service_client::SudokuServiceClient<tonic::transport::Channel>
{
    async fn solved(
        &mut self,
        request: sudoku_grpc::pb::SolveRequest,
    ) -> sudoku_grpc::pb::Solution {
        self.solve(request)
            .await
            .unwrap()
            .into_inner()
            .solution
            .unwrap()
    }
}

/// The field violations of an INVALID_ARGUMENT, as (field, description).
pub fn violations(status: &tonic::Status) -> Vec<(String, String)> {
    use tonic_types::StatusExt;
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let br = details.bad_request().expect("a BadRequest detail");
    br.field_violations
        .iter()
        .map(|v| (v.field.clone(), v.description.clone()))
        .collect()
}

/// Raises this process's open-file limit to its hard limit: the attack
/// tests hold up to a thousand sockets while other tests run.
pub fn raise_fd_limit() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        if let (Some(current), Some(maximum)) = (limit.current, limit.maximum)
            && current < maximum
        {
            let _ = setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(maximum),
                    maximum: Some(maximum),
                },
            );
        }
    }
}

/// A count to a million of the blank 64x64 grid: far more work than any
/// budget allows.
pub fn blank_64_count() -> sudoku_grpc::pb::SolveRequest {
    use sudoku_grpc::pb;
    pb::SolveRequest {
        puzzle: Some(pb::Grid {
            cells: vec![0; 64 * 64],
            box_rows: 8,
            box_cols: 8,
            ..Default::default()
        }),
        options: Some(pb::SolveOptions {
            mode: pb::SolveMode::Count as i32,
            max_solutions: 1_000_000,
        }),
    }
}

/// How long the tests give an event they wait for (a counter stopping, a
/// status arriving) before calling it missing. The event is the assertion;
/// this bound only keeps a regression from hanging, so it is generous
/// enough for a loaded 2-core machine. Times that matter are printed here
/// and measured in benches/.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(10);

pub const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
pub const CLASSIC_SOLVED: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

/// A near-empty grid (12 givens) with no solution, where the search finds
/// the contradiction only after about 1.55 million nodes (0.34 s on the
/// development machine; 2.76 million before the search learned to branch
/// on the bivalue cell with most unsolved peers): found by a random search
/// over few-given grids.
pub const DEEP_CONTRADICTION: &str =
    "......3.......2...........4...5..83....83.5..7..........1.........4..............";

/// Runs `sudoku` with `args` and then a file holding `input` (named after
/// `tag`), as a user runs it on a file; the run is killed and the test
/// fails when it takes over a minute.
pub fn sudoku_on_file(tag: &str, args: &[&str], input: &str) -> std::process::Output {
    use std::process::{Command, Stdio};
    let path = std::env::temp_dir().join(format!("sudoku-{tag}-{}.txt", std::process::id()));
    std::fs::write(&path, input).expect("the input file is written");
    let mut child = Command::new(sudoku_cli())
        .args(args)
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sudoku binary runs");
    // Read as it comes, so a full pipe never stops the run.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut all);
            }
            all
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the run can be waited for") {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = std::fs::remove_file(&path);
            panic!("sudoku {args:?} was still running after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let _ = std::fs::remove_file(&path);
    std::process::Output {
        status,
        stdout: stdout.join().expect("stdout is read"),
        stderr: stderr.join().expect("stderr is read"),
    }
}

/// The `sudoku` command to run: the one `SUDOKU_TEST_CLI` names, else the
/// one in this test binary's target directory and profile. That is another
/// crate's binary (crates/cli), which `cargo test` at the root builds (with
/// the same features) for that crate's own tests before any test runs.
/// When it is missing (`cargo test -p sudoku-grpc` alone), it is built here.
pub fn sudoku_cli() -> &'static std::path::Path {
    static CLI: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    CLI.get_or_init(|| {
        if let Some(named) = std::env::var_os("SUDOKU_TEST_CLI").filter(|p| !p.is_empty()) {
            return named.into();
        }
        // <target>/<profile dir>/deps/it-<hash>
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("the test binary is in <target>/<profile>/deps");
        let cli = profile_dir.join(format!("sudoku{}", std::env::consts::EXE_SUFFIX));
        if cli.exists() {
            return cli;
        }
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("release") => "release",
            _ => "test",
        };
        eprintln!("building the sudoku command for the tests ({profile} profile)");
        let built = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--profile", profile])
            .args(["--package", "sudoku-cli", "--bin", "sudoku"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env(
                "CARGO_TARGET_DIR",
                profile_dir.parent().expect("a target directory"),
            )
            .status()
            .expect("cargo runs");
        assert!(built.success(), "cargo build of the sudoku command failed");
        cli
    })
}
