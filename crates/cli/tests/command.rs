//! The `sudoku` command as a user first meets it, with no server: its help,
//! `solve --local` on the three formats people write 9x9 grids in, and
//! other sizes on the same pool of solver threads.
//! Everything it does through a server is tested in tests/it (cli.rs,
//! toolkit.rs), against the real server.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const CLASSIC: &str =
    "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const CLASSIC_SOLVED: &str =
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

/// Runs `sudoku args` with `stdin`; a child that outlives a minute is
/// killed, so a regression fails instead of hanging the suite.
fn sudoku(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sudoku"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sudoku binary starts");
    let mut input = child.stdin.take().expect("a stdin pipe");
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let pid = child.id();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    });
    let out = child.wait_with_output().expect("the sudoku binary ends");
    let _ = done_tx.send(());
    let _ = watchdog.join();
    let _ = writer.join();
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every help screen of the command and its subcommands.
fn help_screens() -> Vec<(String, String)> {
    let mut screens = vec![("sudoku --help".to_string(), sudoku(&["--help"], ""))];
    for sub in [
        "solve", "health", "bench", "validate", "hint", "rate", "generate",
    ] {
        screens.push((format!("sudoku {sub} --help"), sudoku(&[sub, "--help"], "")));
    }
    screens
        .into_iter()
        .map(|(what, out)| {
            assert!(out.status.success(), "{what}: {}", text(&out.stderr));
            (what, text(&out.stdout))
        })
        .collect()
}

#[test]
fn help_opens_with_what_the_command_does() {
    let screens = help_screens();
    let (_, top) = &screens[0];
    assert!(
        top.starts_with("Solve, check, rate and generate Sudoku puzzles"),
        "sudoku --help opens with the command's purpose:\n{top}"
    );
    for sub in [
        "solve", "health", "bench", "validate", "hint", "rate", "generate",
    ] {
        assert!(top.contains(sub), "sudoku --help lists {sub}");
    }
}

/// Help says what a flag does and its default; figures measured on some
/// machine belong in docs/performance.md, not here.
#[test]
fn help_holds_no_measurements() {
    let measurement = |line: &str| {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == ';')
            .collect();
        words.windows(2).any(|w| {
            let number = w[0].trim_end_matches(['x', '%']);
            number.parse::<f64>().is_ok()
                && (w[0].ends_with('x') && w[0].len() > 1
                    || w[0].ends_with('%')
                    || [
                        "ms",
                        "µs",
                        "us",
                        "puzzles/s",
                        "MB",
                        "MiB",
                        "faster",
                        "slower",
                    ]
                    .contains(&w[1]))
        }) || line.contains("/s ")
            || line.contains(" of its speed")
    };
    for (what, screen) in help_screens() {
        for line in screen.lines() {
            assert!(!measurement(line), "{what} quotes a measurement: {line:?}");
        }
    }
}

#[test]
fn solves_the_three_formats_people_write_locally() {
    // The 81-character line.
    let out = sudoku(&["solve", "--local"], &format!("{CLASSIC}\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), CLASSIC_SOLVED);

    // Nine lines of nine space-separated digits, 0 for a blank: answered in
    // the same form.
    let spaced = |grid: &str| -> String {
        grid.as_bytes()
            .chunks(9)
            .map(|row| {
                row.iter()
                    .map(|&b| {
                        if b == b'.' {
                            "0".to_string()
                        } else {
                            (b as char).to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let out = sudoku(&["solve", "--local"], &spaced(CLASSIC));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), spaced(CLASSIC_SOLVED));

    // A board of quoted characters with '.' for a blank.
    let board = |grid: &str| -> String {
        let rows: Vec<String> = grid
            .as_bytes()
            .chunks(9)
            .map(|row| {
                let cells: Vec<String> =
                    row.iter().map(|&b| format!("\"{}\"", b as char)).collect();
                format!("[{}]", cells.join(","))
            })
            .collect();
        format!("[{}]\n", rows.join(","))
    };
    let out = sudoku(&["solve", "--local"], &board(CLASSIC));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), board(CLASSIC_SOLVED));
}

#[test]
fn a_puzzle_with_a_bad_character_says_where() {
    let bad = format!("x{}\n", &CLASSIC[1..]);
    let out = sudoku(&["solve", "--local"], &bad);
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(
        !out.status.success(),
        "a bad puzzle is not a success: {all}"
    );
    assert!(
        all.contains("line 1, column 1") && all.contains("'x'"),
        "the error names the cell and the character: {all}"
    );
}

/// Records of the committed 16x16 set, and a 16x16 grid of one given
/// (many solutions) as record 4 of them.
fn sixteen_input() -> String {
    let set = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/sizes/16x16-hard.txt"
    );
    let mut records: Vec<String> = std::fs::read_to_string(set)
        .expect("the 16x16 set")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .take(16)
        .map(String::from)
        .collect();
    records.insert(3, format!("1{}", ".".repeat(255)));
    records.join("\n") + "\n"
}

/// 16x16 grids go through the pool of `--threads` as 9x9 grids do (work
/// items of `--batch` puzzles shared out): two threads print what one
/// does, in input order, the grid with many solutions marked.
#[test]
fn other_sizes_use_every_local_thread_and_keep_the_order() {
    let input = sixteen_input();
    let run = |threads: &str| {
        let args = [
            "solve",
            "--local",
            "--unique",
            "--batch",
            "2",
            "--threads",
            threads,
        ];
        let out = sudoku(&args, &input);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let one = run("1");
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), input.lines().count(), "{one}");
    assert!(lines[3].ends_with("  # not unique: 2+ solutions"), "{one}");
    assert_eq!(lines.iter().filter(|l| l.contains('#')).count(), 1, "{one}");
    assert_eq!(run("2"), one, "--threads 2 prints what --threads 1 does");
}

/// `--box 3x3` on 9x9 grids is the 9x9 path: the same output as no `--box`.
#[test]
fn box_three_by_three_on_nine_by_nine_prints_what_no_box_does() {
    let input = format!("{CLASSIC}\n55{}\n{CLASSIC}\n", ".".repeat(79));
    let plain = sudoku(&["solve", "--local"], &input);
    let boxed = sudoku(&["solve", "--local", "--box", "3x3"], &input);
    assert_eq!(plain.status.code(), Some(1));
    assert_eq!(boxed.status.code(), plain.status.code());
    assert_eq!(text(&boxed.stdout), text(&plain.stdout));
    assert_eq!(text(&boxed.stderr), text(&plain.stderr));
    assert!(text(&plain.stdout).starts_with(CLASSIC_SOLVED));
}
