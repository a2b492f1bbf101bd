// What both tests check a board against: the rules, and the givens kept;
// and a solver of their own, for the digits a player would type.

export const CLASSIC =
  '53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79';

/** Why `solved` (81 characters) is not a solution of `puzzle`, or null. */
export function whyNotSolution(puzzle, solved) {
  if (!/^[1-9]{81}$/.test(solved)) return `not 81 digits: ${JSON.stringify(solved)}`;
  for (let i = 0; i < 81; i++) {
    if (/[1-9]/.test(puzzle[i]) && puzzle[i] !== solved[i]) {
      return `cell ${i} holds ${solved[i]} where the puzzle gives ${puzzle[i]}`;
    }
  }
  for (let u = 0; u < 9; u++) {
    const units = {
      row: [...Array(9)].map((_, k) => u * 9 + k),
      column: [...Array(9)].map((_, k) => k * 9 + u),
      box: [...Array(9)].map((_, k) => (Math.floor(u / 3) * 3 + Math.floor(k / 3)) * 9 + (u % 3) * 3 + (k % 3)),
    };
    for (const [kind, cells] of Object.entries(units)) {
      const digits = new Set(cells.map((c) => solved[c]));
      if (digits.size !== 9) return `${kind} ${u} repeats a digit`;
    }
  }
  return null;
}

/** The first solution of `puzzle` (81 characters, '.' or '0' blank) by
 * backtracking, or null: the test's own answer, independent of the
 * server's, to type digits the player would know. */
export function solveLocally(puzzle) {
  const g = [...puzzle].map((c) => (/[1-9]/.test(c) ? Number(c) : 0));
  const fits = (i, d) => {
    const r = Math.floor(i / 9);
    const c = i % 9;
    const b = Math.floor(r / 3) * 27 + Math.floor(c / 3) * 3;
    for (let k = 0; k < 9; k++) {
      if (g[r * 9 + k] === d || g[k * 9 + c] === d || g[b + Math.floor(k / 3) * 9 + (k % 3)] === d) return false;
    }
    return true;
  };
  const go = (i) => {
    if (i === 81) return true;
    if (g[i]) return go(i + 1);
    for (let d = 1; d <= 9; d++) {
      if (fits(i, d)) {
        g[i] = d;
        if (go(i + 1)) return true;
      }
    }
    g[i] = 0;
    return false;
  };
  return go(0) ? g.join('') : null;
}

/** The empty cells of `board` (81 characters, '.' or '0' blank) that no
 * digit fits: what Validate's `current_no_candidate_cells` names, worked
 * out here on its own. */
export function deadCells(board) {
  const g = [...board].map((c) => (/[1-9]/.test(c) ? Number(c) : 0));
  const dead = [];
  for (let i = 0; i < 81; i++) {
    if (g[i]) continue;
    const r = Math.floor(i / 9);
    const c = i % 9;
    const b = Math.floor(r / 3) * 27 + Math.floor(c / 3) * 3;
    const used = new Set();
    for (let k = 0; k < 9; k++) {
      used.add(g[r * 9 + k]);
      used.add(g[k * 9 + c]);
      used.add(g[b + Math.floor(k / 3) * 9 + (k % 3)]);
    }
    used.delete(0);
    if (used.size === 9) dead.push(i);
  }
  return dead;
}
