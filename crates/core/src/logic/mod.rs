//! The logical solver behind Hint and Rate: the techniques a person uses,
//! easiest first, on a grid of candidates of any shape. Knows nothing of
//! gRPC; imports only [`crate::puzzle`] and, for the search's guess count,
//! [`crate::solver`] (the 9x9 engine for 9x9 grids, the sized one for the
//! rest). Every technique is defined over the grid's rows, columns and
//! boxes, so a 4x4, 6x6 or 16x16 grid gets the same techniques, values and
//! labels as a 9x9 one (docs/sizes.md says what they mean there).
//!
//! Every technique is a finder that reports the first instance it sees
//! (a [`Step`]: placements or eliminations, the cells and units that justify
//! it, a one-line explanation). [`hint`] runs the finders in the fixed order
//! of [`Technique::ALL`] (by Sudoku Explainer value) and returns the first
//! step found. [`rate`] repeats that from the start, always going back to the
//! easiest technique after any step, until the grid is solved or nothing
//! applies. docs/logic.md says why that makes the hardest technique and the
//! label independent of the order cells and digits are scanned in.
//!
//! ```
//! use sudoku_core::logic::{self, Candidates, Label, Technique};
//! use sudoku_core::puzzle::Grid;
//!
//! let puzzle = Grid::from_text(
//!     "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79",
//! )?;
//! let step = logic::hint(&Candidates::from_grid(&puzzle)).expect("singles apply");
//! assert_eq!(step.technique, Technique::HiddenSingle);
//! assert_eq!(step.explanation, "r1c6 is the only cell in box 2 that can hold 8");
//!
//! let rating = logic::rate(&puzzle).expect("one solution");
//! assert!(rating.solved && rating.label == Label::Easy);
//! # Ok::<(), sudoku_core::puzzle::PuzzleError>(())
//! ```

mod candidates;
mod notation;
pub(crate) mod se;

use std::fmt;
use std::str::FromStr;

pub use candidates::Candidates;

use crate::puzzle::sized::SizedGrid;
use crate::puzzle::{Grid, PuzzleError};
use crate::solver;

/// A solving technique, in the order [`hint`] tries them (easiest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Technique {
    /// The last empty cell of a row, column or box takes the missing digit.
    FullHouse,
    /// A digit has one place left in a row, column or box.
    HiddenSingle,
    /// A cell has one candidate left.
    NakedSingle,
    /// A digit's places in a box lie on one line: the rest of the line loses it.
    Pointing,
    /// A digit's places in a line lie in one box: the rest of the box loses it.
    Claiming,
    /// Two cells of a unit with the same two candidates.
    NakedPair,
    /// A digit in exactly two columns of two rows (or the transpose).
    XWing,
    /// Two digits confined to the same two cells of a unit.
    HiddenPair,
    /// Three cells of a unit with three candidates between them.
    NakedTriple,
    /// The fish of size three.
    Swordfish,
    /// Three digits confined to the same three cells of a unit.
    HiddenTriple,
    /// A bivalue pivot and two bivalue pincers sharing a third digit.
    XyWing,
    /// A trivalue pivot and two bivalue pincers inside its candidates.
    XyzWing,
    /// Two equal bivalue cells joined by a strong link on one of their
    /// digits. Not on Sudoku Explainer's ladder: no longer produced (its
    /// name stays known).
    WWing,
    /// Four cells of a unit with four candidates between them.
    NakedQuad,
    /// The fish of size four.
    Jellyfish,
    /// Four digits confined to the same four cells of a unit.
    HiddenQuad,
    /// Two-colouring a digit's chains of conjugate pairs. Not on Sudoku
    /// Explainer's ladder (SE's X-cycles and forcing X-chains find what it
    /// does): no longer produced (its name stays known).
    SimpleColoring,
    /// Sudoku Explainer's direct pointing: a pointing whose eliminations
    /// leave a hidden single, which it places.
    DirectPointing,
    /// Direct claiming: a claiming that leaves a hidden single.
    DirectClaiming,
    /// Direct hidden pair: a hidden pair that leaves a hidden single.
    DirectHiddenPair,
    /// Direct hidden triple: a hidden triple that leaves a hidden single.
    DirectHiddenTriple,
    /// Unique rectangle (types 1-4): four cells on two rows, two columns
    /// and two boxes that would hold two digits twice over.
    UniqueRectangle,
    /// Unique loop (types 1-4): a longer loop of the same deadly pattern.
    UniqueLoop,
    /// Bivalue universal grave (types 1-4).
    Bug,
    /// Aligned pair exclusion.
    AlignedPairExclusion,
    /// Aligned triple exclusion.
    AlignedTripleExclusion,
    /// A cycle of strong and weak links on one digit.
    XCycle,
    /// A cycle through bivalue cells.
    YCycle,
    /// A cycle of both kinds of links.
    XyCycle,
    /// A forcing chain on one digit (X-links only).
    ForcingXChain,
    /// A forcing chain (X- and Y-links).
    ForcingChain,
    /// Nishio: assuming a digit leads to a contradiction.
    Nishio,
    /// Cell or region forcing chains: every digit of a cell, or every
    /// place of a digit in a unit, implies the same thing.
    MultipleForcingChains,
    /// Dynamic forcing chains: chains whose links use the eliminations
    /// made earlier along them.
    DynamicForcingChains,
    /// Dynamic forcing chains that also use pointing, claiming, subsets
    /// and fish along the way.
    DynamicForcingChainsPlus,
    /// Forcing chains nested in forcing chains (levels 1-5).
    NestedForcingChains,
    /// The fallback of [`search_step`]: no listed technique applies, so the
    /// digit comes from the engine's solution. Not in [`Technique::ALL`];
    /// [`rate`] never uses it.
    Search,
    /// Not a technique but a correction ([`missing_candidate`]): a person's
    /// pencil marks lack the digit the solution puts in a cell, so the cell
    /// must keep it. A hint from such marks comes before any technique,
    /// whose steps from them could be wrong. Not in [`Technique::ALL`];
    /// [`rate`] never uses it.
    MissingCandidate,
}

impl Technique {
    /// Every technique of Sudoku Explainer's ladder, by the least value SE
    /// gives it ([`hint`] and [`rate`] follow SE's ladder, whose order is
    /// nearly this one).
    pub const ALL: &'static [Technique] = &[
        Technique::FullHouse,
        Technique::HiddenSingle,
        Technique::DirectPointing,
        Technique::DirectClaiming,
        Technique::DirectHiddenPair,
        Technique::NakedSingle,
        Technique::DirectHiddenTriple,
        Technique::Pointing,
        Technique::Claiming,
        Technique::NakedPair,
        Technique::XWing,
        Technique::HiddenPair,
        Technique::NakedTriple,
        Technique::Swordfish,
        Technique::HiddenTriple,
        Technique::XyWing,
        Technique::XyzWing,
        Technique::UniqueRectangle,
        Technique::UniqueLoop,
        Technique::NakedQuad,
        Technique::Jellyfish,
        Technique::HiddenQuad,
        Technique::Bug,
        Technique::AlignedPairExclusion,
        Technique::XCycle,
        Technique::YCycle,
        Technique::ForcingXChain,
        Technique::XyCycle,
        Technique::ForcingChain,
        Technique::AlignedTripleExclusion,
        Technique::Nishio,
        Technique::MultipleForcingChains,
        Technique::DynamicForcingChains,
        Technique::DynamicForcingChainsPlus,
        Technique::NestedForcingChains,
    ];

    /// The stable name, as the wire and the CLI spell it.
    pub fn name(self) -> &'static str {
        match self {
            Technique::FullHouse => "FULL_HOUSE",
            Technique::HiddenSingle => "HIDDEN_SINGLE",
            Technique::NakedSingle => "NAKED_SINGLE",
            Technique::Pointing => "POINTING",
            Technique::Claiming => "CLAIMING",
            Technique::NakedPair => "NAKED_PAIR",
            Technique::XWing => "X_WING",
            Technique::HiddenPair => "HIDDEN_PAIR",
            Technique::NakedTriple => "NAKED_TRIPLE",
            Technique::Swordfish => "SWORDFISH",
            Technique::HiddenTriple => "HIDDEN_TRIPLE",
            Technique::XyWing => "XY_WING",
            Technique::XyzWing => "XYZ_WING",
            Technique::WWing => "W_WING",
            Technique::NakedQuad => "NAKED_QUAD",
            Technique::Jellyfish => "JELLYFISH",
            Technique::HiddenQuad => "HIDDEN_QUAD",
            Technique::SimpleColoring => "SIMPLE_COLORING",
            Technique::DirectPointing => "DIRECT_POINTING",
            Technique::DirectClaiming => "DIRECT_CLAIMING",
            Technique::DirectHiddenPair => "DIRECT_HIDDEN_PAIR",
            Technique::DirectHiddenTriple => "DIRECT_HIDDEN_TRIPLE",
            Technique::UniqueRectangle => "UNIQUE_RECTANGLE",
            Technique::UniqueLoop => "UNIQUE_LOOP",
            Technique::Bug => "BUG",
            Technique::AlignedPairExclusion => "ALIGNED_PAIR_EXCLUSION",
            Technique::AlignedTripleExclusion => "ALIGNED_TRIPLE_EXCLUSION",
            Technique::XCycle => "X_CYCLE",
            Technique::YCycle => "Y_CYCLE",
            Technique::XyCycle => "XY_CYCLE",
            Technique::ForcingXChain => "FORCING_X_CHAIN",
            Technique::ForcingChain => "FORCING_CHAIN",
            Technique::Nishio => "NISHIO",
            Technique::MultipleForcingChains => "MULTIPLE_FORCING_CHAINS",
            Technique::DynamicForcingChains => "DYNAMIC_FORCING_CHAINS",
            Technique::DynamicForcingChainsPlus => "DYNAMIC_FORCING_CHAINS_PLUS",
            Technique::NestedForcingChains => "NESTED_FORCING_CHAINS",
            Technique::Search => "SEARCH",
            Technique::MissingCandidate => "MISSING_CANDIDATE",
        }
    }

    /// The technique with this stable name ([`Technique::Search`] and
    /// [`Technique::MissingCandidate`] included).
    pub fn from_name(name: &str) -> Option<Technique> {
        Technique::ALL
            .iter()
            .copied()
            .chain([
                Technique::WWing,
                Technique::SimpleColoring,
                Technique::Search,
                Technique::MissingCandidate,
            ])
            .find(|t| t.name() == name)
    }

    /// The value on the Sudoku Explainer scale (docs/logic.md has the
    /// mapping and where it departs from SE).
    pub fn se_rating(self) -> f32 {
        match self {
            Technique::FullHouse => 1.0,
            Technique::HiddenSingle => 1.2,
            Technique::NakedSingle => 2.3,
            Technique::Pointing => 2.6,
            Technique::Claiming => 2.8,
            Technique::NakedPair => 3.0,
            Technique::XWing => 3.2,
            Technique::HiddenPair => 3.4,
            Technique::NakedTriple => 3.6,
            Technique::Swordfish => 3.8,
            Technique::HiddenTriple => 4.0,
            Technique::XyWing => 4.2,
            Technique::XyzWing => 4.4,
            Technique::WWing => 4.4,
            Technique::NakedQuad => 5.0,
            Technique::Jellyfish => 5.2,
            Technique::HiddenQuad => 5.4,
            Technique::SimpleColoring => 6.5,
            // The least SE gives each; a step says its own value
            // ([`Step::value`]): chains add for their length.
            Technique::DirectPointing => 1.7,
            Technique::DirectClaiming => 1.9,
            Technique::DirectHiddenPair => 2.0,
            Technique::DirectHiddenTriple => 2.5,
            Technique::UniqueRectangle => 4.5,
            Technique::UniqueLoop => 4.6,
            Technique::Bug => 5.6,
            Technique::AlignedPairExclusion => 6.2,
            Technique::AlignedTripleExclusion => 7.5,
            Technique::XCycle => 6.5,
            Technique::YCycle => 6.5,
            Technique::XyCycle => 7.0,
            Technique::ForcingXChain => 6.6,
            Technique::ForcingChain => 7.0,
            Technique::Nishio => 7.5,
            Technique::MultipleForcingChains => 8.0,
            Technique::DynamicForcingChains => 8.5,
            Technique::DynamicForcingChainsPlus => 9.0,
            Technique::NestedForcingChains => 9.5,
            // Not techniques SE rates; a puzzle that needs a search is
            // extreme, and a correction is no step of a rating.
            Technique::Search | Technique::MissingCandidate => 0.0,
        }
    }

    /// The label of a puzzle whose hardest technique is this one.
    pub fn label(self) -> Label {
        if matches!(self, Technique::Search | Technique::MissingCandidate) {
            return Label::Extreme;
        }
        Label::of_er(self.se_rating())
    }
}

impl fmt::Display for Technique {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How hard a puzzle is for a person: a range of its Sudoku Explainer
/// rating ([`Label::of_er`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// Singles and the direct techniques (ER up to 2.5).
    Easy,
    /// Locked candidates, pairs, X-Wing (ER 2.6 to 3.4).
    Medium,
    /// Triples, Swordfish, XY- and XYZ-Wing (ER 3.5 to 4.4).
    Hard,
    /// Unique rectangles, quads, BUG, aligned pairs, cycles and short
    /// forcing chains (ER 4.5 to 6.9).
    Expert,
    /// Longer chains and beyond (ER 7.0 and above), or unrated (20.0).
    Extreme,
}

impl Label {
    /// Every label, easiest first.
    pub const ALL: &'static [Label] = &[
        Label::Easy,
        Label::Medium,
        Label::Hard,
        Label::Expert,
        Label::Extreme,
    ];

    /// The label of an ER: easy up to 2.5 (singles and the direct
    /// techniques), medium up to 3.4 (intersections, pairs, X-wing), hard
    /// up to 4.4 (triples, swordfish, XY- and XYZ-wings), expert up to 6.9
    /// (unique rectangles, quads, BUG, aligned pairs, cycles and short
    /// forcing chains), extreme from 7.0 (longer chains, Nishio, multiple,
    /// dynamic and nested chains) and for a puzzle SE cannot rate (20.0).
    pub fn of_er(er: f32) -> Label {
        if er <= 2.55 {
            Label::Easy
        } else if er <= 3.45 {
            Label::Medium
        } else if er <= 4.45 {
            Label::Hard
        } else if er <= 6.95 {
            Label::Expert
        } else {
            Label::Extreme
        }
    }

    /// The ER range of the label, in tenths, both ends inclusive (extreme
    /// up to SE's 20.0, "unrated").
    pub(crate) fn er_range(self) -> (u16, u16) {
        match self {
            Label::Easy => (0, 25),
            Label::Medium => (26, 34),
            Label::Hard => (35, 44),
            Label::Expert => (45, 69),
            Label::Extreme => (70, se::UNRATED),
        }
    }

    /// The lowercase name: "easy", "medium", "hard", "expert", "extreme".
    pub fn name(self) -> &'static str {
        match self {
            Label::Easy => "easy",
            Label::Medium => "medium",
            Label::Hard => "hard",
            Label::Expert => "expert",
            Label::Extreme => "extreme",
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A label name that is not one of the five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level {0:?}; expected easy, medium, hard, expert or extreme")]
pub struct UnknownLabel(pub String);

impl FromStr for Label {
    type Err = UnknownLabel;
    fn from_str(s: &str) -> Result<Label, UnknownLabel> {
        Label::ALL
            .iter()
            .copied()
            .find(|l| l.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownLabel(s.to_owned()))
    }
}

/// A row, column or box, numbered from 0 (messages number them from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitRef {
    /// A row, 0 at the top.
    Row(u8),
    /// A column, 0 at the left.
    Column(u8),
    /// A box, row-major from the top left.
    Box(u8),
}

impl UnitRef {
    /// The unit of internal index `u` of a side-`n` grid: rows 0..n,
    /// columns n..2n, boxes 2n..3n.
    pub(crate) fn of(u: usize, n: usize) -> UnitRef {
        match u / n {
            0 => UnitRef::Row(u as u8),
            1 => UnitRef::Column((u - n) as u8),
            _ => UnitRef::Box((u - 2 * n) as u8),
        }
    }
}

impl fmt::Display for UnitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitRef::Row(i) => write!(f, "row {}", i + 1),
            UnitRef::Column(i) => write!(f, "column {}", i + 1),
            UnitRef::Box(i) => write!(f, "box {}", i + 1),
        }
    }
}

/// One logical step: what it places or eliminates and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The technique.
    pub technique: Technique,
    /// Its value on the Sudoku Explainer scale, in tenths (SE's 2.6 is
    /// 26): the technique's own, plus what SE adds for a chain's length.
    pub value: u16,
    /// (cell, digit) placed; cells row-major from 0, digits from 1.
    pub placements: Vec<(u16, u8)>,
    /// (cell, digit) candidates removed.
    pub eliminations: Vec<(u16, u8)>,
    /// (cell, digit) candidates to put back: pencil marks that
    /// lacked a digit of the solution ([`Technique::MissingCandidate`]).
    pub restorations: Vec<(u16, u8)>,
    /// The cells that justify the step, for a UI to highlight.
    pub cells: Vec<u16>,
    /// The units the step reasons about.
    pub units: Vec<UnitRef>,
    /// One line, rows and columns numbered from 1.
    pub explanation: String,
}

impl Step {
    fn empty() -> Step {
        Step::new(Technique::FullHouse, 10)
    }

    /// A step of `technique` worth `value` tenths, with nothing in it yet.
    pub(crate) fn new(technique: Technique, value: u16) -> Step {
        Step {
            technique,
            value,
            placements: Vec::new(),
            eliminations: Vec::new(),
            restorations: Vec::new(),
            cells: Vec::new(),
            units: Vec::new(),
            explanation: String::new(),
        }
    }
}

/// What [`rate`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    /// True when Sudoku Explainer's techniques finished the puzzle.
    pub solved: bool,
    /// The technique of the hardest step on the path (when not solved: the
    /// hardest before the techniques got stuck). None when nothing was
    /// needed.
    pub hardest: Option<Technique>,
    /// ER, Sudoku Explainer's rating: the value of the hardest step on SE's
    /// path to the solution. 20.0 ("unrated", as SE says) when SE's
    /// techniques cannot finish the puzzle; never a low number then.
    pub se_rating: f32,
    /// EP: the hardest step up to the first that places a digit.
    pub ep: f32,
    /// ED: the value of the first step.
    pub ed: f32,
    /// The label: a range of ER ([`Label::of_er`]).
    pub label: Label,
    /// How many steps of each technique, easiest first, only those used.
    pub counts: Vec<(Technique, u32)>,
    /// The engine's branch points while solving the puzzle and proving its
    /// solution unique.
    pub guesses: u64,
}

/// Why a puzzle or state cannot be rated or reasoned about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogicError {
    /// Occurs when the givens break the rules (a digit twice in a unit).
    #[error("{0}")]
    Invalid(PuzzleError),
    /// Occurs when the puzzle has no solution.
    #[error("the puzzle has no solution")]
    NoSolution,
    /// Occurs when the puzzle has more than one solution: a person's
    /// techniques cannot finish it and its rating would mean nothing.
    #[error("the puzzle has more than one solution")]
    MultipleSolutions,
    /// Occurs when the engine's uniqueness check needs more search nodes
    /// than [`rate_within`] was given.
    #[error("the uniqueness check ran out of its budget after {nodes} search nodes")]
    OverBudget {
        /// Nodes searched.
        nodes: u64,
    },
    /// Occurs when a pencil-mark mask has bits beyond the grid's digits.
    #[error("row {}, column {}: candidate mask {mask:#x} has bits beyond the {side} digits", row + 1, col + 1)]
    BadMask {
        /// The cell's row, from 0.
        row: u8,
        /// The cell's column, from 0.
        col: u8,
        /// The grid's side (its digits are 1 to side).
        side: u8,
        /// The mask given.
        mask: u64,
    },
    /// Occurs when the pencil marks are not one mask per cell.
    #[error("{found} candidate masks for a grid of {expected} cells")]
    MarkCount {
        /// The grid's cells.
        expected: usize,
        /// The masks given.
        found: usize,
    },
}

/// The next step a person would take: the first instance of the easiest
/// technique that applies. None when none applies, or when the state has an
/// open cell without candidates. See [`search_step`] for a fallback.
pub fn hint(state: &Candidates) -> Option<Step> {
    hint_while(state, || true).unwrap_or(None)
}

/// [`hint`], asking `go_on` before each technique: `Err(Stopped)` when it
/// said stop (the service's deadline: on a 64x64 grid one pass of the
/// techniques is thousands of unit scans).
pub fn hint_while(
    state: &Candidates,
    mut go_on: impl FnMut() -> bool,
) -> Result<Option<Step>, Stopped> {
    if state.dead_cell().is_some() {
        return Ok(None);
    }
    se::next_step(state, &mut go_on)
}

/// [`hint_while`] with SE's ladder up to aligned pair exclusion (6.2):
/// the producers whose work is bounded by the grid, before the chains.
/// The service runs the chains only on a grid with exactly one solution.
pub fn hint_before_chains(
    state: &Candidates,
    mut go_on: impl FnMut() -> bool,
) -> Result<Option<Step>, Stopped> {
    if state.dead_cell().is_some() {
        return Ok(None);
    }
    se::next_step_within(
        state,
        &mut go_on,
        se::CHAINS - 1,
        &mut se::Recall::default(),
    )
}

/// A search for a step stopped before its end (see [`hint_while`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// The fallback when [`hint`] finds nothing: the solution's digit for the
/// open cell with the fewest candidates (the lowest such cell), taken from
/// the engine's solution of the placed digits. Its technique is
/// [`Technique::Search`]. None when the placed digits have no solution or
/// the grid is full.
///
/// The search here has no node budget. A caller that must bound it (the
/// service, whose budget, deadline and cancellation live outside this
/// crate's logic) searches the placed digits itself, in slices, and hands
/// the solution to [`search_step_from`].
pub fn search_step(state: &Candidates) -> Option<Step> {
    let found = count(&state.puzzle(), 1, u64::MAX);
    search_step_from(state, &found.solution?)
}

/// [`search_step`] with the solution of `state`'s placed digits already
/// found (its values, row-major). None when the grid is full.
pub fn search_step_from(state: &Candidates, solution: &[u8]) -> Option<Step> {
    let n = state.side();
    let cell = (0..n * n)
        .filter(|&c| state.value(c) == 0)
        .min_by_key(|&c| (state.mask(c).count_ones(), c))?;
    let d = solution[cell];
    let mut step = Step::empty();
    step.technique = Technique::Search;
    step.value = 0;
    step.placements.push((cell as u16, d));
    step.cells.push(cell as u16);
    step.explanation = format!(
        "no listed technique applies; the solution has {d} in r{}c{}",
        cell / n + 1,
        cell % n + 1
    );
    Some(step)
}

/// The check of a person's pencil marks against the solution of the
/// placed digits: the first open cell (lowest index) whose candidates in
/// `state` lack the digit `solution` puts there. Its step, of
/// [`Technique::MissingCandidate`], puts that digit back ("r3c4 must keep
/// 7"), names the cell, and says how many other cells lack theirs (without
/// their digits: a hint gives one away). None when every open cell keeps its
/// solution's digit: then every technique's step from `state` holds for that
/// solution, since the techniques only remove what no solution within the
/// candidates has.
///
/// `solution` is a solution of `state`'s placed digits, its values
/// row-major (the engine's first one; a grid with several is checked
/// against that one).
pub fn missing_candidate(state: &Candidates, solution: &[u8]) -> Option<Step> {
    let n = state.side();
    let mut missing = (0..n * n).filter(|&c| {
        let d = solution[c];
        state.value(c) == 0
            && d != 0
            && usize::from(d) <= n
            && state.mask(c) & (1u64 << (d - 1)) == 0
    });
    let cell = missing.next()?;
    let others = missing.count();
    let d = solution[cell];
    let mut step = Step::empty();
    step.technique = Technique::MissingCandidate;
    step.value = 0;
    step.restorations.push((cell as u16, d));
    step.cells.push(cell as u16);
    step.explanation = format!(
        "r{}c{} must keep {d}: the pencil marks removed a digit the solution needs there",
        cell / n + 1,
        cell % n + 1
    );
    match others {
        0 => {}
        1 => step
            .explanation
            .push_str("; 1 more cell lacks its solution's digit"),
        n => step
            .explanation
            .push_str(&format!("; {n} more cells lack their solution's digit")),
    }
    Some(step)
}

/// What the engine for a puzzle's shape found: the 9x9 bitboard for 9x9
/// grids, the sized engine for the rest.
pub(crate) struct Count {
    /// Solutions, at most the limit.
    pub(crate) count: u32,
    /// False when the node budget ran out first.
    pub(crate) complete: bool,
    /// The engine's work.
    pub(crate) stats: solver::Stats,
    /// The first solution, row-major.
    pub(crate) solution: Option<Vec<u8>>,
}

/// Counts `puzzle`'s solutions up to `limit` within `max_nodes`, on the
/// engine its shape calls for.
pub(crate) fn count(puzzle: &SizedGrid, limit: u32, max_nodes: u64) -> Count {
    if let Some(grid) = puzzle.to_grid() {
        let a = solver::run(&grid, limit, max_nodes);
        return Count {
            count: a.count,
            complete: a.complete,
            stats: a.stats,
            solution: a.solution.map(|g| g.0.to_vec()),
        };
    }
    let (a, solution) = solver::sized::run_sized(puzzle, limit, max_nodes);
    Count {
        count: a.count,
        complete: a.complete,
        stats: a.stats,
        solution: solution.map(|g| g.values().to_vec()),
    }
}

/// The techniques a person needs for `grid`, how hard that makes it, and the
/// engine's guesses. Only puzzles with exactly one solution are rated.
pub fn rate(grid: &Grid) -> Result<Rating, LogicError> {
    rate_within(&SizedGrid::from_grid(grid), u64::MAX)
}

/// [`rate`] of a puzzle of any shape, with the engine's uniqueness check
/// bounded to `max_nodes` search nodes (the logical part is bounded by
/// itself: at most N*N placements and N*N*N eliminations, each found by a
/// fixed scan).
pub fn rate_within(puzzle: &SizedGrid, max_nodes: u64) -> Result<Rating, LogicError> {
    puzzle.check_givens().map_err(LogicError::Invalid)?;
    let answer = count(puzzle, 2, max_nodes);
    match answer.count {
        _ if !answer.complete => {
            return Err(LogicError::OverBudget {
                nodes: answer.stats.nodes,
            });
        }
        0 => return Err(LogicError::NoSolution),
        1 => {}
        _ => return Err(LogicError::MultipleSolutions),
    }
    Ok(rating_of(Candidates::new(puzzle), answer.stats.guesses))
}

/// [`rate`] of a puzzle already known to have exactly one solution (the
/// generator's candidates): the same rating, without the uniqueness check
/// before it. The engine still solves the puzzle once, counting to 2, for
/// [`Rating::guesses`].
#[cfg(test)]
pub(crate) fn rate_unique(puzzle: &SizedGrid) -> Rating {
    let guesses = count(puzzle, 2, u64::MAX).stats.guesses;
    rating_of(Candidates::new(puzzle), guesses)
}

/// How far Sudoku Explainer's ladder takes a puzzle within a ceiling: see
/// [`reach`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Solved with no step above the ceiling.
    Solved,
    /// Stuck: a step worth more than the ceiling is needed, or none finishes.
    Stuck,
}

/// Whether SE's ladder finishes `puzzle`, known to have exactly one
/// solution, with no step worth more than `ceiling` tenths. The singles
/// are placed all at once ([`Candidates::place_singles`]) between steps:
/// a sound step never undoes a single, so the state where the singles run
/// out is the one the step-by-step path reaches too. The generator decides
/// with it which candidates are worth a full rating, and keeps a sized
/// puzzle within a label while it removes clues; the full rating decides.
pub(crate) fn reach(puzzle: &SizedGrid, ceiling: u16) -> Reach {
    let mut state = Candidates::new(puzzle);
    let mut recall = se::Recall::default();
    loop {
        state.place_singles();
        if state.is_solved() {
            return Reach::Solved;
        }
        if state.dead_cell().is_some() {
            return Reach::Stuck;
        }
        match se::next_step_within(&state, &mut || true, ceiling, &mut recall) {
            Ok(Some(step)) if step.value <= ceiling => state.apply(&step),
            _ => return Reach::Stuck,
        }
    }
}

/// [`rating_of`] of a puzzle, ended as soon as a step is worth more than
/// `ceiling` tenths (None then): what a search for puzzles up to a rating
/// needs, without walking the rest of a hard puzzle's path.
///
/// The walk is bounded: past [`GENERATE_ASKS`] asks of its chain searches
/// (about two seconds of work) the puzzle is not rated, and None too. The
/// generator then tries another: it must not hold a solver thread for the
/// minutes a nested chain search can take on a large grid.
pub(crate) fn rating_within(puzzle: &SizedGrid, guesses: u64, ceiling: u16) -> Option<Rating> {
    let mut asked = 0u64;
    let mut go_on = || {
        asked += 1;
        asked <= GENERATE_ASKS
    };
    let se = se::rate(Candidates::new(puzzle), &mut go_on, ceiling).ok()?;
    (se.er <= ceiling).then(|| Rating::of(&se, guesses))
}

/// The bound of [`rating_within`]: asks of SE's ladder, each about a
/// microsecond of work apart. The QQwing expert and top1465 puzzles of
/// data/se_reference.txt need at most 143,695; the forum's hardest a
/// median of 7,900,000.
pub(crate) const GENERATE_ASKS: u64 = 2_000_000;

/// The logical part of [`rate`], from the state of a puzzle already known
/// to have exactly one solution, found by the engine with `guesses` guesses
/// when counting to two (the service counts under its own budget and
/// deadline first).
pub fn rating_of(state: Candidates, guesses: u64) -> Rating {
    rating_while(state, guesses, || true).expect("never stopped")
}

/// [`rating_of`], asking `go_on` now and then: None when it said stop
/// (the service's deadline; a 64x64 grid takes thousands of steps, and a
/// nested forcing chain can take seconds).
pub fn rating_while(
    state: Candidates,
    guesses: u64,
    mut go_on: impl FnMut() -> bool,
) -> Option<Rating> {
    let se = se::rate(state, &mut go_on, se::UNRATED).ok()?;
    Some(Rating::of(&se, guesses))
}

impl Rating {
    /// The rating of SE's path `se`.
    fn of(se: &se::SeRating, guesses: u64) -> Rating {
        let mut counts = [0u32; TECHNIQUES];
        let mut hardest: Option<&Step> = None;
        for step in &se.steps {
            counts[step.technique as usize] += 1;
            if hardest.is_none_or(|h| step.value > h.value) {
                hardest = Some(step);
            }
        }
        let solved = se.er != se::UNRATED;
        let mut order: Vec<Technique> = se.steps.iter().map(|s| s.technique).collect();
        order.sort_unstable_by_key(|&t| (t.se_rating() * 10.0).round() as u16);
        order.dedup();
        Rating {
            solved,
            hardest: hardest.map(|s| s.technique),
            se_rating: tenths(se.er),
            ep: tenths(se.ep),
            ed: tenths(se.ed),
            label: Label::of_er(tenths(se.er)),
            counts: order.into_iter().map(|t| (t, counts[t as usize])).collect(),
            guesses,
        }
    }
}

/// SE's tenths as the rating people read (26 is 2.6).
fn tenths(v: u16) -> f32 {
    f32::from(v) / 10.0
}

/// How many techniques there are.
const TECHNIQUES: usize = Technique::MissingCandidate as usize + 1;

#[cfg(test)]
mod tests;
