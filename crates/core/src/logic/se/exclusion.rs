//! Aligned pair and triple exclusion, as SE finds and values them.

use super::{GoOn, Sink};
use crate::logic::{Candidates, Stopped};

/// SE's `AlignedPairExclusion` (`degree` 2, 6.2) and `AlignedExclusion(3)`
/// (7.5).
pub(crate) fn aligned(
    _c: &Candidates,
    _degree: usize,
    _sink: &mut Sink<'_>,
    _go_on: &mut GoOn<'_>,
) -> Result<(), Stopped> {
    Ok(())
}
