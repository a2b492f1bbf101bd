//! People's words: a server's message, a gRPC code and a puzzle's fault
//! said the same way by every command, whether the answer came from a
//! server or from this process.

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
/// wire field path. The rest is already the command's words: the server
/// and `--local` say a puzzle's fault with the same error type, rows,
/// columns and boxes counted from 1.
pub(super) fn for_people(msg: &str) -> String {
    without_field_path(msg.trim()).to_string()
}

/// "1 puzzle", "2 puzzles".
pub(super) fn puzzles(n: impl Into<u64>) -> String {
    match n.into() {
        1 => "1 puzzle".to_string(),
        n => format!("{n} puzzles"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_are_dropped() {
        assert_eq!(
            without_field_path("items[0].puzzle: row 1, column 1: value 12"),
            "row 1, column 1: value 12"
        );
        assert_eq!(without_field_path("no solution: here"), "no solution: here");
    }

    #[test]
    fn server_words_are_the_commands_words() {
        use sudoku_core::puzzle::Grid;
        // The server sends "field: error"; `--local` says the error itself.
        let mut clash = ".".repeat(81);
        clash.replace_range(0..1, "5");
        clash.replace_range(8..9, "5");
        let local = Grid::from_text_checked(&clash).unwrap_err().to_string();
        assert_eq!(
            local,
            "5 is given twice in row 1: at row 1, column 1 and row 1, column 9"
        );
        assert_eq!(for_people(&format!("items[3].puzzle: {local}")), local);
        assert_eq!(
            for_people(
                "puzzle.text: row 2, column 5: unexpected character 'x'; expected '1'-'9', \
                 '.' or '0'"
            ),
            "row 2, column 5: unexpected character 'x'; expected '1'-'9', '.' or '0'"
        );
        for plain in [
            "expected 81 characters for 9x9 (3x3 boxes), found 80",
            "the work budget of 100000 nodes ran out",
            "narrow 3 columns",
        ] {
            assert_eq!(for_people(plain), plain);
        }
    }
}
