//! Grids of any size as text, beyond what the one reader and writer in
//! `sudoku_core::puzzle::text` do: `--box RxC`, the format `--format` asks
//! a solution in, and a failed record echoed with its error. The size an
//! input's first record tells is `sniff`'s.

use sudoku_core::puzzle::sized::Shape;
use sudoku_core::puzzle::text::Format;

/// A record as given (`raw`, the reader's `Entry::raw`) followed by `mark` ("#
/// error: ..."), as 9x9 records are answered: on the same line after a
/// one-line record, on a line of its own after a block.
pub(super) fn marked(raw: &str, mark: &str) -> String {
    match (raw.is_empty(), raw.contains('\n')) {
        (true, _) => mark.to_string(),
        (false, false) => format!("{raw}  {mark}"),
        (false, true) => format!("{raw}\n{mark}"),
    }
}

/// The format a solution of side `side` is written in, for a record
/// written in `format`: its own (`line` `None`, `--format auto`), one line
/// (`Some(true)`, `--format line`) or a block of spaced rows (`Some(false)`,
/// `--format grid`). Integers above 35x35, where characters stop.
pub(super) fn as_asked(format: Format, line: Option<bool>, side: usize) -> Format {
    let big = side > 35;
    match (line, format) {
        (None, f) => f,
        (Some(true), Format::Json(s)) if s.ints || big => Format::Ints,
        (Some(true), Format::Json(_)) => Format::Line,
        (Some(false), Format::Json(s)) => Format::Grid {
            ints: s.ints || big,
            spaced: true,
        },
        (Some(true), Format::Grid { ints, .. }) if ints || big => Format::Ints,
        (Some(true), Format::Grid { .. }) => Format::Line,
        (Some(false), f @ Format::Grid { .. }) => f,
        (Some(true), f) => f,
        (Some(false), f) => Format::Grid {
            ints: f == Format::Ints || big,
            spaced: true,
        },
    }
}

/// Reads a box shape, "RxC".
pub(super) fn parse_box(text: &str) -> anyhow::Result<Shape> {
    let (r, c) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow::anyhow!("--box {text:?}: expected RxC, as 4x4 or 2x3"))?;
    let (r, c): (usize, usize) = (
        r.trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("--box {text:?}: {r:?} is not a number"))?,
        c.trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("--box {text:?}: {c:?} is not a number"))?,
    );
    Shape::new(r, c).map_err(|e| anyhow::anyhow!("--box {text}: {e}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sudoku_core::puzzle::sized::SizedGrid;
    use sudoku_core::puzzle::text::{Entry, Reader, write_values};

    /// Every record of `text`, for grids of side `n`.
    pub(crate) fn records(text: &str, n: usize) -> Vec<Entry<Vec<u32>>> {
        Reader::of_side(text.as_bytes(), n)
            .collect::<std::io::Result<_>>()
            .unwrap()
    }

    fn write(grid: &SizedGrid, format: Format) -> String {
        write_values(grid.values(), grid.shape().side(), format)
    }

    #[test]
    fn records_of_every_layout_read_and_write_back() {
        let line = "1234341221434321";
        let block = "1 2 | 3 4\n3 4 | 1 2\n----+----\n2 1 | 4 3\n4 3 | 2 1";
        let ints = (1..=16)
            .map(|i| (i % 4 + 1).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let text = format!("# a comment\n{line}\n\n{block}\n{ints}\n");
        let rs = records(&text, 4);
        assert_eq!(rs.len(), 3);
        assert_eq!(rs[0].format, Format::Line);
        assert!(matches!(rs[1].format, Format::Grid { .. }));
        let shape = Shape::new(2, 2).unwrap();
        let g = SizedGrid::from_cells(shape, rs[0].puzzle.as_ref().unwrap()).unwrap();
        assert_eq!(write(&g, rs[0].format), line);
        let b = SizedGrid::from_cells(shape, rs[1].puzzle.as_ref().unwrap()).unwrap();
        assert_eq!(
            write(&b, Format::grid(true)),
            "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1"
        );
        // Commas between digits at a side of 9 or less, as at 9x9.
        assert_eq!(rs[2].format, Format::Line);
        assert_eq!(
            rs[2].puzzle.as_ref().map(|v| v[..4].to_vec()),
            Ok(vec![2, 3, 4, 1])
        );
        // Integers at a side above 9.
        let sixteen = (0..256).map(|i| (i % 17).to_string()).collect::<Vec<_>>();
        let rs = records(&format!("{}\n", sixteen.join(" ")), 16);
        assert_eq!(rs[0].format, Format::Ints);
        assert_eq!(rs[0].puzzle.as_ref().map(Vec::len), Ok(256));
    }

    #[test]
    fn json_boards_of_other_sizes_read_and_write_back() {
        let ints = "[[1,0,0,4],[0,0,0,0],[0,1,0,0],[4,0,0,1]]";
        let pretty = "[\n  [\"1\", \".\", \".\", \"4\"],\n  [\".\", \".\", \".\", \".\"],\n  [\".\", \"1\", \".\", \".\"],\n  [\"4\", \".\", \".\", \"1\"]\n]";
        let text = format!("{ints}\n1..4\n....\n.1..\n4..1\n{pretty}\n[{ints},{ints}]\n");
        let rs = records(&text, 4);
        assert_eq!(rs.len(), 5);
        assert_eq!(
            rs.iter().map(|r| r.line).collect::<Vec<_>>(),
            [1, 2, 6, 12, 12]
        );
        let want = rs[0].puzzle.as_ref().unwrap();
        assert!(rs.iter().all(|r| r.puzzle.as_ref() == Ok(want)));
        assert_eq!(rs[2].raw, pretty);
        let g = SizedGrid::from_cells(Shape::new(2, 2).unwrap(), want).unwrap();
        assert_eq!(write(&g, rs[0].format), ints);
        assert_eq!(
            write(&g, rs[2].format),
            r#"[["1",".",".","4"],[".",".",".","."],[".","1",".","."],["4",".",".","1"]]"#
        );
    }

    #[test]
    fn a_bad_row_of_another_size_is_one_fault_of_its_grid() {
        let rs = records("1 . . 4\n. x . .\n. 1 . .\n4 . . 1\n1234341221434321\n", 4);
        assert_eq!(rs.len(), 2);
        assert_eq!(
            rs[0].puzzle,
            Err("line 2, column 3: unexpected character 'x'; expected '1'-'4', '.' or '0'".into())
        );
        assert!(rs[1].puzzle.is_ok());
        let rs = records(&format!("{}\n", ["1"; 255].join(",")), 16);
        assert_eq!(
            rs[0].puzzle,
            Err("line 1: found 255 cells; expected 256 on one line or 16 per row of a grid".into())
        );
    }
}
