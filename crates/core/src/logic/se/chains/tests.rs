use super::engine::length_steps;

#[test]
fn length_penalty_steps_at_se_thresholds() {
    let steps: Vec<u32> = [4, 6, 7, 8, 9, 10, 11, 14, 15, 18, 19, 26, 27, 34, 35]
        .iter()
        .map(|&c| length_steps(c))
        .collect();
    assert_eq!(steps, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7]);
}

use super::super::{Chaining, LADDER, Rung};
use crate::logic::Candidates;
use crate::puzzle::Grid;

/// A state written as SE's dump of it: 81 numbers, a cell's candidates as
/// a mask (bit d-1 for d) or minus its placed digit.
fn state(text: &str) -> Candidates {
    let nums: Vec<i32> = text.split(',').map(|s| s.trim().parse().unwrap()).collect();
    let mut g = Grid::EMPTY;
    for (i, &v) in nums.iter().enumerate() {
        if v < 0 {
            g.0[i] = (-v) as u8;
        }
    }
    let mut c = Candidates::from_grid(&g);
    for (i, &v) in nums.iter().enumerate() {
        if v > 0 {
            for d in 1..=9u8 {
                if v & 1 << (d - 1) == 0 && c.mask(i) & 1 << (d - 1) != 0 {
                    c.eliminate(i, d);
                }
            }
        }
    }
    c
}

fn first(c: &Candidates, mode: Chaining) -> Option<crate::logic::Step> {
    first_with(c, mode, None)
}

/// [`first`], with a walk's memory.
fn first_with(
    c: &Candidates,
    mode: Chaining,
    memory: Option<&mut super::Memory>,
) -> Option<crate::logic::Step> {
    let mut out = None;
    super::find(
        c,
        mode,
        true,
        &mut |s| {
            out = Some(s);
            false
        },
        &mut || true,
        memory,
    )
    .unwrap();
    out
}

use super::engine::{Engine, NONE};
use super::rules::{off_node, removed};
use crate::generate::Rng;
use crate::logic::candidates::{bit, digits_of};
use crate::logic::se::basic;
use crate::logic::{Step, Technique, UnitRef};

fn unit_index(u: UnitRef, n: usize) -> usize {
    match u {
        UnitRef::Row(i) => i as usize,
        UnitRef::Column(i) => n + i as usize,
        UnitRef::Box(i) => 2 * n + i as usize,
    }
}

/// SE's getRuleParents of a basic step, from the step.
fn rule_parents(eng: &Engine<'_>, s: &Step) -> Vec<u32> {
    let (l, n) = (eng.l, eng.g.n);
    let mut out = Vec::new();
    let units: Vec<usize> = s.units.iter().map(|&u| unit_index(u, n)).collect();
    match s.technique {
        Technique::Pointing | Technique::Claiming | Technique::XWing => {
            let d = s.eliminations[0].1;
            let k = units.len() / 2;
            let (bases, covers) = units.split_at(k);
            for &b in bases {
                for &x in l.unit(b) {
                    let x = x as usize;
                    let in_cover = covers
                        .iter()
                        .any(|&cv| l.units_of(x).contains(&(cv as u16)));
                    if removed(eng, x, d) && !in_cover {
                        off_node(eng, x, d, &mut out);
                    }
                }
            }
        }
        Technique::NakedPair => {
            let digits = s
                .cells
                .iter()
                .fold(0, |m, &x| m | eng.cur.masks[x as usize]);
            for &x in &s.cells {
                for v in digits_of(eng.c.mask(x as usize) & !digits) {
                    off_node(eng, x as usize, v, &mut out);
                }
            }
        }
        Technique::HiddenPair => {
            let mut digits = s
                .cells
                .iter()
                .fold(0, |m, &x| m | eng.cur.masks[x as usize]);
            for &(_, d) in &s.eliminations {
                digits &= !bit(d);
            }
            for &x in l.unit(units[0]) {
                let x = x as usize;
                if eng.cur.masks[x] & digits != 0 {
                    continue;
                }
                for v in digits_of(eng.c.mask(x) & digits) {
                    off_node(eng, x, v, &mut out);
                }
            }
        }
        _ => {}
    }
    out
}

/// The fast rules inside chains find what `se::basic` finds, in its
/// order, with SE's rule parents, on states where a run removed some
/// candidates.
#[test]
fn chain_rules_match_the_basic_producers() {
    let mut rng = Rng::new(12345);
    let mut checked = 0;
    for (g, ..) in crate::logic::se::tests::reference().iter().take(300) {
        let c = Candidates::from_grid(g);
        for _ in 0..4 {
            let mode = Chaining {
                multiple: true,
                dynamic: true,
                nishio: false,
                level: 1,
            };
            let mut eng = Engine::new(&c, mode);
            let mut cur = c.clone();
            for cell in 0..81 {
                for d in digits_of(c.mask(cell)) {
                    if rng.below(5) == 0 {
                        cur.eliminate(cell, d);
                        eng.cur.remove(eng.l, cell, d);
                        eng.slot[eng.g.pot(cell, d, false) as usize] =
                            (cell * 9 + d as usize) as u32;
                    }
                }
            }
            for rule in 0..4 {
                let mut steps = Vec::new();
                let mut keep = |s: Step| {
                    steps.push(s);
                    true
                };
                match rule {
                    0 => basic::locking(&cur, false, &mut keep),
                    1 => basic::hidden_set(&cur, 2, false, &mut keep, None),
                    2 => basic::naked_set(&cur, 2, &mut keep, None),
                    _ => basic::fish(&cur, 2, &mut keep),
                }
                let mut want = Vec::new();
                for s in &steps {
                    let mut parents = rule_parents(&eng, s);
                    if parents.is_empty() {
                        continue;
                    }
                    parents.sort_unstable();
                    for &(cell, d) in &s.eliminations {
                        want.push((eng.g.pot(cell as usize, d, false), parents.clone()));
                    }
                }
                let mut got = Vec::new();
                super::rules::apply(&eng, rule, &mut got);
                let got: Vec<_> = got
                    .into_iter()
                    .map(|(p, nested, mut ps)| {
                        assert_eq!(nested, NONE);
                        ps.sort_unstable();
                        (p, ps)
                    })
                    .collect();
                assert_eq!(got, want, "rule {rule} on {g}");
                checked += got.len();
            }
        }
    }
    assert!(checked > 100, "only {checked} eliminations checked");
}

/// States from serate's paths (SE's dump format, see [`state`]) with the
/// chain step SE took there: value, eliminations, placement, technique.
const CASES: &[(&str, u16, &str, &str, Technique)] = &[
    (
        "-9,129,72,68,45,61,-2,188,120,-3,129,74,66,43,59,240,184,-9,-6,-5,74,-9,-8,14,76,12,-1,-7,-4,-8,-5,35,39,-9,38,34,-5,-6,-1,6,262,390,140,-7,10,-2,-9,-3,-4,-7,160,-1,176,48,-4,-2,-6,-1,260,324,80,272,-8,-1,-7,-5,-8,266,266,40,298,-3,-8,-3,-9,-6,-5,74,72,-1,74",
        66,
        "07:3",
        "-",
        Technique::ForcingXChain,
    ),
    (
        "-9,26,18,-6,-8,30,-7,14,-1,-7,154,-3,-1,18,26,-6,138,-9,-6,139,3,6,-7,-9,134,142,-5,-4,-3,-8,82,19,65,18,-9,-6,19,-7,19,-9,-6,150,-4,150,134,18,-9,-6,-4,22,146,150,-1,-7,-3,19,-9,210,-4,65,146,-6,130,147,19,-7,150,23,-6,-9,150,-4,146,-6,-4,150,-9,22,-1,-7,134",
        65,
        "25:3 77:3",
        "-",
        Technique::XCycle,
    ),
    (
        "-1,-8,-7,-4,-6,-5,-3,-9,-2,-3,-6,-2,-7,-9,-8,-5,-4,-1,-9,-5,-4,5,6,3,-7,-6,-8,144,-2,-3,-6,-7,257,384,17,-4,176,-4,-1,20,134,258,416,18,-7,176,-7,-9,17,130,-4,160,19,-3,-7,-9,-5,-2,-4,-3,-1,-8,-6,-2,-1,-6,-8,-5,-7,-4,-3,-9,-4,-3,-8,-9,-1,-6,-2,-7,-5",
        66,
        "40:2 52:5",
        "-",
        Technique::YCycle,
    ),
    (
        "-9,129,72,68,45,61,-2,184,112,-3,129,74,66,43,59,240,184,-9,-6,-5,74,-9,-8,10,76,12,-1,-7,-4,-8,-5,35,37,-9,38,34,-5,-6,-1,6,262,390,140,-7,10,-2,-9,-3,-4,-7,160,-1,176,48,-4,-2,-6,-1,260,324,80,272,-8,-1,-7,-5,-8,266,266,40,298,-3,-8,-3,-9,-6,-5,74,72,-1,74",
        71,
        "14:2 15:7 41:2 68:2",
        "-",
        Technique::XyCycle,
    ),
    (
        "-9,129,72,68,45,61,-2,184,112,-3,129,74,66,43,57,176,184,-9,-6,-5,74,-9,-8,10,76,12,-1,-7,-4,-8,-5,35,37,-9,38,34,-5,-6,-1,6,262,388,140,-7,10,-2,-9,-3,-4,-7,160,-1,176,48,-4,-2,-6,-1,260,324,80,272,-8,-1,-7,-5,-8,266,264,40,298,-3,-8,-3,-9,-6,-5,74,72,-1,74",
        71,
        "03:7",
        "3=3",
        Technique::ForcingChain,
    ),
    (
        "-7,-3,-6,-2,-8,-9,-5,-4,-1,-9,-8,-2,9,25,17,-7,-3,-6,24,-1,24,-7,-3,-6,-8,-2,-9,10,-7,-1,-8,274,22,302,304,30,130,-5,388,-6,258,-4,262,-1,-7,-6,258,268,261,-7,23,266,-8,30,146,-4,400,261,291,-7,295,304,22,-3,290,272,265,299,-8,299,-7,26,-1,290,-7,-5,298,6,302,288,-8",
        67,
        "38:8 38:9",
        "38=3",
        Technique::ForcingXChain,
    ),
    (
        "-6,272,-2,144,400,-7,-1,-3,-4,145,401,-7,-3,-4,272,18,146,-6,-4,-3,144,-1,-2,-6,-7,144,-9,144,-6,152,-7,-1,-2,-9,24,-3,21,-2,-9,48,52,-4,-8,-7,17,84,81,13,-9,20,-8,-6,27,19,-9,144,-6,138,-7,-3,26,19,19,71,65,5,10,272,272,14,-6,-8,150,-4,148,162,160,-1,22,-9,-7",
        79,
        "52:5",
        "-",
        Technique::Nishio,
    ),
    (
        "-9,26,18,-6,-8,30,-7,14,-1,-7,154,-3,-1,18,26,-6,138,-9,-6,139,3,6,-7,-9,134,138,-5,-4,-3,-8,82,3,65,18,-9,-6,19,-7,19,-9,-6,150,-4,150,134,18,-9,-6,-4,22,146,150,-1,-7,-3,19,-9,208,-4,65,146,-6,130,131,19,-7,134,7,-6,-9,148,-4,146,-6,-4,150,-9,18,-1,-7,134",
        83,
        "57:8",
        "-",
        Technique::MultipleForcingChains,
    ),
    (
        "-9,26,18,-6,-8,30,-7,14,-1,-7,154,-3,-1,18,26,-6,138,-9,-6,139,3,6,-7,-9,134,138,-5,-4,-3,-8,82,3,65,18,-9,-6,19,-7,19,-9,-6,150,-4,150,134,18,-9,-6,-4,22,146,150,-1,-7,-3,19,-9,208,-4,65,146,-6,130,131,19,-7,134,7,-6,-9,150,-4,146,-6,-4,150,-9,18,-1,-7,134",
        82,
        "70:2",
        "-",
        Technique::MultipleForcingChains,
    ),
    (
        "192,-9,-4,148,-2,-6,148,-1,196,162,160,-1,28,76,-9,30,198,236,98,-3,-5,-1,200,192,266,194,360,132,-4,-7,384,-1,-2,388,-6,-5,-9,18,-6,140,76,212,-1,198,196,-1,18,132,452,-6,84,262,-4,324,164,161,-2,68,-9,69,140,-5,140,-4,129,-9,-6,-5,133,-7,132,-2,-5,-7,132,-2,132,-4,-6,-9,-1",
        89,
        "17:7",
        "-",
        Technique::DynamicForcingChains,
    ),
    (
        "321,-5,-2,260,-4,-6,-8,325,69,425,429,388,276,148,-7,24,-2,29,456,460,452,-2,148,-1,-6,332,92,112,100,-4,-8,116,22,-9,37,23,-2,484,468,-4,-1,272,80,52,20,368,356,-1,84,118,278,90,60,-8,344,330,-6,-1,82,26,-3,-8,90,217,203,208,84,-9,156,10,88,-6,-3,202,208,-6,82,154,-1,88,-9",
        89,
        "64:4",
        "-",
        Technique::DynamicForcingChains,
    ),
    (
        "115,90,107,357,285,124,325,277,-8,241,208,-3,353,273,240,-4,273,-2,209,-9,73,197,-2,220,69,-6,81,151,158,11,140,-7,-9,37,157,57,468,220,328,140,-6,-1,-2,412,280,389,-6,265,-5,132,-2,389,-7,265,358,70,-8,359,269,100,-5,265,361,356,-1,352,356,156,92,160,-2,360,-4,66,-5,483,385,224,353,385,-3",
        97,
        "45:3",
        "-",
        Technique::DynamicForcingChainsPlus,
    ),
];

/// Runs the ladder's chain rungs in order on the state; the first hint.
fn ladder_first(c: &Candidates) -> Option<Step> {
    LADDER.iter().find_map(|rung| match *rung {
        Rung::Chains(m) => first(c, m),
        _ => None,
    })
}

#[test]
fn chain_steps_are_the_ones_se_takes() {
    for &(text, value, elims, place, technique) in CASES {
        let c = state(text);
        let s = ladder_first(&c).expect("a chain step");
        let mut rm: Vec<String> = s
            .eliminations
            .iter()
            .map(|&(x, d)| format!("{x:02}:{d}"))
            .collect();
        rm.sort();
        let placed = s
            .placements
            .first()
            .map_or("-".to_owned(), |&(x, d)| format!("{x}={d}"));
        assert_eq!(
            (s.technique, s.value, rm.join(" "), placed),
            (technique, value, elims.to_owned(), place.to_owned()),
            "{}",
            s.explanation
        );
        assert!(!s.cells.is_empty() && !s.explanation.is_empty());
    }
}

/// The first hint's explanation reads as a chain players write.
#[test]
fn a_turbot_fish_reads_as_a_chain() {
    let (text, ..) = CASES[0];
    let s = ladder_first(&state(text)).unwrap();
    assert_eq!(
        s.explanation,
        "forcing X-chain: r1c8=3 implies its opposite: \
         r1c8=3 - r3c7=3 = r5c7=3 - r5c4=3 = r1c4=3 - r1c8=3, so r1c8<>3"
    );
}

/// A search stops when asked, with Stopped.
#[test]
fn a_search_stops_when_asked() {
    let (text, ..) = CASES[11];
    let c = state(text);
    let mode = Chaining {
        multiple: true,
        dynamic: true,
        nishio: false,
        level: 2,
    };
    let mut calls = 0;
    let r = super::find(
        &c,
        mode,
        false,
        &mut |_| true,
        &mut || {
            calls += 1;
            calls < 50
        },
        None,
    );
    assert_eq!(r, Err(crate::logic::Stopped));
}

/// Rates the puzzle in `SE_PUZZLE` on SE's ladder, printing each step
/// with its time: `SE_PUZZLE=... cargo test --release -p sudoku-core
/// chains::tests::rate_one -- --ignored --nocapture`.
#[test]
#[ignore]
fn rate_one() {
    let Ok(text) = std::env::var("SE_PUZZLE") else {
        return;
    };
    let mut c = Candidates::from_grid(&Grid::from_text(&text).unwrap());
    let start = std::time::Instant::now();
    while !c.is_solved() {
        let t = std::time::Instant::now();
        let Some(s) = crate::logic::se::next_step(&c, &mut || true).unwrap() else {
            eprintln!("stuck");
            break;
        };
        eprintln!(
            "{:?} {} {:?} {}",
            s.technique,
            s.value,
            t.elapsed(),
            s.explanation
        );
        c.apply(&s);
    }
    eprintln!("total {:?}", start.elapsed());
}

/// Other sides: a 6x6 grid with 2x3 boxes. Its first row and column are
/// placed, so the rest is open; every mode up to level 1 runs, and every
/// step it reports is sound (the grid's solution keeps its digits).
#[test]
fn chains_run_at_other_sides() {
    use crate::puzzle::sized::{Shape, SizedGrid};
    let shape = Shape::new(2, 3).unwrap();
    // A valid 6x6 solution, to check soundness against.
    let solution: Vec<u8> = [
        [1, 2, 3, 4, 5, 6],
        [4, 5, 6, 1, 2, 3],
        [2, 3, 1, 5, 6, 4],
        [5, 6, 4, 2, 3, 1],
        [3, 1, 2, 6, 4, 5],
        [6, 4, 5, 3, 1, 2],
    ]
    .concat();
    let mut givens = vec![0u8; 36];
    for i in [0, 1, 2, 3, 4, 5, 6, 12, 18, 24, 30, 14, 21, 28, 35] {
        givens[i] = solution[i];
    }
    let c = Candidates::new(&SizedGrid::from_values(shape, givens).unwrap());
    let mut steps = 0;
    for rung in LADDER {
        let Rung::Chains(mode) = *rung else { continue };
        if mode.level > 1 {
            break;
        }
        super::find(
            &c,
            mode,
            false,
            &mut |s| {
                for &(x, d) in &s.placements {
                    assert_eq!(solution[x as usize], d, "{}", s.explanation);
                }
                for &(x, d) in &s.eliminations {
                    let placed = s.placements.iter().any(|&(p, _)| p == x);
                    assert!(placed || solution[x as usize] != d, "{}", s.explanation);
                }
                steps += 1;
                true
            },
            &mut || true,
            None,
        )
        .unwrap();
    }
    assert!(steps > 0);
}

/// The candidates of puzzle `g` with about one in `one_in` of those in
/// cells of three or more removed at random: states past the givens, not
/// all of them with a solution.
fn thinned(g: &Grid, rng: &mut Rng, one_in: u32) -> Candidates {
    let mut c = Candidates::from_grid(g);
    for cell in 0..81 {
        for d in digits_of(c.mask(cell)) {
            if c.value(cell) == 0 && c.mask(cell).count_ones() > 2 && rng.below(one_in) == 0 {
                c.eliminate(cell, d);
            }
        }
    }
    c
}

/// The closure a static search filters its cells and regions by holds
/// each static run whole, and is that run when no contradiction cut it
/// short: on reference puzzles, with some candidates removed at random,
/// from every potential.
#[test]
fn reach_is_the_closure_of_static_runs() {
    let mut rng = Rng::new(99);
    let mode = Chaining {
        multiple: true,
        dynamic: false,
        nishio: false,
        level: 0,
    };
    let (mut exact, mut cut) = (0, 0);
    for (g, ..) in crate::logic::se::tests::reference().iter().take(60) {
        let c = thinned(g, &mut rng, 6);
        let mut eng = Engine::new(&c, mode);
        let reach = super::reach::Reach::new(&mut eng).expect("small enough");
        for cell in 0..81 {
            for d in digits_of(c.mask(cell)) {
                for on in [true, false] {
                    let p = eng.g.pot(cell, d, on);
                    let run = eng.chain(p, &mut || true).unwrap();
                    let mut pots: Vec<u32> = run
                        .ons
                        .iter()
                        .chain(&run.offs)
                        .map(|&i| run.nodes[i as usize].pot)
                        .collect();
                    pots.sort_unstable();
                    let mut closure = reach.closure(p);
                    closure.sort_unstable();
                    if run.absurd.is_none() {
                        assert_eq!(pots, closure, "from {cell} {d} {on}");
                        exact += 1;
                    } else {
                        assert!(pots.iter().all(|q| closure.binary_search(q).is_ok()));
                        cut += 1;
                    }
                }
            }
        }
    }
    assert!(exact > 1000 && cut > 100, "{exact} exact, {cut} cut short");
}

/// Searches that skip starts and runs by their closures find every hint
/// the full searches find, in the same order: level-0 chains and static
/// multiple chains, on reference states with candidates removed at random.
#[test]
fn pruned_searches_find_what_full_searches_find() {
    let mut rng = Rng::new(7);
    let modes = [
        Chaining {
            multiple: false,
            dynamic: false,
            nishio: false,
            level: 0,
        },
        Chaining {
            multiple: true,
            dynamic: false,
            nishio: false,
            level: 0,
        },
    ];
    let mut hints = [0usize; 2];
    for (g, ..) in crate::logic::se::tests::reference().iter().take(80) {
        let c = thinned(g, &mut rng, 4);
        for (m, &mode) in modes.iter().enumerate() {
            let mut all = Vec::new();
            for prune in [true, false] {
                let mut eng = Engine::new(&c, mode);
                eng.prune = prune;
                let found = super::collect(&mut eng, &mut || true, None).unwrap();
                let steps: Vec<String> = found
                    .recs
                    .iter()
                    .map(|r| format!("{:?}", super::step(&mut eng, &found.runs, r)))
                    .collect();
                all.push(steps);
            }
            assert_eq!(all[0], all[1], "mode {mode:?}");
            hints[m] += all[0].len();
        }
    }
    assert!(hints[0] > 100 && hints[1] > 100, "{hints:?}");
}

/// A walk's Nishio memory changes no answer: on reference puzzles, step
/// by step (a Nishio step applied when there is one, else a candidate
/// removed at random), each search with the memory of the last finds the
/// hint a search without it finds, and skips runs.
#[test]
fn nishio_with_memory_finds_what_a_fresh_search_finds() {
    let mode = Chaining {
        multiple: false,
        dynamic: true,
        nishio: true,
        level: 0,
    };
    let mut rng = Rng::new(5);
    let (mut hints, mut steps, mut skipped) = (0, 0, 0);
    for (g, ..) in crate::logic::se::tests::reference()
        .iter()
        .step_by(9)
        .take(40)
    {
        let mut c = Candidates::from_grid(g);
        let mut memory = super::Memory::default();
        for _ in 0..12 {
            let with = first_with(&c, mode, Some(&mut memory));
            let fresh = first(&c, mode);
            assert_eq!(format!("{with:?}"), format!("{fresh:?}"));
            steps += 1;
            skipped += memory.nishio.count();
            hints += usize::from(fresh.is_some());
            if !advance(&mut c, fresh, &mut rng, 2) {
                break;
            }
        }
    }
    assert!(
        hints > 50 && steps > 200 && skipped > 10_000,
        "{hints} hints in {steps} steps, {skipped} runs known"
    );
}

/// A walk's memory of level-0 starts and closures changes no answer: on
/// reference puzzles and on 6x6 and 12x12 ones, step by step (the level-0
/// step applied when there is one, else a candidate removed at random, a
/// cell's last but one among them), each search with the memory of the
/// last finds the hint a search without it finds, and skips starts; when
/// level 0 finds nothing, so does the static multiple search that reads
/// its closures.
#[test]
fn level_0_with_memory_finds_what_a_fresh_search_finds() {
    let mode = Chaining {
        multiple: false,
        dynamic: false,
        nishio: false,
        level: 0,
    };
    let multiple = Chaining {
        multiple: true,
        ..mode
    };
    let mut rng = Rng::new(11);
    let mut puzzles: Vec<Candidates> = crate::logic::se::tests::reference()
        .iter()
        .step_by(7)
        .take(50)
        .map(|(g, ..)| Candidates::from_grid(g))
        .collect();
    // Other sizes: a random solution with four cells in ten given.
    for (rows, cols, seed) in [(2, 3, 1), (2, 3, 2), (3, 4, 3), (3, 4, 4)] {
        use crate::puzzle::sized::{Shape, SizedGrid};
        let shape = Shape::new(rows, cols).expect("a shape");
        let mut solver = crate::solver::sized::SizedSolver::new(&SizedGrid::empty(shape), 1);
        let mut rng = Rng::new(seed);
        let solution = crate::generate::sized::solution_grid(&mut solver, shape, &mut rng)
            .values()
            .to_vec();
        let values = solution
            .iter()
            .map(|&v| if rng.below(10) < 6 { 0 } else { v })
            .collect();
        let puzzle = SizedGrid::from_values(shape, values).expect("a grid");
        puzzles.push(Candidates::new(&puzzle));
    }
    let (mut hints, mut steps, mut skipped, mut shared) = (0, 0, 0, 0);
    for mut c in puzzles {
        let mut memory = super::Memory::default();
        for _ in 0..15 {
            let with = first_with(&c, mode, Some(&mut memory));
            let fresh = first(&c, mode);
            assert_eq!(format!("{with:?}"), format!("{fresh:?}"));
            steps += 1;
            skipped += memory.x_starts.count();
            if fresh.is_none() {
                let with = first_with(&c, multiple, Some(&mut memory));
                let fresh = first(&c, multiple);
                assert_eq!(format!("{with:?}"), format!("{fresh:?}"));
                shared += 1;
            }
            hints += usize::from(fresh.is_some());
            if !advance(&mut c, fresh, &mut rng, 1) {
                break;
            }
        }
    }
    assert!(
        hints > 50 && steps > 300 && skipped > 10_000 && shared > 50,
        "{hints} hints in {steps} steps, {skipped} starts known, {shared} closures shared"
    );
}

/// Time to rate each group of the reference set on SE's ladder (mean and
/// slowest): `cargo test --release -p sudoku-core chains::tests::timings
/// -- --ignored --nocapture`.
#[test]
#[ignore]
fn timings() {
    use std::collections::BTreeMap;
    use std::time::Duration;
    let mut by: BTreeMap<String, (u32, Duration, Duration)> = BTreeMap::new();
    for (g, _, _, _, group) in crate::logic::se::tests::reference() {
        let t = std::time::Instant::now();
        crate::logic::se::rate(
            Candidates::from_grid(&g),
            &mut || true,
            crate::logic::se::UNRATED,
        )
        .unwrap();
        let e = by.entry(group).or_default();
        e.0 += 1;
        e.1 += t.elapsed();
        e.2 = e.2.max(t.elapsed());
    }
    for (group, (n, total, max)) in by {
        eprintln!("{group:22} mean {:?} max {max:?}", total / n);
    }
}

/// A dynamic chain names the eliminations it relies on besides its own
/// path, each as the chain from the same assumption that made it: every
/// chain of the explanation starts from the assumption, and every branch
/// after ", with " ends on a candidate going off.
#[test]
fn dynamic_chains_write_the_branches_they_rely_on() {
    let mut branched = 0;
    for &(text, .., technique) in CASES {
        if !matches!(
            technique,
            Technique::Nishio
                | Technique::DynamicForcingChains
                | Technique::DynamicForcingChainsPlus
        ) {
            continue;
        }
        let s = ladder_first(&state(text)).unwrap();
        let Some((chains, rest)) = s.explanation.split_once(", with ") else {
            continue;
        };
        // The assumptions the chains start from.
        let starts: Vec<&str> = chains
            .split_once(": ")
            .unwrap()
            .1
            .split("; ")
            .map(|c| c.split(' ').next().unwrap())
            .collect();
        branched += 1;
        let branches = rest.rsplit_once(", so ").expect("a conclusion").0;
        for branch in branches.split("; ").filter(|b| !b.starts_with("and ")) {
            let start = branch.split(' ').next().unwrap();
            assert!(
                starts.contains(&start),
                "{start} starts no chain: {}",
                s.explanation
            );
            let last = branch.rsplit(' ').nth(1).unwrap();
            assert_eq!(
                last, "-",
                "a branch ends on an elimination: {}",
                s.explanation
            );
        }
    }
    assert!(
        branched > 0,
        "no dynamic case relies on an earlier elimination"
    );
}

/// One step of a test walk: the hint applied, or else a random candidate
/// removed from a random cell of more than `wide` candidates; false when
/// the walk is over (solved, a dead cell, or no such cell).
fn advance(c: &mut Candidates, hint: Option<Step>, rng: &mut Rng, wide: u32) -> bool {
    if let Some(s) = hint {
        c.apply(&s);
    } else {
        let cells = c.side() * c.side();
        let open: Vec<usize> = (0..cells)
            .filter(|&x| c.mask(x).count_ones() > wide)
            .collect();
        if open.is_empty() {
            return false;
        }
        let x = open[rng.below(open.len() as u32) as usize];
        let ds: Vec<u8> = digits_of(c.mask(x)).collect();
        c.eliminate(x, ds[rng.below(ds.len() as u32) as usize]);
    }
    !(c.is_solved() || c.dead_cell().is_some())
}
