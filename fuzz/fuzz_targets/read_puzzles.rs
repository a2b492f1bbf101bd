//! `input::read_puzzles` on arbitrary text: entries in line order, error
//! messages that point at the right spot, and `write_grid` round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sudoku_core::puzzle::json::{Blank, Style};
use sudoku_core::puzzle::text::{Format, read_puzzles, write_grid};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.lines().count();
    let entries = read_puzzles(&text);
    let mut last = 0;
    for e in &entries {
        // Boards of one JSON array can share a line.
        assert!(e.line >= last, "entries out of line order: {entries:?}");
        assert!(e.line <= lines);
        last = e.line;
        match &e.puzzle {
            Ok(g) => {
                assert!(g.0.iter().all(|&d| d <= 9));
                // The raw text of an entry reads back as the same puzzle.
                let again = read_puzzles(&e.raw);
                assert_eq!(again.len(), 1, "raw {:?} gave {again:?}", e.raw);
                assert_eq!(again[0].puzzle.as_ref(), Ok(g));
                assert_eq!(again[0].format, e.format);
                // Writing in every format reads back as the same puzzle
                // and format.
                for f in [
                    e.format,
                    Format::Line,
                    Format::Json(Style { ints: true, flat: false, blank: Blank::Dot }),
                    Format::Json(Style { ints: false, flat: true, blank: Blank::Zero }),
                    Format::grid(true),
                    Format::grid(false),
                ] {
                    let w = write_grid(g, f);
                    let back = read_puzzles(&w);
                    assert_eq!(back.len(), 1, "{f:?}: {w:?} gave {back:?}");
                    assert_eq!(back[0].puzzle.as_ref(), Ok(g), "{f:?}: {w:?}");
                    assert_eq!(back[0].format, f, "{w:?}");
                    assert_eq!(back[0].line, 1);
                }
            }
            Err(msg) => {
                // A grid's fault names the line of the fault, which is the
                // grid's first line or one after it.
                let rest = msg.strip_prefix("line ").unwrap();
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let at: usize = digits.parse().unwrap();
                assert!(at >= e.line, "{msg:?} names a line before the entry's {}", e.line);
                let prefix = format!("line {at}");
                // "line N, column C: unexpected character X; ..." must name the
                // character at column C (1-based, in characters) of line N.
                if let Some(rest) = msg.strip_prefix(&format!("{prefix}, column ")) {
                    let (col, rest) = rest.split_once(": unexpected character ").unwrap();
                    let col: usize = col.parse().unwrap();
                    let line = text.lines().nth(at - 1).unwrap();
                    let at = line.chars().nth(col - 1);
                    let shown = at.map(|c| format!("{c:?}"));
                    assert!(
                        shown.is_some_and(|s| rest.starts_with(&s)),
                        "{msg:?}: column {col} of {line:?} is {at:?}"
                    );
                }
            }
        }
    }
});
