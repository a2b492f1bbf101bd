// Puzzle text as people paste it, turned into the 81-character line that
// sudoku.v1.Grid.text carries, the way `sudoku solve` reads its input
// (src/puzzle/text.rs): an 81-character line (text after the 81st cell is
// ignored), nine lines of nine cells with or without spaces and with
// `|`, `-`, `+` rulers, or a bracketed board such as [["5","3",".",...],...].
// Lines starting with '#' and blank lines are skipped.
//
// Only layout is removed here: every other character is kept in its place,
// so the server reads the cells and names a bad character by its cell.

const CELLS = 81;
const CELL = /^[0-9.]$/;

/** The 81-character line of `text` (or, when it has no such shape, the
 * characters left after removing layout, for the server to report). */
export function toLine(text) {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length === 0) return '';
  const first = lines[0];
  // One puzzle per line, maybe followed by a rating or a comment.
  if (!first.startsWith('[') && first.length >= CELLS) {
    const head = [...first.slice(0, CELLS)];
    if (head.every((c) => CELL.test(c))) return head.join('');
  }
  const bracketed = first.startsWith('[');
  return lines
    .map((l) => (bracketed ? l.replace(/[\[\]"',\s]/g, '') : l.replace(/[\s|+\-]/g, '')))
    .join('');
}

/** `line` as 81 characters for the board: '' for a blank, the character
 * otherwise; null when it is not 81 characters long. */
export function toCells(line) {
  const chars = [...line];
  if (chars.length !== CELLS) return null;
  return chars.map((c) => (c === '.' || c === '0' ? '' : c));
}

/** The cells a google.rpc.BadRequest names: `cells[N]` in a field path
 * (from 0), `row R, column C` in a description (from 1). */
export function cellsOfViolations(violations) {
  const cells = new Set();
  for (const v of violations) {
    for (const m of v.field.matchAll(/cells\[(\d+)\]/g)) cells.add(Number(m[1]));
    for (const m of v.description.matchAll(/\brow (\d+), column (\d+)/g)) {
      cells.add((Number(m[1]) - 1) * 9 + Number(m[2]) - 1);
    }
  }
  return [...cells].filter((c) => c >= 0 && c < CELLS).sort((a, b) => a - b);
}

/** The cells of an ErrorInfo's `cells` metadata ("0,8"). */
export function cellsOfErrorInfo(info) {
  const listed = info?.metadata?.cells ?? '';
  return listed
    .split(',')
    .filter((s) => /^\d+$/.test(s))
    .map(Number)
    .filter((c) => c < CELLS);
}

/** "r1c1" of a cell index, as Hint's explanations name cells. */
export function rc(cell) {
  return `r${Math.floor(cell / 9) + 1}c${(cell % 9) + 1}`;
}

/** The cells that share a row, column or box with `cell`. */
export function peers(cell) {
  const r = Math.floor(cell / 9);
  const c = cell % 9;
  const b = Math.floor(r / 3) * 27 + Math.floor(c / 3) * 3;
  const out = new Set();
  for (let k = 0; k < 9; k++) {
    out.add(r * 9 + k);
    out.add(k * 9 + c);
    out.add(b + Math.floor(k / 3) * 9 + (k % 3));
  }
  out.delete(cell);
  return [...out];
}
