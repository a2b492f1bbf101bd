//! Grids of other sizes through the one streaming pipeline of `sudoku
//! solve` that 9x9 grids take: 16x16 puzzles streamed through a server in
//! several messages and streams, answered in input order with a
//! uniqueness check; `--output jsonl` of 16x16 the same through a server
//! as in this process; `--box 3x3` on a 9x9 file the same as no
//! `--box`, through a server and locally; and the puzzles a lost server
//! held sent again to the other.

use crate::support::{BinaryServer, SETTLE, TestServer, data_set, sudoku_on_file};
use sudoku_core::puzzle::sized::{Shape, SizedGrid};

/// The first `n` puzzles of the committed 16x16 set.
fn sixteen(n: usize) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sizes/16x16-hard.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .take(n)
        .map(String::from)
        .collect()
}

/// A 16x16 grid of one given: it has many solutions.
fn open_sixteen() -> String {
    format!("1{}", ".".repeat(255))
}

/// Runs `sudoku solve ARGS` on `input` (written to a file named by `tag`)
/// off the runtime's threads.
async fn solve(tag: &'static str, args: Vec<String>, input: String) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let mut all = vec!["solve"];
        all.extend(args.iter().map(String::as_str));
        sudoku_on_file(tag, &all, &input)
    })
    .await
    .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// Twelve 16x16 puzzles and one with many solutions, sent one or two to a
/// message (`--batch 2`) on one stream and on three: every answer in its
/// record's place, each solving its puzzle, the open grid's solution
/// printed and marked `# not unique` as a 9x9 grid's is, exit code 1.
#[tokio::test]
async fn sixteen_by_sixteen_streams_through_a_server_in_input_order() {
    let server = TestServer::start().await;
    let mut input = sixteen(12);
    input.insert(5, open_sixteen());
    let text = format!("{}\n", input.join("\n"));
    let shape = Shape::new(4, 4).unwrap();
    let mut outputs = Vec::new();
    for streams in ["1", "3"] {
        let args = strings(&[
            "--server",
            &server.url(),
            "--unique",
            "--batch",
            "2",
            "--window",
            "3",
            "--streams",
            streams,
        ]);
        let out = solve("pipeline-16", args, text.clone()).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("16x16 (4x4 boxes)"), "{stderr}");
        assert!(
            stderr.contains("line 6: not unique: 2+ solutions"),
            "{stderr}"
        );
        assert!(
            stderr.contains("1 of 13 puzzles not solved (1 not unique)"),
            "{stderr}"
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), input.len(), "{stdout}");
        for (i, (p, a)) in input.iter().zip(&lines).enumerate() {
            let (solution, mark) = match a.split_once("  # ") {
                Some((s, m)) => (s, Some(m)),
                None => (*a, None),
            };
            let want = (i == 5).then_some("not unique: 2+ solutions");
            assert_eq!(mark, want, "record {}: {a}", i + 1);
            let p = SizedGrid::from_text(shape, p).unwrap();
            let s = SizedGrid::from_text(shape, solution).unwrap();
            assert!(
                s.is_valid_solution() && p.is_kept_by(&s),
                "record {}",
                i + 1
            );
        }
        outputs.push(stdout);
    }
    // The unique puzzles have one answer however they travel.
    let unique = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.contains('#'))
            .map(String::from)
            .collect()
    };
    assert_eq!(unique(&outputs[0]), unique(&outputs[1]));
}

/// `--output jsonl` of 16x16: one object per record in order, naming the
/// box; the same through a server as in this process (but for the time),
/// a grid with many solutions `multiple_solutions` with its solution.
#[tokio::test]
async fn sixteen_by_sixteen_jsonl_is_the_same_locally_and_on_a_server() {
    let server = TestServer::start().await;
    let mut input = sixteen(4);
    input.insert(2, open_sixteen());
    let text = format!("{}\n", input.join("\n"));
    let mut runs = Vec::new();
    for how in [
        strings(&["--local", "--threads", "2"]),
        strings(&["--server", &server.url()]),
    ] {
        let mut args = strings(&["--unique", "--output", "jsonl", "--batch", "2"]);
        args.extend(how);
        let out = solve("jsonl-16", args, text.clone()).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let objects = crate::support::json_lines(&out.stdout);
        assert_eq!(objects.len(), input.len(), "{objects:?}");
        for (i, o) in objects.iter().enumerate() {
            assert_eq!(o["line"], i + 1);
            assert_eq!(o["box"], "4x4");
            let (outcome, count) = match i {
                2 => ("multiple_solutions", 2),
                _ => ("solved", 1),
            };
            assert_eq!(o["outcome"], outcome, "{o}");
            assert_eq!(o["solution_count"], count, "{o}");
            let s = o["solution"].as_str().unwrap();
            let s = SizedGrid::from_text(Shape::new(4, 4).unwrap(), s).unwrap();
            let p = SizedGrid::from_text(Shape::new(4, 4).unwrap(), &input[i]).unwrap();
            assert!(s.is_valid_solution() && p.is_kept_by(&s), "{o}");
        }
        runs.push(crate::support::timeless(objects));
    }
    assert_eq!(runs[0], runs[1], "--local and --server agree");
}

/// `--box 3x3` on a 9x9 file takes the 9x9 path: the same output, error
/// lines and exit code as no `--box`, through a server and locally.
#[tokio::test]
async fn box_three_by_three_on_nine_by_nine_is_the_same_as_no_box() {
    let server = TestServer::start().await;
    let mut puzzles: Vec<String> = data_set("puzzles2_17_clue").into_iter().take(40).collect();
    puzzles.insert(7, format!("55{}", ".".repeat(79)));
    let text = format!("{}\n", puzzles.join("\n"));
    let mut outputs = Vec::new();
    for how in [
        strings(&["--local"]),
        strings(&["--local", "--box", "3x3"]),
        strings(&["--server", &server.url()]),
        strings(&["--server", &server.url(), "--box", "3x3"]),
        strings(&["--server", &server.url(), "--box", "auto"]),
    ] {
        let out = solve("box-3x3", how.clone(), text.clone()).await;
        assert_eq!(out.status.code(), Some(1), "{how:?}: {out:?}");
        outputs.push((how, out.stdout, out.stderr));
    }
    let (_, stdout, stderr) = &outputs[0];
    let printed = String::from_utf8_lossy(stdout);
    assert_eq!(printed.lines().count(), puzzles.len());
    let clash = printed.lines().nth(7).unwrap();
    assert!(
        clash.contains("# error: ") && clash.contains("5 is given twice"),
        "{printed}"
    );
    for (how, out, err) in &outputs[1..] {
        assert_eq!(out, stdout, "{how:?}");
        assert_eq!(
            String::from_utf8_lossy(err),
            String::from_utf8_lossy(stderr),
            "{how:?}"
        );
    }
}

/// Sends `signal` (a `kill -s` name) to process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -s {signal} {pid}");
}

/// Two servers and 16x16 puzzles on the streams placed at random over
/// them (4 per server, one or four puzzles a message): one server is
/// stopped while puzzles go out, then killed. What its streams held is
/// sent again on new streams, which the other server answers: every
/// puzzle answered in its place, exit code 0.
#[tokio::test]
async fn a_lost_servers_sixteen_by_sixteen_puzzles_go_to_the_other() {
    use std::io::{BufReader, Read, Write};
    use std::process::Stdio;
    let (a, b) = (
        BinaryServer::spawn(&[]).await,
        BinaryServer::spawn(&[]).await,
    );
    let servers = format!("{},{}", a.url(), b.url());
    let puzzles = sixteen(40);
    let mut child = crate::support::spawn_sudoku(
        &["solve", "--server", &servers, "--batch", "4"],
        Stdio::piped(),
    );
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", puzzles[0]).unwrap();
    stdin.flush().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (first, mut stdout) = crate::support::tools::read_line_within(stdout, SETTLE);
    // Stopped: the streams placed on it take puzzles and answer none.
    signal(a.pid(), "STOP");
    for p in &puzzles[1..] {
        writeln!(stdin, "{p}").unwrap();
    }
    stdin.flush().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    signal(a.pid(), "KILL");
    drop(stdin);
    let (rest, status, stderr) = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        tokio::task::spawn_blocking(move || {
            let mut rest = String::new();
            stdout.read_to_string(&mut rest).unwrap();
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            (rest, child.wait().unwrap(), stderr)
        }),
    )
    .await
    .expect("the run ends once the other server has the puzzles")
    .unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    let answers: Vec<&str> = std::iter::once(first.trim_end())
        .chain(rest.lines())
        .collect();
    assert_eq!(answers.len(), puzzles.len(), "{stderr}");
    let shape = Shape::new(4, 4).unwrap();
    for (i, (p, a)) in puzzles.iter().zip(&answers).enumerate() {
        let p = SizedGrid::from_text(shape, p).unwrap();
        let s = SizedGrid::from_text(shape, a).unwrap_or_else(|e| panic!("{i}: {e}: {a}"));
        assert!(
            s.is_valid_solution() && p.is_kept_by(&s),
            "record {}",
            i + 1
        );
    }
    drop(b);
}
