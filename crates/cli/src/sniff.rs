//! The size an input's first record tells, read before the run chooses its
//! path: 9x9, a square box, or a side that needs `--box`.

use std::io::Read;

use sudoku_core::puzzle::json;
use sudoku_core::puzzle::sized::Shape;
use sudoku_core::puzzle::text::{BOM, cells_of};

/// What the first record of an input without `--box` says about the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sniffed {
    /// 9x9, or not readable here: the 9x9 path reads it (and says why not).
    Nine,
    /// A side that is a perfect square other than 9: its square box.
    Square(Shape),
    /// A side whose box cannot be told from the side alone (6, 12, 7...):
    /// every record is answered with an error that asks for `--box`.
    NeedsBox(usize),
}

/// The side of a grid whose first significant line is `line`, as the first
/// record of a file (see [`side_for`]): `None` for 9x9 and for what is not
/// a grid here.
fn side_of(line: &str) -> Option<usize> {
    let mut values = Vec::new();
    let cells = cells_of(line, 0, 0, &mut values);
    let k = values.len();
    if k == 81 || k == 9 || k < 2 || cells.bad.is_some() {
        return None;
    }
    let n = side_for(&values);
    (n <= sudoku_core::puzzle::sized::MAX_SIDE).then_some(n)
}

/// The side of the grids of a file whose first record starts with a line
/// of `cells`. A line of N*N cells is one record of side N (N >= 4); a row
/// of N cells starts a block of side N (so 4 cells are a 4x4 row, not a
/// 2x2 grid). 16 cells are a 4x4 line unless a value above 4 says they are
/// a 16x16 row.
fn side_for(cells: &[u32]) -> usize {
    let k = cells.len();
    let root = k.isqrt();
    let max = cells.iter().copied().max().unwrap_or(0) as usize;
    if root * root == k && root >= 4 && max <= root {
        root
    } else {
        k
    }
}

/// A line as the sniffer reads it: trimmed, and for the input's first
/// line without the byte-order mark a file may open with (dropped there
/// only, as the readers drop it).
fn text_of(line: &[u8], first: bool) -> String {
    let line = match first {
        true => line.strip_prefix(BOM).unwrap_or(line),
        false => line,
    };
    String::from_utf8_lossy(line).trim().to_string()
}

/// Reads the start of `input` up to its first significant line (one that
/// is not blank or a '#' comment) and says what size the run is, giving
/// back an input that still starts at the first byte. Costs a 9x9 run one
/// read; its reading after that is the same.
pub(super) fn sniff(
    mut input: Box<dyn Read + Send>,
) -> std::io::Result<(Box<dyn Read + Send>, Sniffed)> {
    const CAP: usize = 1 << 20;
    let mut head = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    let mut seen = 0;
    // Where the first significant line starts.
    let mut start = 0;
    let mut ended = false;
    let mut more = |head: &mut Vec<u8>, ended: &mut bool| -> std::io::Result<()> {
        loop {
            match input.read(&mut chunk) {
                Ok(0) => *ended = true,
                Ok(got) => head.extend_from_slice(&chunk[..got]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            return Ok(());
        }
    };
    let line = loop {
        // The first significant line, once it is whole.
        let mut found = None;
        while let Some(nl) = head[seen..].iter().position(|&b| b == b'\n') {
            let l = text_of(&head[seen..seen + nl], seen == 0);
            start = seen;
            seen += nl + 1;
            if !l.is_empty() && !l.starts_with('#') {
                found = Some(l);
                break;
            }
        }
        if found.is_some() {
            break found;
        }
        if head.len() >= CAP {
            break None;
        }
        more(&mut head, &mut ended)?;
        if ended {
            let l = text_of(&head[seen..], seen == 0);
            start = seen;
            break (!l.is_empty() && !l.starts_with('#')).then_some(l);
        }
    };
    let side = match line.as_deref() {
        // A JSON board: its side once it is whole.
        Some(l) if l.starts_with('[') => loop {
            let from = if start == 0 && head.starts_with(BOM) {
                BOM.len()
            } else {
                start
            };
            match json::first_side(&head[from..]) {
                Some(side) => break side,
                None if ended || head.len() >= CAP => break None,
                None => more(&mut head, &mut ended)?,
            }
        },
        l => l.and_then(side_of),
    };
    let sniffed = match side.filter(|&n| n != 9 && n <= sudoku_core::puzzle::sized::MAX_SIDE) {
        None => Sniffed::Nine,
        Some(n) => {
            let root = n.isqrt();
            match Shape::new(root, root) {
                Ok(s) if root * root == n && root >= 2 => Sniffed::Square(s),
                _ => Sniffed::NeedsBox(n),
            }
        }
    };
    Ok((Box::new(std::io::Cursor::new(head).chain(input)), sniffed))
}

/// Why a grid of side `n` needs `--box`, naming the boxes that fit.
pub(super) fn needs_box(n: usize) -> String {
    match Shape::for_side(n) {
        Some(s) if s.box_rows() != s.box_cols() => format!(
            "a {n}x{n} grid needs --box {r}x{c} or --box {c}x{r}",
            r = s.box_rows(),
            c = s.box_cols()
        ),
        _ => format!("a {n}x{n} grid needs --box RxC (a prime side has only 1x{n})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sized_text::tests::records;

    #[test]
    fn the_first_json_board_tells_the_side() {
        let pretty = "[\n  [\"1\", \".\", \".\", \"4\"],\n  [\".\", \".\", \".\", \".\"],\n  [\".\", \"1\", \".\", \".\"],\n  [\"4\", \".\", \".\", \"1\"]\n]";
        let (_, s) = sniff(Box::new(std::io::Cursor::new(format!("# c\n{pretty}\n")))).unwrap();
        assert_eq!(s, Sniffed::Square(Shape::new(2, 2).unwrap()));
        let six = format!("[{}]", ["[0,0,0,0,0,0]"; 6].join(",\n"));
        let (_, s) = sniff(Box::new(std::io::Cursor::new(six))).unwrap();
        assert_eq!(s, Sniffed::NeedsBox(6));
        let nine = format!("[{}]", ["[0,0,0,0,0,0,0,0,0]"; 9].join(","));
        let (_, s) = sniff(Box::new(std::io::Cursor::new(nine))).unwrap();
        assert_eq!(s, Sniffed::Nine);
    }

    #[test]
    fn the_first_record_tells_the_side() {
        let nine =
            "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......";
        assert_eq!(side_of(nine), None);
        assert_eq!(side_of("4 . . | . . . | 8 . 5"), None);
        assert_eq!(side_of(&".".repeat(256)), Some(16));
        assert_eq!(side_of(&".".repeat(625)), Some(25));
        assert_eq!(side_of("1234341221434321"), Some(4));
        // 16 cells with a value above 4: a 16x16 row, not a 4x4 line.
        assert_eq!(side_of("123456789ABCDEFG"), Some(16));
        assert_eq!(side_of("1 . . 4"), Some(4));
        assert_eq!(side_of(&".".repeat(36)), Some(6));
        assert_eq!(side_of("1 2 3 4 5 6"), Some(6));
        // What this reader cannot read is left to the 9x9 one.
        assert_eq!(side_of("not a grid at all"), None);
        let (mut rest, s) = sniff(Box::new(std::io::Cursor::new(
            format!("# c\n\n{}\n", ".".repeat(256)).into_bytes(),
        )))
        .unwrap();
        assert_eq!(s, Sniffed::Square(Shape::new(4, 4).unwrap()));
        let mut all = String::new();
        rest.read_to_string(&mut all).unwrap();
        assert!(
            all.starts_with("# c\n\n...."),
            "the input is given back whole"
        );
        // A record of another size is one error, not the start of a block.
        let rs = records(
            &format!("{}\n{}\n1234341221434321\n", ".".repeat(16), ".".repeat(81)),
            4,
        );
        assert_eq!(rs.len(), 3);
        assert!(
            rs[1]
                .puzzle
                .as_ref()
                .is_err_and(|e| e.starts_with("line 2: found 81 cells")),
            "{:?}",
            rs[1].puzzle
        );
        assert!(rs[2].puzzle.is_ok());
        assert_eq!(needs_box(6), "a 6x6 grid needs --box 2x3 or --box 3x2");
    }
}
