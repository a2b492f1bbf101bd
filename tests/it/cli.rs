//! The `sudoku` command as a user runs it: the real binary against a real
//! server, on both classic input formats and the 81-character line format.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::{CLASSIC, CLASSIC_SOLVED, TestServer};
use sudoku_grpc::puzzle::Grid;

fn sudoku(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sudoku"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sudoku binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

async fn run(args: Vec<String>, stdin: String) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sudoku(&args, &stdin)
    })
    .await
    .unwrap()
}

/// The first classic problem: 9 lines of 9 space-separated digits, 0 = blank.
const SPACED_INPUT: &str = "\
5 3 0 0 7 0 0 0 0
6 0 0 1 9 5 0 0 0
0 9 8 0 0 0 0 6 0
8 0 0 0 6 0 0 0 3
4 0 0 8 0 3 0 0 1
7 0 0 0 2 0 0 0 6
0 6 0 0 0 0 2 8 0
0 0 0 4 1 9 0 0 5
0 0 0 0 8 0 0 7 9
";

/// The second classic problem: a board with '.' for blanks.
fn bracketed_input() -> String {
    let rows: Vec<String> = (0..9)
        .map(|r| {
            let cells: Vec<String> = CLASSIC[r * 9..r * 9 + 9]
                .chars()
                .map(|c| format!("\"{c}\""))
                .collect();
            format!("[{}]", cells.join(","))
        })
        .collect();
    format!("[{}]\n", rows.join(","))
}

fn spaced(grid: &str) -> String {
    (0..9)
        .map(|r| {
            let row: Vec<String> = grid[r * 9..r * 9 + 9].chars().map(String::from).collect();
            row.join(" ") + "\n"
        })
        .collect()
}

#[tokio::test]
async fn first_classic_format_round_trips_through_the_server() {
    let server = TestServer::start().await;
    let out = run(
        vec!["solve".into(), "--server".into(), server.url()],
        SPACED_INPUT.into(),
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        spaced(CLASSIC_SOLVED)
    );
}

#[tokio::test]
async fn second_classic_format_round_trips_through_the_server() {
    let server = TestServer::start().await;
    let out = run(
        vec!["solve".into(), "--server".into(), server.url()],
        bracketed_input(),
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    assert_eq!(digits, CLASSIC_SOLVED);
    assert!(text.starts_with("[[\"5\",\"3\",\"4\""), "{text}");
}

#[tokio::test]
async fn lines_keep_order_and_errors_stay_aligned() {
    let server = TestServer::start().await;
    let hard = "........8..3...4...9..2..6.....79.......612...6.5.2.7...8...5...1.....2.4.5.....3";
    let input = format!(
        "# a comment\n{CLASSIC} trailing text\n{}\nnot a puzzle\n{hard}\n",
        ".".repeat(81)
    );
    let out = run(
        vec![
            "solve".into(),
            "--server".into(),
            server.url(),
            "--unique".into(),
        ],
        input,
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed puzzle makes the exit code 1"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert_eq!(lines[0], CLASSIC_SOLVED);
    assert!(
        lines[1].ends_with("# not unique: 2+ solutions"),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("# error:"), "{}", lines[2]);
    let last = Grid::from_text(lines[3]).unwrap();
    assert!(last.is_valid_solution() && Grid::from_text(hard).unwrap().is_kept_by(&last));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("line 3: not unique"), "{stderr}");
    assert!(
        stderr.contains("line 4, column 1: unexpected character 'n'"),
        "{stderr}"
    );
}

#[tokio::test]
async fn several_streams_keep_input_order() {
    // 300 puzzles in messages of 7 dealt over 3 calls: answers arrive
    // interleaved, the output must still follow the input.
    let server = TestServer::start().await;
    let puzzles: Vec<String> = crate::support::data_set("puzzles3_magictour_top1465")
        .into_iter()
        .take(300)
        .collect();
    let out = run(
        vec![
            "solve".into(),
            "--server".into(),
            server.url(),
            "--streams".into(),
            "3".into(),
            "--batch".into(),
            "7".into(),
        ],
        puzzles.join("\n"),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), puzzles.len());
    for (puzzle, line) in puzzles.iter().zip(lines) {
        let solution = Grid::from_text(line).unwrap();
        assert!(solution.is_valid_solution(), "{line}");
        assert!(Grid::from_text(puzzle).unwrap().is_kept_by(&solution));
    }
}

#[test]
fn local_mode_needs_no_server() {
    let input = format!("{CLASSIC}\n{}", SPACED_INPUT);
    let out = sudoku(&["solve", "--local", "--threads", "2"], &input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{CLASSIC_SOLVED}\n\n{}", spaced(CLASSIC_SOLVED))
    );
    let out = sudoku(&["solve", "--local", "--format", "line"], SPACED_INPUT);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{CLASSIC_SOLVED}\n")
    );
}

#[tokio::test]
async fn health_command() {
    let server = TestServer::start().await;
    let out = run(
        vec!["health".into(), "--server".into(), server.url()],
        String::new(),
    )
    .await;
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "SERVING");
    let out = run(
        vec![
            "health".into(),
            "--server".into(),
            "http://127.0.0.1:1".into(),
        ],
        String::new(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("cannot connect")
    );
}
