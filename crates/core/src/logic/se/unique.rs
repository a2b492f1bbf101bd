//! Unique rectangles and loops (types 1-4) and the bivalue universal
//! grave (types 1-4), as SE finds and values them.

use super::Sink;
use crate::logic::Candidates;

/// SE's `UniqueLoops`: every unique rectangle and loop, reported cheapest
/// first (by value, then type).
pub(crate) fn unique_loops(_c: &Candidates, _sink: &mut Sink<'_>) {}

/// SE's `BivalueUniversalGrave`: types 1 to 4.
pub(crate) fn bug(_c: &Candidates, _sink: &mut Sink<'_>) {}
