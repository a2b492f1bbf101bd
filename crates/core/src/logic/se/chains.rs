//! Cycles and forcing chains, as SE's `Chaining` finds and values them.

use super::{Chaining, GoOn, Sink};
use crate::logic::{Candidates, Stopped};

/// SE's `Chaining(multiple, dynamic, nishio, level)`: every hint of the
/// mode, reported cheapest first.
pub(crate) fn find(
    _c: &Candidates,
    _mode: Chaining,
    _sink: &mut Sink<'_>,
    _go_on: &mut GoOn<'_>,
) -> Result<(), Stopped> {
    Ok(())
}
