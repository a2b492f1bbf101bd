//! People's words: a server's message, a gRPC code and a puzzle's fault
//! said the same way by every command, whether the answer came from a
//! server or from this process.

use sudoku_core::puzzle::GridError;
use sudoku_core::puzzle::sized::{At, SizedError};

/// `code` as gRPC names it (`RESOURCE_EXHAUSTED`): what `--output jsonl`
/// and the commands' error lines say.
pub(super) fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A call's failure in words: the status message without gRPC's framing.
pub(super) fn status_words(status: &tonic::Status) -> String {
    let msg = for_people(status.message());
    let msg = if msg.is_empty() {
        code_name(status.code()).to_ascii_lowercase()
    } else {
        msg
    };
    match status.code() {
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal => {
            format!("lost the server ({msg})")
        }
        _ => msg,
    }
}

/// A message without the wire field path a server puts first
/// (`items[0].puzzle: `, `puzzle.text: `): people did not write fields.
pub(super) fn without_field_path(msg: &str) -> &str {
    match msg.split_once(": ") {
        Some((head, rest))
            if !head.is_empty()
                && head
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c)) =>
        {
            rest
        }
        _ => msg,
    }
}

/// A server's message in the words this command uses everywhere else: no
/// wire field path, rows, columns and boxes numbered from 1 (the wire
/// counts from 0, and names a cell by its index too), and a clash of givens
/// said as `--local` says it. So `--local` and `--server` give the same
/// words for the same fault.
pub(super) fn for_people(msg: &str) -> String {
    let msg = renumbered(without_field_path(msg).trim());
    // "A and B both hold D in U" is the server's clash; the command says
    // "D is given twice in U: at A and B".
    if let Some((cells, rest)) = msg.split_once(" both hold ")
        && let Some((first, second)) = cells.split_once(" and ")
        && let Some((digit, unit)) = rest.split_once(" in ")
        && !digit.is_empty()
        && digit.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return format!("{digit} is given twice in {unit}: at {first} and {second}");
    }
    msg
}

/// `msg` with each `row N`, `column N` and `box N` counted from 1, and
/// `cell I (row R, column C)` said as `row R+1, column C+1`.
fn renumbered(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len() + 8);
    let mut rest = msg;
    // Inside "cell I (...)": its closing parenthesis is dropped.
    let mut in_cell = false;
    'next: while let Some(c) = rest.chars().next() {
        let at_word = !out.ends_with(|p: char| p.is_ascii_alphanumeric());
        if at_word {
            if let Some(after) = rest.strip_prefix("cell ")
                && let digits = after.bytes().take_while(u8::is_ascii_digit).count()
                && digits > 0
                && let Some(inner) = after[digits..].strip_prefix(" (")
            {
                in_cell = true;
                rest = inner;
                continue;
            }
            for word in ["row ", "column ", "box "] {
                if let Some(after) = rest.strip_prefix(word)
                    && let digits = after.bytes().take_while(u8::is_ascii_digit).count()
                    && (1..=4).contains(&digits)
                    && let Ok(n) = after[..digits].parse::<u32>()
                {
                    out.push_str(word);
                    out.push_str(&(n + 1).to_string());
                    rest = &after[digits..];
                    continue 'next;
                }
            }
        }
        rest = &rest[c.len_utf8()..];
        if c == ')' && in_cell {
            in_cell = false;
            continue;
        }
        out.push(c);
    }
    out
}

/// "1 puzzle", "2 puzzles".
pub(super) fn puzzles(n: impl Into<u64>) -> String {
    match n.into() {
        1 => "1 puzzle".to_string(),
        n => format!("{n} puzzles"),
    }
}

/// A givens fault in words, rows, columns and boxes numbered from 1 as in
/// every other message of the command.
pub(super) fn explain(err: &GridError) -> String {
    use sudoku_core::puzzle::Unit;
    match err {
        GridError::Conflict {
            unit,
            first,
            second,
            digit,
        } => {
            let unit = match unit {
                Unit::Row(i) => format!("row {}", i + 1),
                Unit::Column(i) => format!("column {}", i + 1),
                Unit::Box(i) => format!("box {}", i + 1),
            };
            format!(
                "{digit} is given twice in {unit}: at row {}, column {} and row {}, column {}",
                first.row() + 1,
                first.col() + 1,
                second.row() + 1,
                second.col() + 1
            )
        }
        other => other.to_string(),
    }
}

/// A grid's fault in the command's words: rows, columns and boxes numbered
/// from 1, as in the 9x9 path's messages (the wire's count from 0, as its
/// field indices do).
pub(super) fn explain_sized(err: &SizedError) -> String {
    let at = |a: &At| format!("row {}, column {}", a.row + 1, a.col + 1);
    match err {
        SizedError::Conflict {
            kind,
            unit,
            first,
            second,
            value,
        } => format!(
            "{value} is given twice in {kind} {}: at {} and {}",
            unit + 1,
            at(first),
            at(second)
        ),
        SizedError::BadChar {
            at: a,
            ch,
            expected,
        } => {
            format!(
                "{}: unexpected character {ch:?}; expected {expected}, '.' or '0'",
                at(a)
            )
        }
        SizedError::OutOfRange { at: a, value, max } => {
            format!("{}: value {value} is out of range; expected 0-{max}", at(a))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_are_dropped() {
        assert_eq!(
            without_field_path("items[0].puzzle: cell 0 (row 0, column 0)"),
            "cell 0 (row 0, column 0)"
        );
        assert_eq!(without_field_path("no solution: here"), "no solution: here");
    }

    #[test]
    fn server_words_are_the_commands_words() {
        assert_eq!(
            for_people(
                "items[3].puzzle: cell 0 (row 0, column 0) and cell 8 (row 0, column 8) \
                 both hold 5 in row 0"
            ),
            "5 is given twice in row 1: at row 1, column 1 and row 1, column 9"
        );
        assert_eq!(
            for_people(
                "puzzle.text: cell 13 (row 1, column 4): unexpected character 'x'; \
                 expected '1'-'9', '.' or '0'"
            ),
            "row 2, column 5: unexpected character 'x'; expected '1'-'9', '.' or '0'"
        );
        assert_eq!(
            for_people(
                "current: the current grid changes a given: cell 80 (row 8, column 8) holds a \
                 blank where the puzzle gives 4"
            ),
            "the current grid changes a given: row 9, column 9 holds a blank where the puzzle \
             gives 4"
        );
        assert_eq!(
            for_people(
                "cell 30 (row 3, column 3) and cell 50 (row 5, column 5) both hold 2 in box 4"
            ),
            "2 is given twice in box 5: at row 4, column 4 and row 6, column 6"
        );
        // Nothing else is touched.
        for plain in [
            "expected 81 characters, found 80",
            "the work budget of 100000 nodes ran out",
            "narrow 3 columns",
        ] {
            assert_eq!(for_people(plain), plain);
        }
    }
}
