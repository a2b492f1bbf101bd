//! Runs examples/python against the real server: the example client checks
//! Solve, SolveBatch, BadRequest details, health, reflection (v1 and v1alpha),
//! compression, Validate, Hint and Generate itself and exits non-zero on the first wrong answer.
//!
//! Needs python3 with venv, and PyPI for the first run (the virtualenv is
//! kept in `<target>/py-venv`). Skips when that is missing, except under
//! CI=true, where it fails. .ci/setup-clients.sh installs it all.

use std::process::Command;
use std::time::Duration;

use crate::support::{TestServer, python_venv, repo, run, skip};
use sudoku_core::puzzle::Grid;

fn example_dir() -> std::path::PathBuf {
    repo().join("examples/python")
}

#[test]
fn python_client_talks_to_the_real_server() {
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip("python_client_talks_to_the_real_server", &e),
    };
    let server = TestServer::start_detached();
    let mut cmd = Command::new(&python);
    cmd.arg("client.py")
        .args(["--target", &server.target()])
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(example_dir());
    let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "client.py failed:\n{}", out.both());
    for line in [
        "ok: Solve (gzip)",
        "ok: Solve (cells, count mode)",
        "ok: Solve (16x16, 4x4 boxes) -> solved",
        "ok: SolveBatch -> 4 solved, item 201 rejected: items[1].puzzle: 5 is given twice in row 1",
        "ok: INVALID_ARGUMENT BadRequest: puzzle: 5 is given twice in row 1: at row 1, column 1 and row 1, column 9",
        "ok: INVALID_ARGUMENT BadRequest: puzzle.text: row 2, column 2: unexpected character 'x'",
        "ok: health Check ('' and sudoku.v1.SudokuService) and Watch -> SERVING",
        "ok: reflection v1 lists",
        "resolved sudoku.v1.SudokuService (Generate, Hint, Rate, Solve, SolveBatch, SolveStream, Validate)",
        "ok: reflection v1alpha lists",
        "ok: Validate -> 2 conflicts in the broken puzzle; the classic is unique",
        "ok: Hint -> ",
        "ok: Generate -> 3 medium puzzles, unique, same for seed 42",
        "all checks passed",
    ] {
        assert!(
            out.stdout.contains(line),
            "missing {line:?} in\n{}",
            out.both()
        );
    }
    assert!(!out.stdout.contains("FAIL"), "{}", out.both());
}

#[test]
fn python_retry_policy_retries_unavailable() {
    // No real server here: retry_check.py runs its own flaky stand-in on
    // 127.0.0.1 to prove the example's retry policy retries UNAVAILABLE.
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip("python_retry_policy_retries_unavailable", &e),
    };
    let mut cmd = Command::new(&python);
    cmd.arg("retry_check.py")
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(example_dir());
    let out = run(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", out.both());
    assert!(out.success, "retry_check.py failed:\n{}", out.both());
    assert!(
        out.stdout
            .contains("ok: retry policy: UNAVAILABLE twice, then OK on attempt 3"),
        "{}",
        out.both()
    );
}

/// batch_file.py streams: on 300,000 puzzles (the 17-clue set over and
/// over) through SolveBatch, every answer is written once and right, and
/// the Python process's peak RSS stays bounded. Holding the file and its
/// answers, as the script once did, took about 225 MB here; streaming,
/// about 45-50 MB, most of it the interpreter and grpcio.
#[test]
fn python_batch_file_streams_a_large_file_in_bounded_memory() {
    const TEST: &str = "python_batch_file_streams_a_large_file_in_bounded_memory";
    const COUNT: usize = 300_000;
    const LIMIT_KB: u64 = 100 * 1024;
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip(TEST, &e),
    };
    let set = crate::support::data_set("puzzles2_17_clue");
    let dir = crate::support::target_dir().join("python-stream");
    std::fs::create_dir_all(&dir).expect("create the run directory");
    let input = dir.join("puzzles.txt");
    let mut text = String::with_capacity(COUNT * 82);
    for p in set.iter().cycle().take(COUNT) {
        text.push_str(p);
        text.push('\n');
    }
    std::fs::write(&input, text).expect("write the input");
    let output = dir.join("answers.txt");
    let _ = std::fs::remove_file(&output);

    let server = TestServer::start_detached();
    let started = std::time::Instant::now();
    let mut child = Command::new(&python)
        .arg("batch_file.py")
        .arg(&input)
        .args(["--target", &server.target(), "--rpc", "batch"])
        .arg("--output")
        .arg(&output)
        .arg("--proto-dir")
        .arg(repo().join("proto"))
        .current_dir(example_dir())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    // VmHWM is the peak so far; the last figure before the process is gone
    // is the peak of the run.
    let pid = child.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0u64;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
            else {
                break;
            };
            peak = peak.max(kb);
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    let peak = sampler.join().unwrap();
    eprintln!(
        "batch_file.py --rpc batch, {COUNT} puzzles: VmHWM {peak} kB in {:.1} s; {}",
        started.elapsed().as_secs_f64(),
        stderr.trim()
    );
    assert!(status.success(), "batch_file.py: {status}\n{stderr}");

    let answers = std::fs::read_to_string(&output).expect("the answers");
    let mut seen = vec![false; COUNT];
    for line in answers.lines() {
        let (id, solution) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("bad line {line:?}"));
        let id: usize = id.parse().unwrap_or_else(|_| panic!("bad id {line:?}"));
        assert!(id < COUNT && !seen[id], "id {id} unknown or repeated");
        seen[id] = true;
        let puzzle = Grid::from_text(&set[id % set.len()]).unwrap();
        let s = Grid::from_text(solution).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(
            s.is_valid_solution() && puzzle.is_kept_by(&s),
            "id {id}: {solution} does not solve it"
        );
    }
    let missing = seen.iter().filter(|&&s| !s).count();
    assert_eq!(missing, 0, "{missing} puzzles without an answer");
    assert!(
        peak > 0 && peak < LIMIT_KB,
        "peak RSS {peak} kB, limit {LIMIT_KB} kB"
    );
}

/// Stubs generated from `sudoku.proto` alone failed with "No module named
/// 'google.rpc'" where googleapis-common-protos was not installed. Both
/// ways the README gives work: the examples' requirements (which install
/// it), or the vendored `google/rpc/status.proto` generated beside the
/// contract, with googleapis-common-protos hidden.
#[test]
fn generated_stubs_import_google_rpc_either_way() {
    let python = match python_venv() {
        Ok(p) => p,
        Err(e) => return skip("generated_stubs_import_google_rpc_either_way", &e),
    };
    let check = repo().join("tests/it/scripts/stub_imports.py");
    for (n, (protos, without)) in [
        (&["sudoku/v1/sudoku.proto"][..], false),
        (&["sudoku/v1/sudoku.proto", "google/rpc/status.proto"], true),
        (&["sudoku/v1/sudoku.proto"], true),
    ]
    .into_iter()
    .enumerate()
    {
        let gen_dir = std::env::temp_dir().join(format!("sudoku-stubs-{n}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&gen_dir);
        std::fs::create_dir_all(&gen_dir).unwrap();
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "grpc_tools.protoc", "-Iproto"])
            .arg(format!("--python_out={}", gen_dir.display()))
            .arg(format!("--grpc_python_out={}", gen_dir.display()))
            .args(protos)
            .current_dir(repo());
        let out = run(cmd, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.success, "protoc {protos:?}:\n{}", out.both());
        let mut cmd = Command::new(&python);
        cmd.arg(&check).arg(&gen_dir);
        if without {
            cmd.arg("--without-googleapis");
        }
        let out = run(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&gen_dir);
        // The contract alone, with googleapis-common-protos hidden, is the
        // fault: it must still fail, or the check checks nothing.
        let should = !(without && protos.len() == 1);
        assert_eq!(
            out.success,
            should,
            "{protos:?}, hidden {without}:\n{}",
            out.both()
        );
        if !should {
            assert!(
                out.stdout.contains("No module named 'google.rpc'"),
                "{}",
                out.both()
            );
        }
    }
}
