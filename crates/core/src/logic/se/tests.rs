use super::*;
use crate::logic::Technique;
use crate::puzzle::Grid;

/// The reference set: puzzle, ER, EP, ED, group, index (tenths).
pub(crate) fn reference() -> Vec<(Grid, u16, u16, u16, String)> {
    let text = include_str!("../../../../../data/se_reference.txt");
    let tenths = |s: &str| (s.parse::<f64>().expect("a rating") * 10.0).round() as u16;
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                Grid::from_text(w[0]).expect("a puzzle"),
                tenths(w[1]),
                tenths(w[2]),
                tenths(w[3]),
                w[4].to_owned(),
            )
        })
        .collect()
}

fn rated(g: &Grid) -> SeRating {
    rate(Candidates::from_grid(g), &mut || true, UNRATED).expect("not stopped")
}

/// The reference set's QQwing and top1465 puzzles (512 of 532) rate as
/// serate rates them: ER, EP and ED all equal. The forum's hardest take
/// seconds each (nested chains): the ignored `agreement` below and
/// `cargo bench --bench logic -- serate` check them in a release build.
#[test]
fn reference_ratings_equal_serates() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (g, er, ep, ed, group) in reference() {
        if group == "forum_hardest" {
            continue;
        }
        checked += 1;
        let r = rated(&g);
        if (r.er, r.ep, r.ed) != (er, ep, ed) {
            wrong.push(format!(
                "{g} {group}: ours {} {} {}, serate {er} {ep} {ed}",
                r.er, r.ep, r.ed
            ));
        }
    }
    assert_eq!(checked, 512);
    assert!(
        wrong.is_empty(),
        "{} of {checked}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Agreement with serate over the whole set, by group: run it with
/// `cargo test --release -p sudoku-core se::tests::agreement -- --ignored --nocapture`.
#[test]
#[ignore]
fn agreement() {
    use std::collections::BTreeMap;
    let mut by: BTreeMap<String, [u32; 5]> = BTreeMap::new();
    let mut asks: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (g, er, ep, ed, group) in reference() {
        let start = std::time::Instant::now();
        let mut n = 0u64;
        let r = rate(
            Candidates::from_grid(&g),
            &mut || {
                n += 1;
                true
            },
            UNRATED,
        )
        .expect("not stopped");
        asks.entry(group.clone()).or_default().push(n);
        let e = by.entry(group).or_default();
        e[0] += 1;
        e[1] += u32::from(r.er == er);
        e[2] += u32::from(r.er.abs_diff(er) <= 1);
        e[3] += u32::from(r.ep == ep && r.ed == ed);
        if r.er != er {
            eprintln!(
                "{} ours {} {} {} serate {er} {ep} {ed} ({:?}; {:?})",
                g,
                r.er,
                r.ep,
                r.ed,
                start.elapsed(),
                r.steps.iter().max_by_key(|s| s.value).map(|s| s.technique)
            );
        }
    }
    for (group, [n, er, near, pd, _]) in &by {
        let a = asks.get_mut(group).expect("counted");
        a.sort_unstable();
        println!(
            "{group:22} {n:4} ER equal {er:4} within 0.1 {near:4} EP&ED equal {pd:4}; go_on asked median {} max {}",
            a[a.len() / 2],
            a[a.len() - 1]
        );
    }
}

/// Our technique for a step SE names `name` (SE calls a forcing X-chain of
/// six links a turbot fish, a four-cell X-cycle a generalized X-wing, and
/// writes the chaining level in a suffix).
fn technique_of(name: &str, value: u16) -> Option<Technique> {
    use Technique as T;
    let t = match name {
        "Hidden Single" if value == 10 => T::FullHouse,
        "Hidden Single" => T::HiddenSingle,
        "Direct Pointing" => T::DirectPointing,
        "Direct Claiming" => T::DirectClaiming,
        "Direct Hidden Pair" => T::DirectHiddenPair,
        "Naked Single" => T::NakedSingle,
        "Direct Hidden Triplet" => T::DirectHiddenTriple,
        "Pointing" => T::Pointing,
        "Claiming" => T::Claiming,
        "Naked Pair" => T::NakedPair,
        "X-Wing" => T::XWing,
        "Hidden Pair" => T::HiddenPair,
        "Naked Triplet" => T::NakedTriple,
        "Swordfish" => T::Swordfish,
        "Hidden Triplet" => T::HiddenTriple,
        "XY-Wing" => T::XyWing,
        "XYZ-Wing" => T::XyzWing,
        "Naked Quad" => T::NakedQuad,
        "Jellyfish" => T::Jellyfish,
        "Hidden Quad" => T::HiddenQuad,
        "Aligned Pair Exclusion" => T::AlignedPairExclusion,
        "Aligned Triplet Exclusion" => T::AlignedTripleExclusion,
        "Bidirectional Cycle" => T::XyCycle,
        "Bidirectional Y-Cycle" => T::YCycle,
        "Bidirectional X-Cycle" | "Generalized X-Wing" => T::XCycle,
        "Forcing Chain" | "Forcing Y-Chain" => T::ForcingChain,
        "Forcing X-Chain" | "Turbot Fish" => T::ForcingXChain,
        _ if name.starts_with("Unique Rectangle") => T::UniqueRectangle,
        _ if name.starts_with("Unique Loop") => T::UniqueLoop,
        _ if name.starts_with("BUG") || name.starts_with("Bivalue") => T::Bug,
        _ if name.starts_with("Nishio") => T::Nishio,
        _ if name.contains("(+)") => T::DynamicForcingChainsPlus,
        _ if name.contains("(+ ") => T::NestedForcingChains,
        _ if name.starts_with("Dynamic") => T::DynamicForcingChains,
        _ if name.ends_with("Forcing Chains") => T::MultipleForcingChains,
        _ => return None,
    };
    Some(t)
}

/// A cell as SE's path writes it (r4c5) within `n` columns.
fn cell_of(rc: &str) -> u16 {
    let (r, c) = rc[1..].split_once('c').expect("rRcC");
    (r.parse::<u16>().unwrap() - 1) * 9 + c.parse::<u16>().unwrap() - 1
}

/// One step of SE's path: value, name, placements, eliminations (sorted).
type SeStep = (u16, String, Vec<(u16, u8)>, Vec<(u16, u8)>);

pub(crate) fn paths() -> Vec<(Grid, Vec<SeStep>)> {
    let text = include_str!("../../../../../data/se_paths.txt");
    let mut out: Vec<(Grid, Vec<SeStep>)> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(p) = line.strip_prefix("P ") {
            out.push((Grid::from_text(p).expect("a puzzle"), Vec::new()));
            continue;
        }
        let Some(s) = line.strip_prefix("S ") else {
            continue;
        };
        let mut parts = s.split(" | ");
        let head = parts.next().unwrap();
        let (value, name) = head.split_once(' ').unwrap();
        let (mut place, mut remove) = (Vec::new(), Vec::new());
        for part in parts {
            if let Some(p) = part.strip_prefix("place ") {
                let (rc, d) = p.split_once('=').unwrap();
                place.push((cell_of(rc), d.parse().unwrap()));
            } else if let Some(r) = part.strip_prefix("remove") {
                for w in r.split_whitespace() {
                    let (rc, d) = w.split_once('-').unwrap();
                    remove.push((cell_of(rc), d.parse().unwrap()));
                }
            }
        }
        remove.sort_unstable();
        out.last_mut().expect("a P line first").1.push((
            value.parse().unwrap(),
            name.to_owned(),
            place,
            remove,
        ));
    }
    out
}

/// Hint by hint from a puzzle to its solution: each step is checked
/// against the solution, and its technique, value, placements and
/// eliminations are those of SE's path at that point.
#[test]
fn hints_walk_serates_path() {
    let mut wrong = Vec::new();
    for (g, path) in paths() {
        let solution = crate::solver::solve(&g).expect("a solution");
        let mut state = Candidates::from_grid(&g);
        for (i, (value, name, place, remove)) in path.iter().enumerate() {
            let Some(step) = crate::logic::hint(&state) else {
                wrong.push(format!("{g} step {i}: SE {value} {name}; ours none"));
                break;
            };
            for &(c, d) in &step.placements {
                assert_eq!(solution.0[c as usize], d, "{g} step {i}: {step:?}");
            }
            for &(c, d) in &step.eliminations {
                assert_ne!(solution.0[c as usize], d, "{g} step {i}: {step:?}");
            }
            let mut elims = step.eliminations.clone();
            elims.sort_unstable();
            let same = technique_of(name, *value) == Some(step.technique)
                && step.value == *value
                && &step.placements == place
                && &elims == remove;
            if !same {
                wrong.push(format!(
                    "{g} step {i}: SE {value} {name} {place:?} {remove:?}; ours {} {} {:?} {elims:?}",
                    step.value, step.technique, step.placements
                ));
                break;
            }
            state.apply(&step);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// How long SE's ladder takes on half-blank grids of each size (a solved
/// grid from the engine with every other cell, by a fixed stride, blank):
/// `cargo test --release -p sudoku-core --lib se::tests::large -- --ignored --nocapture`.
#[test]
#[ignore]
fn large_grids_time() {
    use crate::puzzle::sized::{Shape, SizedGrid};
    for (r, c) in [(4, 4), (5, 5), (6, 6), (7, 7), (8, 8)] {
        let shape = Shape::new(r, c).unwrap();
        let (_, solution) = crate::solver::sized::run_sized(&SizedGrid::empty(shape), 1, u64::MAX);
        let mut values = solution.expect("a grid").values().to_vec();
        let cells = values.len();
        for (i, v) in values.iter_mut().enumerate().take(cells) {
            // splitmix64 of the cell: about half blank.
            let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            if (z ^ (z >> 31)) & 1 == 0 {
                *v = 0;
            }
        }
        let puzzle = SizedGrid::from_values(shape, values).unwrap();
        let start = std::time::Instant::now();
        let deadline = start + std::time::Duration::from_secs(20);
        let rating = rate(
            Candidates::new(&puzzle),
            &mut || std::time::Instant::now() < deadline,
            UNRATED,
        );
        println!(
            "{}x{}: {:?} in {:?}",
            r * c,
            r * c,
            rating.as_ref().map(|r| (r.er, r.steps.len())),
            start.elapsed()
        );
    }
}
