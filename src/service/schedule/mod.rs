//! Where and how long work runs: a unary call's first nodes inline on the
//! runtime thread that read it, the rest of its search and every batch
//! message on a solver thread ([`super::pool`]) in turns shared out between
//! connections, all of it in slices of `slice_nodes` with the deadline, the
//! client's presence, the work budget and the end of the turn checked
//! between slices. This is where a deadline stops the solver.
//!
//! It takes and gives back domain types only (`super::work`: jobs, batch
//! items, answers; [`Made`] puzzles): the handlers and the stream code
//! turn the wire into them and them into the wire.
//!
//! | file | its job |
//! |---|---|
//! | `pending.rs` | what a queued task shares with its caller: deadline, reply, wanted, cancelled |
//! | `slices.rs` | a search in slices, for either engine, and the outcome counts |
//! | `search.rs` | a unary call's search: inline, then on a solver thread |
//! | `batch.rs` | a batch message's items, whole or in parts |
//! | `generate.rs` | a generated puzzle, attempt by attempt |
//! | `one_shot.rs` | Hint and Rate work done at once |

mod batch;
mod generate;
mod one_shot;
mod pending;
mod search;
mod slices;
#[cfg(test)]
mod testing;

pub(super) use generate::Made;
pub(super) use pending::{expiry, past};
pub(super) use slices::count_failure;
