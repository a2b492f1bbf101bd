// What both tests check a board against: the rules, and the givens kept.

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
