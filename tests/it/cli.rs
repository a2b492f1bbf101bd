//! The `sudoku` command as a user runs it: the real binary against a real
//! server, on both classic input formats and the 81-character line format.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::{CLASSIC, CLASSIC_SOLVED, SETTLE, TestServer};
use sudoku_core::puzzle::Grid;

fn sudoku(args: &[&str], stdin: &str) -> Output {
    crate::support::sudoku_stdin(args, stdin)
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

/// CLASSIC as a JSON board, cells written by `cell`.
fn json_board(cell: impl Fn(char) -> String) -> Vec<Vec<String>> {
    (0..9)
        .map(|r| CLASSIC[r * 9..r * 9 + 9].chars().map(&cell).collect())
        .collect()
}

/// A board as `json.dumps(board, indent=2)` writes it: a line per cell.
fn indented(board: &[Vec<String>]) -> String {
    let rows: Vec<String> = board
        .iter()
        .map(|r| {
            let cells: Vec<String> = r.iter().map(|c| format!("    {c}")).collect();
            format!("  [\n{}\n  ]", cells.join(",\n"))
        })
        .collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

/// A board on one line, as `json.dumps(board)` writes it.
fn compact(board: &[Vec<String>]) -> String {
    let rows: Vec<String> = board
        .iter()
        .map(|r| format!("[{}]", r.join(", ")))
        .collect();
    format!("[{}]", rows.join(", "))
}

/// Runs `sudoku solve` on `input` locally and through `server`; the two
/// outputs, which must agree.
async fn solved_both_ways(tag: &'static str, server: &TestServer, input: String) -> Output {
    let url = server.url();
    let (local, remote) = tokio::task::spawn_blocking(move || {
        let local = crate::support::sudoku_on_file(tag, &["solve", "--local"], &input);
        let remote = crate::support::sudoku_on_file(tag, &["solve", "--server", &url], &input);
        (local, remote)
    })
    .await
    .unwrap();
    assert_eq!(local.stdout, remote.stdout, "{tag}: {remote:?}");
    assert_eq!(local.status.code(), remote.status.code(), "{tag}");
    local
}

/// A board from `json.dumps(board, indent=2)` gave nine errors, one per
/// row: it is one puzzle, and one answer, however it is laid out; so are
/// several, one after another or in one array.
#[tokio::test]
async fn a_pretty_printed_json_board_is_one_puzzle() {
    let server = TestServer::start().await;
    let strings = json_board(|c| format!("\"{c}\""));
    let solved: Vec<String> = (0..9)
        .map(|r| {
            let cells: Vec<String> = CLASSIC_SOLVED[r * 9..r * 9 + 9]
                .chars()
                .map(|c| format!("\"{c}\""))
                .collect();
            format!("[{}]", cells.join(","))
        })
        .collect();
    let solved = format!("[{}]", solved.join(","));
    let one = compact(&strings);
    let input = format!(
        "{}{}[{one}, {one}]\n{CLASSIC}\n",
        indented(&strings),
        indented(&strings)
    );
    let out = solved_both_ways("json-pretty", &server, input).await;
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let answers: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(answers.len(), 5, "{stdout}");
    assert!(answers[..4].iter().all(|a| *a == solved), "{stdout}");
    assert_eq!(answers[4], CLASSIC_SOLVED);
}

/// `[[5,3,0,...]]` came back as `[["5","3",...]]`: an integer board's
/// answer is integers, and a string board's strings, each with its own
/// blank when it is echoed.
#[tokio::test]
async fn an_integer_board_comes_back_as_integers() {
    let server = TestServer::start().await;
    let ints = json_board(|c| if c == '.' { "0".into() } else { c.into() });
    let zeros = json_board(|c| format!("\"{}\"", if c == '.' { '0' } else { c }));
    // A clash of givens is echoed as given; a puzzle without a solution
    // is written back in its board's style, blanks as "0".
    let mut clash = ints.clone();
    clash[0][2] = clash[0][0].clone();
    let clash = compact(&clash);
    let none = format!("12345678.........9{}", ".".repeat(63));
    let none: Vec<Vec<String>> = (0..9)
        .map(|r| {
            none[r * 9..r * 9 + 9]
                .chars()
                .map(|c| format!("\"{}\"", if c == '.' { '0' } else { c }))
                .collect()
        })
        .collect();
    let input = format!(
        "{}\n{}{clash}\n{}\n",
        compact(&ints),
        indented(&zeros),
        compact(&none)
    );
    let out = solved_both_ways("json-ints", &server, input).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let blocks: Vec<&str> = stdout.split("\n\n").collect();
    assert_eq!(blocks.len(), 4, "{stdout}");
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    assert!(
        blocks[0].starts_with("[[5,3,4,6,7,8,9,1,2],[6,7,2"),
        "{stdout}"
    );
    assert_eq!(digits(blocks[0]), CLASSIC_SOLVED);
    assert!(blocks[1].starts_with(r#"[["5","3","4","6""#), "{stdout}");
    assert_eq!(digits(blocks[1]), CLASSIC_SOLVED);
    assert!(
        blocks[2].starts_with(&format!("{clash}\n# error: 5 is given twice")),
        "{stdout}"
    );
    let none = compact(&none).replace(' ', "");
    assert!(
        blocks[3].starts_with(&format!("{none}\n# error:")),
        "{stdout}"
    );
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

#[tokio::test]
async fn a_server_that_takes_fewer_items_a_message_gets_them_in_parts() {
    // The default --batch is above this server's --max-batch-items: the
    // refused stream's puzzles and every message after go in parts it
    // takes, each answered once, in input order.
    let server = TestServer::start_with(|c| c.max_batch_items = 100, |s| s).await;
    let puzzles: Vec<String> = crate::support::data_set("puzzles2_17_clue")
        .into_iter()
        .take(3000)
        .collect();
    let out = run(
        vec!["solve".into(), "--server".into(), server.url()],
        puzzles.join("\n"),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("the server takes at most 100 puzzles a message")
            .count(),
        1,
        "{stderr}"
    );
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

/// Runs `sudoku solve ARGS` with piped stdin and stdout: writes ONE puzzle,
/// reads its answer, and only then closes stdin. An answer that waited for
/// the end of the input would hang here instead.
fn answers_before_the_input_ends(args: &[&str], puzzle: &str, solved: &str) {
    use std::io::BufReader;
    let mut child = crate::support::spawn_sudoku(args, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{puzzle}").unwrap();
    stdin.flush().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (answer, _stdout) = crate::support::tools::read_line_within(stdout, SETTLE);
    assert_eq!(answer.trim_end(), solved);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn local_answers_the_first_puzzle_before_the_input_ends() {
    answers_before_the_input_ends(&["solve", "--local"], CLASSIC, CLASSIC_SOLVED);
}

/// A 4x4 puzzle (one blank) and its solution, for the other sizes' reader.
const FOUR: (&str, &str) = ("1.34341221434321", "1234341221434321");

#[test]
fn other_sizes_answer_the_first_puzzle_before_the_input_ends() {
    answers_before_the_input_ends(&["solve", "--local", "--box", "2x2"], FOUR.0, FOUR.1);
    // Without --box, the size comes from the first record.
    answers_before_the_input_ends(&["solve", "--local"], FOUR.0, FOUR.1);
}

#[tokio::test]
async fn server_answers_the_first_puzzle_before_the_input_ends() {
    let server = TestServer::start().await;
    let target = server.target();
    tokio::task::spawn_blocking(move || {
        answers_before_the_input_ends(&["solve", "--server", &target], CLASSIC, CLASSIC_SOLVED);
        answers_before_the_input_ends(
            &["solve", "--server", &target, "--box", "2x2"],
            FOUR.0,
            FOUR.1,
        );
    })
    .await
    .unwrap();
}

/// Peak RSS of `sudoku solve ARGS` fed `count` puzzles of 17-clue set
/// through a pipe, in kB, read from /proc/PID/status just before the
/// process is reaped. Checks one answer line (or none with -q) per puzzle.
fn peak_rss_kb(args: &[&str], count: usize, as_grid: bool) -> u64 {
    use std::io::Read;
    let puzzles = crate::support::data_set("puzzles2_17_clue");
    let mut child = Command::new(crate::support::sudoku_cli())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the sudoku binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(&mut stdin);
        for p in puzzles.iter().cycle().take(count) {
            if as_grid {
                out.write_all(spaced(p).as_bytes())?;
                out.write_all(b"\n")?;
            } else {
                writeln!(out, "{p}")?;
            }
        }
        out.flush()
    });
    // VmHWM is the peak so far; sampled until the process is gone, the
    // last figure is the peak of the whole run.
    let pid = child.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0u64;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
            else {
                break; // a zombie: its memory is gone
            };
            peak = peak.max(kb);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        peak
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut lines = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
    }
    feeder.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success());
    let hwm = sampler.join().unwrap();
    if !args.contains(&"-q") {
        let per = if as_grid { 10 } else { 1 };
        assert_eq!(lines, count * per - usize::from(as_grid));
    }
    hwm
}

#[test]
fn local_memory_stays_flat() {
    let lines = peak_rss_kb(&["solve", "--local", "-q"], 300_000, false);
    eprintln!("--local -q, 300000 lines: VmHWM {lines} kB");
    assert!(lines > 0 && lines < 64 * 1024, "{lines} kB");
    let grids = peak_rss_kb(&["solve", "--local", "--threads", "2"], 30_000, true);
    eprintln!("--local, 30000 9-line grids: VmHWM {grids} kB");
    assert!(grids > 0 && grids < 64 * 1024, "{grids} kB");
}

#[tokio::test]
async fn server_memory_stays_flat() {
    let server = TestServer::start().await;
    let target = server.target();
    let kb = tokio::task::spawn_blocking(move || {
        peak_rss_kb(&["solve", "--server", &target, "-q"], 300_000, false)
    })
    .await
    .unwrap();
    eprintln!("--server -q, 300000 lines: VmHWM {kb} kB");
    assert!(kb > 0 && kb < 64 * 1024, "{kb} kB");
}

#[test]
fn empty_and_binary_input() {
    // A byte-order mark before the first line (as some editors save text)
    // is not part of the puzzle.
    let out = sudoku(&["solve", "--local"], &format!("\u{feff}{CLASSIC}\n"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{CLASSIC_SOLVED}\n")
    );
    for args in [
        &["solve", "--local"][..],
        &["solve", "--local", "--box", "2x2"],
    ] {
        let out = sudoku(args, "");
        assert!(out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            "0 puzzles",
            "{args:?}"
        );
    }
    let out = sudoku(&["solve", "--local"], "\x7fELF\x02\x01\x01\0\0\0");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the input is not text"),
        "{out:?}"
    );
}

#[tokio::test]
async fn empty_input_through_a_server_is_zero_puzzles() {
    let server = TestServer::start().await;
    let out = run(
        vec!["solve".into(), "--server".into(), server.url()],
        String::new(),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "0 puzzles");
    let out = run(
        vec!["solve".into(), "-q".into(), "--server".into(), server.url()],
        String::new(),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
}

#[test]
fn a_bad_row_in_a_grid_is_one_error_and_the_stream_goes_on() {
    let bad = SPACED_INPUT.replace("4 0 0 8 0 3", "4 0 0 8 x 3");
    let input = format!("{bad}\n{SPACED_INPUT}\n{CLASSIC}\n");
    let out = sudoku(&["solve", "--local"], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("line ")).collect();
    assert_eq!(
        errors,
        ["line 5, column 9: unexpected character 'x'; expected '1'-'9', '.' or '0'"]
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.ends_with(&format!("{}{CLASSIC_SOLVED}\n", spaced(CLASSIC_SOLVED))),
        "{stdout}"
    );
    // A row spoilt by a note, or by cells past the ninth, is one error
    // too, not a grid split in three; the output stays one record per
    // record, in JSON as in text.
    for spoilt in [
        "4 0 0 8 0 3 0 0 1   <- check this",
        "4 0 0 8 0 3 0 0 1 0 0 0 0 0 0 0 0 0",
    ] {
        let bad = SPACED_INPUT.replace("4 0 0 8 0 3 0 0 1", spoilt);
        let input = format!("{bad}\n{SPACED_INPUT}\n{CLASSIC}\n");
        let out = sudoku(&["solve", "--local", "--output", "jsonl"], &input);
        assert_eq!(out.status.code(), Some(1), "{spoilt}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let objects: Vec<serde_json::Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(objects.len(), 3, "{spoilt}: {stdout}");
        assert_eq!(objects[0]["line"], 1);
        assert_eq!(objects[0]["outcome"], "invalid", "{spoilt}: {stdout}");
        assert!(
            objects[0]["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("line 5"),
            "{spoilt}: {stdout}"
        );
        assert_eq!(objects[1]["outcome"], "solved", "{spoilt}: {stdout}");
        assert_eq!(objects[2]["outcome"], "solved", "{spoilt}: {stdout}");
    }
}

#[tokio::test]
async fn host_port_without_scheme_and_a_refused_connection() {
    let server = TestServer::start().await;
    let out = run(
        vec!["solve".into(), "--server".into(), server.target()],
        format!("{CLASSIC}\n"),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let out = run(
        vec!["solve".into(), "--server".into(), "127.0.0.1:1".into()],
        format!("{CLASSIC}\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("refused").count(), 1, "{stderr}");
    assert!(stderr.contains("--local"), "{stderr}");
    // Several servers, none up: said at once, with the same advice.
    let out = run(
        vec![
            "solve".into(),
            "--server".into(),
            "127.0.0.1:1,127.0.0.1:2".into(),
        ],
        format!("{CLASSIC}\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cannot connect to any of the 2 servers")
            && stderr.contains("http://127.0.0.1:1: connection refused")
            && stderr.contains("http://127.0.0.1:2: connection refused")
            && stderr.contains("--local"),
        "{stderr}"
    );
    // One of two down: said, and the other answers everything.
    let out = run(
        vec![
            "solve".into(),
            "--server".into(),
            "127.0.0.1:1".into(),
            "--server".into(),
            server.target(),
        ],
        format!("{CLASSIC}\n{CLASSIC}\n"),
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cannot connect to http://127.0.0.1:1: connection refused; going on"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{CLASSIC_SOLVED}\n{CLASSIC_SOLVED}\n")
    );
}

#[tokio::test]
async fn local_and_server_say_the_same_about_bad_givens() {
    let server = TestServer::start().await;
    let clash = format!("55{}", ".".repeat(79));
    let local = run(vec!["solve".into(), "--local".into()], format!("{clash}\n")).await;
    let remote = run(
        vec!["solve".into(), "--server".into(), server.url()],
        format!("{clash}\n"),
    )
    .await;
    assert_eq!(local.stdout, remote.stdout);
    assert_eq!(local.stderr, remote.stderr);
    let stderr = String::from_utf8(local.stderr).unwrap();
    assert!(
        stderr
            .contains("line 1: 5 is given twice in row 1: at row 1, column 1 and row 1, column 2"),
        "{stderr}"
    );
    assert!(!stderr.contains("items["), "{stderr}");
}

#[tokio::test]
async fn a_server_that_dies_mid_run_is_exit_2_with_the_count_answered() {
    server_dies_mid_run(&[], CLASSIC, CLASSIC_SOLVED).await;
    // Other sizes go one unary call a puzzle, and end the same way.
    server_dies_mid_run(&["--box", "2x2"], "12..34..........", "1234341221434321").await;
}

async fn server_dies_mid_run(args: &[&str], puzzle: &str, solved: &str) {
    use std::io::{BufReader, Read};
    let server = crate::support::BinaryServer::spawn(&[]).await;
    let url = server.url();
    let mut child = Command::new(crate::support::sudoku_cli())
        .args(["solve", "--server", &url])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sudoku binary runs");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{puzzle}").unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (answer, _stdout) = crate::support::tools::read_line_within(stdout, SETTLE);
    assert_eq!(answer.trim_end(), solved, "{args:?}");
    let killed = Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Input is still open: the client must notice the loss by itself.
    let _ = writeln!(stdin, "{puzzle}");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(15),
            "the client did not notice the server was gone"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    drop(stdin);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains("lost the server"), "{args:?}: {stderr}");
    assert!(stderr.contains("1 puzzle answered"), "{args:?}: {stderr}");
}

/// Runs `sudoku solve ARGS` with `feed` writing its stdin from a thread;
/// returns the exit code, stdout, stderr and the peak RSS (VmHWM) in kB,
/// sampled from /proc/PID/status until the process is gone.
fn fed(
    args: &[&str],
    feed: impl FnOnce(&mut std::process::ChildStdin) -> std::io::Result<()> + Send + 'static,
) -> (Option<i32>, String, String, u64) {
    use std::io::Read;
    let mut child = crate::support::spawn_sudoku(args, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || feed(&mut stdin));
    let pid = child.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0u64;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
            else {
                break; // a zombie: its memory is gone
            };
            peak = peak.max(kb);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        peak
    });
    let mut err = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    feeder
        .join()
        .unwrap()
        .expect("the child reads all its input");
    let status = child.wait().unwrap();
    (
        status.code(),
        stdout,
        errors.join().unwrap(),
        sampler.join().unwrap(),
    )
}

/// One line of 2 GiB without a line break, then a puzzle: the long line is
/// one error naming line 1, the puzzle after it is answered on line 2,
/// the exit is 1 (a puzzle failed), and memory stays bounded, since the
/// reader keeps at most 64 KiB of a line.
fn a_2_gib_line(args: &[&str]) -> u64 {
    const LEN: usize = 2 << 30;
    let started = std::time::Instant::now();
    let (code, stdout, stderr, kb) = fed(args, |stdin| {
        let chunk = vec![b'7'; 1 << 20];
        for _ in 0..LEN / chunk.len() {
            stdin.write_all(&chunk)?;
        }
        writeln!(stdin)?;
        writeln!(stdin, "{CLASSIC}")
    });
    eprintln!(
        "{args:?}, a 2 GiB line then a puzzle: VmHWM {kb} kB, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr.lines().next(),
        Some(
            format!(
                "line 1: too long ({LEN} bytes without a line break); a puzzle takes 81 characters"
            )
            .as_str()
        ),
        "{stderr}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout:.300}");
    assert!(
        lines[0].starts_with(&"7".repeat(81)) && lines[0].contains("# error: line 1: too long"),
        "{:.300}",
        lines[0]
    );
    assert_eq!(lines[1], CLASSIC_SOLVED);
    assert!(kb > 0 && kb < 64 * 1024, "peak RSS {kb} kB");
    kb
}

#[test]
fn a_2_gib_line_is_one_error_in_bounded_memory_locally() {
    a_2_gib_line(&["solve", "--local"]);
}

#[tokio::test]
async fn a_2_gib_line_is_one_error_in_bounded_memory_through_a_server() {
    let server = TestServer::start().await;
    let target = server.target();
    tokio::task::spawn_blocking(move || a_2_gib_line(&["solve", "--server", &target]))
        .await
        .unwrap();
}

/// The reader at other sizes: a 4x4 puzzle, a line of 256 MiB, the puzzle
/// again. The long line is one error naming line 2 (its start echoed, as
/// at 9x9), both puzzles are
/// answered in their places, and memory stays bounded (at most 1 MiB of a
/// line is kept).
#[test]
fn a_long_line_of_another_size_is_one_error_in_bounded_memory() {
    const LEN: usize = 256 << 20;
    let (code, stdout, stderr, kb) = fed(&["solve", "--local", "--box", "2x2"], |stdin| {
        writeln!(stdin, "{}", FOUR.0)?;
        let chunk = vec![b'.'; 1 << 20];
        for _ in 0..LEN / chunk.len() {
            stdin.write_all(&chunk)?;
        }
        writeln!(stdin)?;
        writeln!(stdin, "{}", FOUR.0)
    });
    assert_eq!(code, Some(1), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout:.300}");
    assert_eq!(lines[0], FOUR.1);
    assert_eq!(
        lines[1],
        format!(
            "{}...  # error: line 2: too long ({LEN} bytes without a line break); \
             a puzzle takes 16 characters",
            ".".repeat(16)
        )
    );
    assert_eq!(lines[2], FOUR.1);
    assert!(kb > 0 && kb < 64 * 1024, "peak RSS {kb} kB");
}

/// What a record should come to: its first line, its outcome and, for a
/// failure, its message.
type Expected = (usize, &'static str, Option<String>);

/// A mixed input for `--output jsonl`, one record per format the reader
/// takes (81-character lines, 9-line grids with and without spaces,
/// bracketed boards), each with a malformed record mid-stream, plus a
/// puzzle without a solution, one with many, and one whose givens clash.
/// Returns the input and, per record, its first line and what it should
/// come to: an outcome, and for a failure the code and message.
fn mixed_records() -> (String, Vec<Expected>) {
    let no_solution = format!("12345678.........9{}", ".".repeat(63));
    let compact: String = (0..9)
        .map(|r| format!("{}\n", &CLASSIC[r * 9..r * 9 + 9]))
        .collect();
    let bad_compact = compact.replacen("..195", "..1x5", 1);
    let bad_spaced = SPACED_INPUT.replace("4 0 0 8 0 3", "4 0 0 8 x 3");
    let bracketed = bracketed_input();
    let bad_bracketed = bracketed.replacen("\"7\"", "\"x\"", 1);
    let expected_char = "expected '1'-'9', '.' or '0'";
    // (record text, outcome, error message); blank lines separate grids.
    let records: Vec<(String, &str, Option<String>)> = vec![
        (format!("{CLASSIC}\n"), "solved", None),
        (format!("{no_solution}\n"), "no_solution", None),
        (format!("{}\n", ".".repeat(81)), "multiple_solutions", None),
        (
            "not a puzzle\n".into(),
            "invalid",
            Some(format!(
                "line 4, column 1: unexpected character 'n'; {expected_char}"
            )),
        ),
        (
            format!("55{}\n", ".".repeat(79)),
            "invalid",
            Some("5 is given twice in row 1: at row 1, column 1 and row 1, column 2".into()),
        ),
        (format!("{SPACED_INPUT}\n"), "solved", None),
        (
            format!("{bad_spaced}\n"),
            "invalid",
            Some(format!(
                "line 20, column 9: unexpected character 'x'; {expected_char}"
            )),
        ),
        (format!("{compact}\n"), "solved", None),
        (
            format!("{bad_compact}\n"),
            "invalid",
            Some(format!(
                "line 37, column 5: unexpected character 'x'; {expected_char}"
            )),
        ),
        (bracketed, "solved", None),
        (
            bad_bracketed,
            "invalid",
            Some("line 47: row 1, column 5: \"x\" is not a value of a 9x9 board".into()),
        ),
        (format!("{CLASSIC}\n"), "solved", None),
    ];
    let mut input = String::new();
    let mut expected = Vec::new();
    let mut line = 1;
    for (text, outcome, error) in records {
        expected.push((line, outcome, error));
        line += text.lines().count();
        input.push_str(&text);
    }
    (input, expected)
}

/// Checks one run's JSON lines against `expected`; returns what must be
/// the same whatever solved them (no stats: timings differ).
fn check_jsonl(what: &str, stdout: &str, input: &str, expected: &[Expected]) -> Vec<String> {
    let objects: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e} in {l}")))
        .collect();
    assert_eq!(
        objects.len(),
        expected.len(),
        "{what}: one object per record\n{stdout}"
    );
    let lines: Vec<&str> = input.lines().collect();
    let mut same = Vec::new();
    for (o, (line, outcome, error)) in objects.iter().zip(expected) {
        let at = format!("{what}, line {line}: {o}");
        assert_eq!(o["line"].as_u64(), Some(*line as u64), "{at}");
        assert_eq!(o["outcome"].as_str(), Some(*outcome), "{at}");
        for stat in ["guesses", "nodes", "solve_time_us"] {
            assert!(o["stats"][stat].is_u64(), "{at}: stats.{stat}");
        }
        let count = o["solution_count"].as_u64();
        match *outcome {
            "solved" | "multiple_solutions" => {
                let solution = o["solution"].as_str().unwrap_or_else(|| panic!("{at}"));
                let s = Grid::from_text(solution).unwrap();
                assert!(s.is_valid_solution(), "{at}");
                // The givens: the record's text with its blanks, read as
                // the CLI read it (the line alone, or the 81 digits).
                let digits: String = lines[line - 1..]
                    .iter()
                    .take(if *outcome == "multiple_solutions" {
                        1
                    } else {
                        9
                    })
                    .flat_map(|l| l.chars())
                    .filter(|c| c.is_ascii_digit() || *c == '.')
                    .take(81)
                    .collect();
                if digits.len() == 81 {
                    assert!(Grid::from_text(&digits).unwrap().is_kept_by(&s), "{at}");
                }
                let want = if *outcome == "solved" { 1 } else { 2 };
                assert_eq!(count, Some(want), "{at}");
                assert!(o.get("error").is_none(), "{at}");
            }
            "no_solution" => {
                assert!(o.get("solution").is_none(), "{at}");
                assert_eq!(count, Some(0), "{at}");
                assert!(o.get("error").is_none(), "{at}");
            }
            _ => {
                assert!(o.get("solution").is_none(), "{at}");
                assert_eq!(
                    o["error"]["code"].as_str(),
                    Some("INVALID_ARGUMENT"),
                    "{at}"
                );
                assert_eq!(o["error"]["message"].as_str(), error.as_deref(), "{at}");
            }
        }
        same.push(format!(
            "{} {} {} {} {}",
            o["line"], o["outcome"], o["solution"], o["solution_count"], o["error"]
        ));
    }
    same
}

#[tokio::test]
async fn jsonl_is_one_object_per_record_the_same_locally_and_through_a_server() {
    let server = TestServer::start().await;
    let (input, expected) = mixed_records();
    let local = run(
        vec![
            "solve".into(),
            "--local".into(),
            "--unique".into(),
            "--output".into(),
            "jsonl".into(),
        ],
        input.clone(),
    )
    .await;
    let remote = run(
        vec![
            "solve".into(),
            "--server".into(),
            server.url(),
            "--unique".into(),
            "--output".into(),
            "jsonl".into(),
            // Records spread over several messages and streams.
            "--batch".into(),
            "2".into(),
            "--streams".into(),
            "3".into(),
        ],
        input.clone(),
    )
    .await;
    for out in [&local, &remote] {
        assert_eq!(
            out.status.code(),
            Some(1),
            "a failed record is exit 1: {out:?}"
        );
    }
    let a = check_jsonl(
        "--local",
        &String::from_utf8_lossy(&local.stdout),
        &input,
        &expected,
    );
    let b = check_jsonl(
        "--server",
        &String::from_utf8_lossy(&remote.stdout),
        &input,
        &expected,
    );
    assert_eq!(a, b, "--local and --server give the same answers");
    assert_eq!(local.stderr, remote.stderr, "and say the same on stderr");
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let input: String = crate::support::data_set("puzzles3_magictour_top1465")
        .iter()
        .take(300)
        .map(|p| format!("{p}\n"))
        .collect();
    let out = sudoku(&["solve", "--local"], &input);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 300);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "nothing on a pipe"
    );
}

/// `sudoku solve ARGS FILE >/dev/null` with stderr on a terminal, through
/// util-linux `script`; what the terminal showed. None without `script`.
fn on_a_terminal(args: &str) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let data = crate::support::repo().join("data/puzzles2_17_clue");
    let command = format!(
        "'{}' solve {args} '{}' >/dev/null",
        crate::support::sudoku_cli().display(),
        data.display()
    );
    let out = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        // As a terminal sets it; with no TERM (CI) or TERM=dumb, indicatif
        // draws nothing.
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    assert!(out.status.success(), "{command}: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn progress_line_on_a_terminal_and_not_with_quiet() {
    let test = "progress_line_on_a_terminal_and_not_with_quiet";
    let Some(shown) = on_a_terminal("--local") else {
        return crate::support::skip(test, "no util-linux script in /usr/bin or /bin");
    };
    // The final figures stay on the terminal: all 49,158 puzzles.
    let last = shown
        .split(['\r', '\n'])
        .rfind(|l| l.contains("puzzles"))
        .unwrap_or_else(|| panic!("no progress line in {shown:?}"));
    assert!(
        last.contains("49,158 puzzles") && last.contains("/s") && last.contains("0 failed"),
        "{last:?}"
    );
    let quiet = on_a_terminal("--local -q").expect("script ran before");
    assert!(!quiet.contains("puzzles"), "-q: {quiet:?}");
}

/// Runs `sudoku` with `args` and stdin from `stdin`, failing the test when
/// it takes over a minute (a stuck run is killed, not waited for).
async fn run_within_a_minute(args: Vec<String>, stdin: Stdio) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut child = crate::support::spawn_sudoku(&args, stdin);
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                panic!("sudoku {args:?} was still running after a minute");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// A regular file's first message is read on the command's own thread
/// before the writer starts, so that it reaches the server sooner. Records
/// that take every place of the reorder window first (bad lines, with
/// --batch 1 --window 2) must not stop it there: it hands the reading on
/// to its thread, and every record is answered once, in order, whether
/// the file is named or redirected to stdin.
#[tokio::test]
async fn a_file_whose_first_records_fill_the_window_is_answered_whole() {
    let server = TestServer::start().await;
    let path =
        std::env::temp_dir().join(format!("sudoku-first-records-{}.txt", std::process::id()));
    let input = format!("bad line one\nbad line two\n{CLASSIC}\nbad line four\n{CLASSIC}\n");
    std::fs::write(&path, &input).unwrap();
    let args = |file: Option<&std::path::Path>| -> Vec<String> {
        let mut a: Vec<String> = [
            "solve",
            "--server",
            &server.url(),
            "--batch",
            "1",
            "--window",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(file.map(|f| f.display().to_string()));
        a
    };
    let named = run_within_a_minute(args(Some(&path)), Stdio::null()).await;
    let redirected =
        run_within_a_minute(args(None), std::fs::File::open(&path).unwrap().into()).await;
    std::fs::remove_file(&path).unwrap();
    for out in [named, redirected] {
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        for (i, bad) in [
            (0, "bad line one"),
            (1, "bad line two"),
            (3, "bad line four"),
        ] {
            assert!(
                lines[i].starts_with(bad) && lines[i].contains("# error"),
                "{text}"
            );
        }
        assert_eq!(lines[2], CLASSIC_SOLVED);
        assert_eq!(lines[4], CLASSIC_SOLVED);
    }
}

/// `generate --symmetry rotate180` gave `"minimal": false` while the help
/// promised "unique, minimal puzzles". The help now promises what symmetry
/// keeps, and every puzzle keeps it: unique, symmetric, and no symmetric
/// pair of clues can go; `"minimal"` says whether a single clue can.
#[tokio::test]
async fn generate_with_symmetry_keeps_the_promise_its_help_makes() {
    let help = run_within_a_minute(vec!["generate".into(), "--help".into()], Stdio::null()).await;
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("minimal for its symmetry"), "{help}");
    let top = run_within_a_minute(vec!["--help".into()], Stdio::null()).await;
    let top = String::from_utf8(top.stdout).unwrap();
    assert!(top.contains("minimal for their"), "{top}");
    assert!(!top.contains("unique, minimal puzzles"), "{top}");
    let args = "generate --local --threads 1 -n 6 --seed 7 --symmetry rotate180 --output jsonl";
    let out = run_within_a_minute(args.split(' ').map(String::from).collect(), Stdio::null()).await;
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 6, "{stdout}");
    for l in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let puzzle = Grid::from_text(v["puzzle"].as_str().unwrap()).unwrap();
        assert!(sudoku_core::solver::is_unique(&puzzle), "{l}");
        let clues: Vec<usize> = (0..81).filter(|&i| puzzle.0[i] != 0).collect();
        for &i in &clues {
            assert_ne!(puzzle.0[80 - i], 0, "clue {i} without its mirror: {l}");
            let mut fewer = puzzle;
            fewer.0[i] = 0;
            fewer.0[80 - i] = 0;
            assert!(
                !sudoku_core::solver::is_unique(&fewer),
                "pair {i} can go: {l}"
            );
        }
        let single = clues.iter().any(|&i| {
            let mut fewer = puzzle;
            fewer.0[i] = 0;
            sudoku_core::solver::is_unique(&fewer)
        });
        assert_eq!(v["minimal"].as_bool(), Some(!single), "{l}");
    }
}
