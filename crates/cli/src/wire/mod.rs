//! The codec of `sudoku solve --server`: SolveBatch messages written and
//! read by hand, so a 9x9 puzzle costs no allocation on its way out or back
//! (prost's generated types give each puzzle a `String` going out, and each
//! answer a `String` and a decoded tree coming back). A grid of another
//! size goes out as prost writes it, its cells with its box, and comes
//! back through prost.
//!
//! The bytes are the protobuf encoding of `SolveBatchRequest` and
//! `SolveBatchResponse`, field for field (the tests check both against
//! prost). Reading takes the common answer, a solution in text with its
//! stats, on a fast path; any other result (an error, cells, a field this
//! client does not know) is decoded by prost and read as before.

use prost::Message;
use prost::bytes::{Buf, BufMut};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::answer::{Answer, Done, Outcome, Puzzle};
use super::words::{code_name, for_people};
use sudoku_core::puzzle::{CELLS, Grid};
use sudoku_grpc::pb;
use sudoku_grpc::service::{AnyGrid, read_grid};

/// One puzzle to send: the id its answer comes back with, and its grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    pub(super) id: u64,
    pub(super) grid: Puzzle,
}

/// One request message of a SolveBatch stream.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Request {
    pub(super) items: Vec<Item>,
    pub(super) options: Option<pb::SolveOptions>,
}

/// The answers of one response message, in its order (with no `Meta`:
/// the writer has it from when the puzzle was sent).
pub(super) type Answers = Vec<Answer>;

/// Wire types of protobuf: a varint, and a length-delimited field.
const VARINT: u8 = 0;
const LEN: u8 = 2;

const fn key(field: u8, wire: u8) -> u8 {
    (field << 3) | wire
}

fn varint_len(v: u64) -> usize {
    // 7 bits a byte; 0 still takes one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn put_varint(dst: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        dst.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    dst.put_u8(v as u8);
}

/// `Grid { text }` of 81 characters, as its length-delimited body.
const GRID_BODY: usize = 2 + CELLS;

/// Writes `request` as a `SolveBatchRequest`.
pub(super) fn encode_request(request: &Request, dst: &mut impl BufMut) {
    let mut text = [0u8; CELLS];
    for item in &request.items {
        let grid = match &item.grid {
            Puzzle::Nine(g) => g,
            Puzzle::Sized(g) => {
                let shape = g.shape();
                let item = pb::BatchItem {
                    id: item.id,
                    puzzle: Some(pb::Grid {
                        cells: g.to_cells(),
                        box_rows: shape.box_rows() as u32,
                        box_cols: shape.box_cols() as u32,
                        ..Default::default()
                    }),
                };
                prost::encoding::message::encode(1, &item, dst);
                continue;
            }
        };
        // BatchItem { id = 1, puzzle = 2: Grid { text = 1 } }
        let body = 1 + varint_len(item.id) + 2 + GRID_BODY;
        dst.put_u8(key(1, LEN));
        put_varint(dst, body as u64);
        dst.put_u8(key(1, VARINT));
        put_varint(dst, item.id);
        dst.put_u8(key(2, LEN));
        dst.put_u8(GRID_BODY as u8);
        dst.put_u8(key(1, LEN));
        dst.put_u8(CELLS as u8);
        for (t, &v) in text.iter_mut().zip(&grid.0) {
            *t = if v == 0 { b'.' } else { b'0' + v };
        }
        dst.put_slice(&text);
    }
    if let Some(options) = &request.options {
        prost::encoding::message::encode(2, options, dst);
    }
}

/// A reader of protobuf fields over a byte slice; `None` at anything it
/// does not expect, which sends the caller to prost.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.0.split_first()?;
            self.0 = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// The next field's number and wire type; `None` at the end.
    fn key(&mut self) -> Option<Option<(u64, u8)>> {
        if self.0.is_empty() {
            return Some(None);
        }
        let k = self.varint()?;
        Some(Some((k >> 3, (k & 7) as u8)))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        if n > self.0.len() {
            return None;
        }
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(b)
    }
}

/// A solution in text: 81 digits.
fn solution_of(text: &[u8]) -> Option<Grid> {
    let cells: &[u8; CELLS] = text.try_into().ok()?;
    let mut g = Grid::EMPTY;
    for (to, &c) in g.0.iter_mut().zip(cells) {
        let d = c.wrapping_sub(b'0');
        if !(1..=9).contains(&d) {
            return None;
        }
        *to = d;
    }
    Some(g)
}

/// The common `BatchResult`: an id and a `Solution` whose grid, if any,
/// is 81 digits of text. `None` for anything else.
fn fast_result(bytes: &[u8], unique: bool) -> Option<Answer> {
    let mut f = Fields(bytes);
    let (mut id, mut solution) = (0, None);
    while let Some((field, wire)) = f.key()? {
        match (field, wire) {
            (1, VARINT) => id = f.varint()?,
            (2, LEN) if solution.is_none() => solution = Some(f.bytes()?),
            _ => return None,
        }
    }
    let mut f = Fields(solution?);
    let (mut outcome, mut grid, mut count) = (0, None, 0);
    let (mut guesses, mut nodes, mut micros) = (0, 0, 0);
    while let Some((field, wire)) = f.key()? {
        match (field, wire) {
            (1, VARINT) => outcome = i32::try_from(f.varint()?).ok()?,
            (2, LEN) => {
                let mut g = Fields(f.bytes()?);
                let mut text = None;
                while let Some((field, wire)) = g.key()? {
                    match (field, wire) {
                        (1, LEN) => text = Some(g.bytes()?),
                        _ => return None,
                    }
                }
                grid = Some(solution_of(text?)?);
            }
            (3, VARINT) => count = f.varint()?,
            (4, LEN) => {
                let mut s = Fields(f.bytes()?);
                while let Some((field, wire)) = s.key()? {
                    match (field, wire) {
                        (1, VARINT) => guesses = s.varint()?,
                        (2, VARINT) => nodes = s.varint()?,
                        (3, VARINT) => micros = s.varint()?,
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
    }
    let outcome = match (pb::Outcome::try_from(outcome).ok()?, grid.is_some()) {
        (pb::Outcome::Solved, true) => Outcome::Solved,
        (pb::Outcome::MultipleSolutions, true) if unique => Outcome::NotUnique,
        (pb::Outcome::MultipleSolutions, true) => Outcome::Solved,
        (pb::Outcome::NoSolution, _) => Outcome::NoSolution,
        (pb::Outcome::WorkLimitReached, _) => Outcome::WorkLimit,
        _ => return None,
    };
    let done = Done {
        outcome,
        solution: grid.map(Puzzle::Nine),
        count,
        guesses,
        nodes,
        micros,
        error: None,
    };
    Some((id, None, done))
}

/// Reads a `SolveBatchResponse`.
pub(super) fn decode_response(bytes: &[u8], unique: bool) -> Result<Answers, prost::DecodeError> {
    let mut f = Fields(bytes);
    // A solved answer with its stats takes about 100 bytes.
    let mut answers = Vec::with_capacity(bytes.len() / 100 + 1);
    loop {
        let Some(next) = f.key() else {
            return slow(bytes, unique);
        };
        match next {
            None => return Ok(answers),
            Some((1, LEN)) => {
                let Some(result) = f.bytes() else {
                    return slow(bytes, unique);
                };
                let answer = match fast_result(result, unique) {
                    Some(a) => a,
                    None => {
                        let r = pb::BatchResult::decode(result)?;
                        (r.id, None, done_of(r, unique))
                    }
                };
                answers.push(answer);
            }
            Some(_) => {
                // A field of the response this client does not know:
                // prost skips it; so does the rest of this read.
                return slow(bytes, unique);
            }
        }
    }
}

/// The whole response through prost.
fn slow(bytes: &[u8], unique: bool) -> Result<Answers, prost::DecodeError> {
    let msg = pb::SolveBatchResponse::decode(bytes)?;
    Ok(msg
        .results
        .into_iter()
        .map(|r| (r.id, None, done_of(r, unique)))
        .collect())
}

/// What a `BatchResult` prost decoded says.
pub(super) fn done_of(r: pb::BatchResult, unique: bool) -> Done {
    let mut done = Done {
        outcome: Outcome::Failed,
        solution: None,
        count: 0,
        guesses: 0,
        nodes: 0,
        micros: 0,
        error: None,
    };
    match r.result {
        Some(pb::batch_result::Result::Solution(s)) => {
            done.solution = s.grid.as_ref().and_then(puzzle_of);
            done.count = s.solution_count;
            if let Some(st) = s.stats {
                (done.guesses, done.nodes, done.micros) = (st.guesses, st.nodes, st.solve_time_us);
            }
            done.outcome = match (s.outcome(), done.solution.is_some()) {
                (pb::Outcome::Solved, true) => Outcome::Solved,
                (pb::Outcome::MultipleSolutions, true) if unique => Outcome::NotUnique,
                (pb::Outcome::MultipleSolutions, true) => Outcome::Solved,
                (pb::Outcome::NoSolution, _) => Outcome::NoSolution,
                (pb::Outcome::WorkLimitReached, _) => Outcome::WorkLimit,
                (o, _) => {
                    done.error =
                        Some(("UNKNOWN", format!("unexpected answer {}", o.as_str_name())));
                    Outcome::Failed
                }
            };
        }
        Some(pb::batch_result::Result::Error(status)) => {
            let code = code_name(tonic::Code::from_i32(status.code));
            done.outcome = if code == "INVALID_ARGUMENT" {
                Outcome::Invalid
            } else {
                Outcome::Failed
            };
            done.error = Some((code, for_people(&status.message)));
        }
        None => done.error = Some(("UNKNOWN", "the server sent an empty result".into())),
    }
    done
}

/// A grid the server sent, read by the service's one decoder: the 9x9
/// form, or the grid of its box; `None` when it does not read.
fn puzzle_of(g: &pb::Grid) -> Option<Puzzle> {
    match read_grid(g).ok()? {
        AnyGrid::Nine(g, _) => Some(Puzzle::Nine(g)),
        AnyGrid::Sized(g, _) => Some(Puzzle::Sized(std::sync::Arc::new(g))),
    }
}

/// The codec of the CLI's SolveBatch calls: [`Request`] out, [`Answers`]
/// back.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchCodec {
    /// A count to 2 was asked for: two solutions are an answer of their
    /// own, not a solution.
    pub(super) unique: bool,
}

impl Codec for BatchCodec {
    type Encode = Request;
    type Decode = Answers;
    type Encoder = BatchCodec;
    type Decoder = BatchCodec;

    fn encoder(&mut self) -> BatchCodec {
        *self
    }

    fn decoder(&mut self) -> BatchCodec {
        *self
    }
}

impl Encoder for BatchCodec {
    type Item = Request;
    type Error = Status;

    fn encode(&mut self, item: Request, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        encode_request(&item, dst);
        Ok(())
    }
}

impl Decoder for BatchCodec {
    type Item = Answers;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Answers>, Status> {
        let n = src.remaining();
        let decoded = if src.chunk().len() == n {
            decode_response(src.chunk(), self.unique)
        } else {
            decode_response(&src.copy_to_bytes(n), self.unique)
        };
        src.advance(src.remaining());
        decoded
            .map(Some)
            .map_err(|e| Status::internal(format!("cannot read the server's answer: {e}")))
    }
}

#[cfg(test)]
mod tests;
