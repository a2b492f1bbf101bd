use super::*;
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

#[test]
fn easy_puzzles_rate_as_serate_rates_them() {
    let mut equal = 0;
    let mut total = 0;
    for (g, er, ep, ed, group) in reference() {
        if group != "qqwing_easy" {
            continue;
        }
        let r = rated(&g);
        total += 1;
        if (r.er, r.ep, r.ed) == (er, ep, ed) {
            equal += 1;
        } else {
            eprintln!(
                "{} ours {} {} {} serate {er} {ep} {ed}",
                g, r.er, r.ep, r.ed
            );
        }
    }
    assert!(equal * 100 >= total * 95, "{equal} of {total} equal");
}

/// Agreement with serate over the whole set, by group: run it with
/// `cargo test --release -p sudoku-core se::tests::agreement -- --ignored --nocapture`.
#[test]
#[ignore]
fn agreement() {
    use std::collections::BTreeMap;
    let mut by: BTreeMap<String, [u32; 5]> = BTreeMap::new();
    for (g, er, ep, ed, group) in reference() {
        let start = std::time::Instant::now();
        let r = rated(&g);
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
        println!("{group:22} {n:4} ER equal {er:4} within 0.1 {near:4} EP&ED equal {pd:4}");
    }
}
