// The page: a place to play a 9x9 sudoku against the server that served
// it, through gRPC-Web. The puzzle (its givens) comes from Generate ("New
// puzzle"), the example, or the player's own text in any format `sudoku
// solve` reads; the player fills in digits and pencil marks on the board,
// with undo and redo. Hint sends the grid and the pencil marks and can
// apply its step; "Check my progress" sends the player's grid as
// Validate's `current` and marks the wrong cells; Solve fills in the
// solution. Failures are told in a player's words, the status details
// behind a toggle.

import { createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import { Label, Outcome, SudokuService } from './gen/sudoku/v1/sudoku_pb.js';
import { peers, rc, toCells, toLine } from './puzzle.js';
import { explain } from './words.js';

const CLASSIC = '53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79';
const TIMEOUT_MS = 10_000;
const GENERATE_TIMEOUT_MS = 60_000;
const ALL = 0x1ff;
const LEVELS = { easy: Label.EASY, medium: Label.MEDIUM, hard: Label.HARD, expert: Label.EXPERT };
const LABELS = { [Label.EASY]: 'Easy', [Label.MEDIUM]: 'Medium', [Label.HARD]: 'Hard', [Label.EXPERT]: 'Expert', [Label.EXTREME]: 'Extreme' };

const client = createClient(
  SudokuService,
  createGrpcWebTransport({ baseUrl: window.location.origin, useBinaryFormat: true }),
);

const $ = (id) => document.getElementById(id);
const boardEl = $('board');
const puzzleEl = $('puzzle');
const result = $('result');
const outcomeEl = $('outcome');
const sayEl = $('say');
const applyEl = $('apply');
const statsEl = $('stats');
const detailEl = $('detail');
const errorEl = $('error');
const pencilEl = $('pencil');
const setupEl = $('setup');
const busyButtons = ['new', 'hint', 'check', 'solve', 'apply'].map($);

// --- state -----------------------------------------------------------------
//
// givens: the puzzle, 81 characters ('' for a blank; any other character is
// kept where it was typed, for the server to name). entries: the player's
// digits in the blanks. marks: the player's pencil marks, a bitmask per
// cell (bit d-1 for digit d; 0 is "none written"). Undo and redo keep
// copies of entries and marks: 162 small numbers a move.

const state = {
  givens: Array(81).fill(''),
  entries: Array(81).fill(''),
  marks: Array(81).fill(0),
  wrong: new Set(), // cells to show in red: a check's or an error's
  step: null, // the hint on show, until applied or the board changes
};
const undoStack = [];
const redoStack = [];
let cursor = 0;

const bit = (d) => 1 << (d - 1);
const digitsOf = (mask) => [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((d) => mask & bit(d));
const valueAt = (i) => state.givens[i] || state.entries[i];
const isDigit = (ch) => /^[1-9]$/.test(ch);

/** The grid as it stands (givens and entries) as Grid.text. */
function currentLine() {
  return state.givens.map((g, i) => g || state.entries[i] || '.').join('');
}

function givensLine() {
  return state.givens.map((g) => g || '.').join('');
}

/** Digits no peer of `i` holds: the candidates the grid alone leaves. */
function gridCandidates(i) {
  let mask = ALL;
  for (const p of peers(i)) if (isDigit(valueAt(p))) mask &= ~bit(Number(valueAt(p)));
  return mask;
}

// --- the board -------------------------------------------------------------

const cells = [];
for (let r = 0; r < 9; r++) {
  const row = document.createElement('div');
  row.className = 'row';
  row.setAttribute('role', 'row');
  for (let c = 0; c < 9; c++) {
    const i = r * 9 + c;
    const cell = document.createElement('div');
    cell.className = 'cell';
    cell.setAttribute('role', 'gridcell');
    cell.dataset.cell = String(i);
    cell.tabIndex = i === 0 ? 0 : -1;
    const value = document.createElement('span');
    value.className = 'value';
    value.setAttribute('aria-hidden', 'true');
    const marks = document.createElement('span');
    marks.className = 'marks';
    marks.setAttribute('aria-hidden', 'true');
    for (let d = 1; d <= 9; d++) marks.append(document.createElement('span'));
    // The cell's name, read by screen readers ("r1c2, empty, pencil 4 7"):
    // text of its own rather than aria-label, since the digits on show
    // (a value, or pencil marks) are not the words of the name.
    const name = document.createElement('span');
    name.className = 'sr';
    cell.append(name, value, marks);
    cell.addEventListener('click', () => select(i));
    cell.addEventListener('focus', () => select(i, false));
    row.append(cell);
    cells.push(cell);
  }
  boardEl.append(row);
}

for (const d of [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = d ? String(d) : '⌫';
  b.setAttribute('aria-label', d ? `Digit ${d}` : 'Clear the cell');
  b.dataset.digit = String(d);
  b.addEventListener('click', () => {
    if (d) typeDigit(cursor, d, false);
    else clearCell(cursor);
    cells[cursor].focus();
  });
  $('keypad').append(b);
}

function select(i, focus = true) {
  cursor = i;
  cells.forEach((c, k) => {
    c.tabIndex = k === i ? 0 : -1;
    c.classList.toggle('sel', k === i);
  });
  if (focus) cells[i].focus();
}

/** Shows the state on the board, with the hint on show (its cells, the
 * cells it changes and the candidates it removes). */
function render() {
  const step = state.step;
  const why = new Set(step?.cells ?? []);
  const targets = new Map();
  for (const p of step?.placements ?? []) targets.set(p.cell, { place: p.digit, remove: 0, add: 0 });
  for (const e of step?.eliminations ?? []) {
    const t = targets.get(e.cell) ?? { place: 0, remove: 0, add: 0 };
    t.remove |= bit(e.digit);
    targets.set(e.cell, t);
  }
  for (const e of step?.restorations ?? []) {
    const t = targets.get(e.cell) ?? { place: 0, remove: 0, add: 0 };
    t.add |= bit(e.digit);
    targets.set(e.cell, t);
  }
  cells.forEach((cell, i) => {
    const given = state.givens[i];
    const value = given || state.entries[i];
    const target = targets.get(i);
    // A cell the hint removes candidates from shows them even when the
    // player wrote none: the candidates the grid leaves.
    let marks = value ? 0 : state.marks[i];
    if (!value && target && (target.remove || target.add) && !marks) marks = gridCandidates(i);
    cell.querySelector('.value').textContent = value;
    const spans = cell.querySelectorAll('.marks span');
    for (let d = 1; d <= 9; d++) {
      const s = spans[d - 1];
      const shown = (marks | (target?.add ?? 0)) & bit(d);
      s.textContent = shown ? String(d) : '';
      s.className = target?.remove & bit(d) ? 'out' : target?.add & bit(d) ? 'in' : '';
    }
    cell.classList.toggle('given', given !== '');
    cell.classList.toggle('entry', given === '' && value !== '');
    cell.classList.toggle('bad', state.wrong.has(i));
    cell.classList.toggle('why', why.has(i));
    cell.classList.toggle('target', target !== undefined);
    if (state.wrong.has(i)) cell.setAttribute('aria-invalid', 'true');
    else cell.removeAttribute('aria-invalid');
    const parts = [rc(i), value ? value : 'empty'];
    if (given) parts.push('given');
    if (!value && state.marks[i]) parts.push(`pencil ${digitsOf(state.marks[i]).join(' ')}`);
    if (state.wrong.has(i)) parts.push('wrong');
    if (target) parts.push('the hint changes this cell');
    else if (why.has(i)) parts.push('part of the hint');
    cell.querySelector('.sr').textContent = parts.join(', ');
  });
  $('undo').disabled = undoStack.length === 0;
  $('redo').disabled = redoStack.length === 0;
  applyEl.hidden = step === null;
}

// --- moves -----------------------------------------------------------------

function snapshot() {
  return { entries: [...state.entries], marks: [...state.marks] };
}

/** Makes a move with `change(state)`, for undo; a move that changes
 * nothing is not kept. */
function move(change) {
  const before = snapshot();
  change(state);
  if (sameAs(before)) return false;
  undoStack.push(before);
  redoStack.length = 0;
  state.step = null;
  afterMove();
  return true;
}

function sameAs(s) {
  return s.entries.every((e, i) => e === state.entries[i]) && s.marks.every((m, i) => m === state.marks[i]);
}

function restore(from, to) {
  const s = from.pop();
  if (!s) return;
  to.push(snapshot());
  state.entries = s.entries;
  state.marks = s.marks;
  state.step = null;
  afterMove();
}

const undo = () => restore(undoStack, redoStack);
const redo = () => restore(redoStack, undoStack);

/** After the board changed: red cells stay red only while they hold the
 * digit that was checked; a full board is checked at once. */
function afterMove() {
  for (const i of [...state.wrong]) if (!state.entries[i]) state.wrong.delete(i);
  render();
  if (state.givens.some(isDigit) && cells.every((_, i) => isDigit(valueAt(i)))) {
    call('Checking', check);
  } else if (result.dataset.state === 'hint') {
    clearResult('Your move', 'done');
  }
}

/** Puts `d` in cell `i`, or with `pencil` toggles the pencil mark. */
function typeDigit(i, d, pencil) {
  if (setupEl.checked) {
    setGiven(i, String(d));
    return;
  }
  if (state.givens[i]) {
    say(`${rc(i)} is given: it stays ${state.givens[i]}`);
    return;
  }
  if (pencil || pencilEl.getAttribute('aria-pressed') === 'true') {
    if (state.entries[i]) return say(`${rc(i)} holds ${state.entries[i]}: clear it first to write pencil marks`);
    move((s) => (s.marks[i] ^= bit(d)));
  } else {
    move((s) => {
      s.entries[i] = s.entries[i] === String(d) ? '' : String(d);
      if (s.entries[i]) for (const p of peers(i)) s.marks[p] &= ~bit(d);
    });
  }
}

function clearCell(i) {
  if (setupEl.checked) return setGiven(i, '');
  if (state.givens[i]) return say(`${rc(i)} is given: it stays ${state.givens[i]}`);
  move((s) => {
    if (s.entries[i]) s.entries[i] = '';
    else s.marks[i] = 0;
  });
}

function say(text) {
  sayEl.textContent = text;
}

boardEl.addEventListener('keydown', (e) => {
  const i = Number(e.target.dataset?.cell);
  if (!Number.isInteger(i)) return;
  const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -9, ArrowDown: 9 };
  // Shift+3 is '#' on a US keyboard: the key's code says which digit.
  const digit = /^(?:Digit|Numpad)([1-9])$/.exec(e.code)?.[1] ?? (isDigit(e.key) ? e.key : null);
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (digit) {
    e.preventDefault();
    typeDigit(i, Number(digit), e.shiftKey);
  } else if (e.key in moves) {
    e.preventDefault();
    const c = i % 9;
    const next =
      e.key === 'ArrowLeft' ? (c > 0 ? i - 1 : i) : e.key === 'ArrowRight' ? (c < 8 ? i + 1 : i) : i + moves[e.key];
    if (next >= 0 && next < 81) select(next);
  } else if (['Backspace', 'Delete', '0', '.', ' '].includes(e.key)) {
    e.preventDefault();
    clearCell(i);
  } else if (e.key === 'Home') {
    e.preventDefault();
    select(i - (i % 9));
  } else if (e.key === 'End') {
    e.preventDefault();
    select(i - (i % 9) + 8);
  } else if (e.key === 'p' || e.key === 'P') {
    e.preventDefault();
    togglePencil();
  }
});

document.addEventListener('keydown', (e) => {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
  // The text box keeps its own undo.
  if (e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement) return;
  const key = e.key.toLowerCase();
  if (key === 'z' && !e.shiftKey) {
    e.preventDefault();
    undo();
  } else if (key === 'y' || (key === 'z' && e.shiftKey)) {
    e.preventDefault();
    redo();
  }
});

function togglePencil() {
  const on = pencilEl.getAttribute('aria-pressed') !== 'true';
  pencilEl.setAttribute('aria-pressed', String(on));
  boardEl.classList.toggle('pencil', on);
}

// --- the puzzle ------------------------------------------------------------

/** Starts `line` (81 characters, or what the player typed) as the puzzle:
 * no entries, no marks, no history. */
function startPuzzle(line) {
  state.givens = toCells(line) ?? Array(81).fill('');
  state.entries = Array(81).fill('');
  state.marks = Array(81).fill(0);
  state.wrong.clear();
  state.step = null;
  undoStack.length = 0;
  redoStack.length = 0;
  render();
}

/** The player's own puzzle typed on the board (set-up mode). */
function setGiven(i, ch) {
  state.givens[i] = ch;
  state.entries[i] = '';
  state.wrong.delete(i);
  puzzleEl.value = givensLine();
  render();
}

function fromText() {
  const line = toLine(puzzleEl.value);
  startPuzzle(line);
  clearResult(line.length === 81 || line === '' ? 'Ready' : 'Waiting for 81 cells', 'done');
  if (line !== '' && line.length !== 81) say(`The puzzle has ${line.length} cells so far; a sudoku has 81.`);
}

/** What Solve and the checks send as the puzzle: the text as typed when
 * it is not 81 cells, for the server to say what is wrong. */
function puzzleLine() {
  const typed = toLine(puzzleEl.value);
  return state.givens.some((g) => g !== '') || typed === '' ? givensLine() : typed;
}

// --- results ---------------------------------------------------------------

function clearResult(title, phase) {
  outcomeEl.textContent = title;
  sayEl.textContent = '';
  statsEl.replaceChildren();
  detailEl.replaceChildren();
  errorEl.hidden = true;
  errorEl.replaceChildren();
  result.dataset.state = phase;
}

function stat(name, value, parent = statsEl) {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = String(value);
  parent.append(dt, dd);
}

function list(parent, items) {
  const ul = document.createElement('ul');
  for (const text of items) {
    const li = document.createElement('li');
    li.textContent = text;
    ul.append(li);
  }
  parent.append(ul);
}

/** A <details> toggle holding a list; for what developers read. */
function detailsOf(summary, items, parent) {
  const d = document.createElement('details');
  const s = document.createElement('summary');
  s.textContent = summary;
  d.append(s);
  list(d, items);
  parent.append(d);
  return d;
}

const OUTCOMES = {
  [Outcome.SOLVED]: 'Solved',
  [Outcome.NO_SOLUTION]: 'This puzzle has no solution',
  [Outcome.MULTIPLE_SOLUTIONS]: 'This puzzle has more than one solution',
  [Outcome.WORK_LIMIT_REACHED]: 'The server gave up before finding an answer',
};

/** "HIDDEN_SINGLE" as "Hidden single". */
function techniqueName(name) {
  if (!/^[A-Z0-9_]+$/.test(name)) return name;
  const words = name.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function showError(err) {
  const { title, lines, cells: bad, details } = explain(err);
  clearResult(title, 'error');
  const sentences = document.createElement('div');
  list(sentences, lines);
  errorEl.append(sentences);
  detailsOf('Details', details, errorEl).className = 'dev';
  state.wrong = new Set(bad);
  state.step = null;
  render();
  errorEl.hidden = false;
  result.scrollIntoView({ block: 'nearest' });
}

let busy = false;

async function call(name, run) {
  if (busy) return;
  busy = true;
  busyButtons.forEach((b) => (b.disabled = true));
  clearResult(`${name}…`, 'busy');
  try {
    await run();
  } catch (err) {
    showError(err);
  } finally {
    busy = false;
    busyButtons.forEach((b) => (b.disabled = false));
  }
}

async function newPuzzle() {
  const label = LEVELS[$('level').value] ?? Label.EASY;
  for await (const r of client.generate({ count: 1, label }, { timeoutMs: GENERATE_TIMEOUT_MS })) {
    const line = r.puzzle?.puzzle?.text ?? '';
    puzzleEl.value = line;
    setupEl.checked = false;
    startPuzzle(line);
    const rating = r.puzzle?.rating;
    clearResult(`New puzzle: ${LABELS[rating?.label] ?? $('level').selectedOptions[0].text}`, 'done');
    say(`${r.puzzle?.clues ?? 0} digits given. Good luck!`);
    if (rating?.hardestName) stat('Hardest step', techniqueName(rating.hardestName));
    if (rating?.solvedByTechniques) stat('SE rating', rating.seRating.toFixed(1));
    select(state.givens.findIndex((g) => g === ''));
    return;
  }
  throw new Error('the server sent no puzzle');
}

async function solve() {
  const line = puzzleLine();
  const { solution } = await client.solve({ puzzle: { text: line } }, { timeoutMs: TIMEOUT_MS });
  const answer = toCells(solution?.grid?.text ?? '');
  clearResult(OUTCOMES[solution?.outcome] ?? 'No answer', 'done');
  if (answer && solution?.outcome === Outcome.SOLVED) {
    say('The solution is filled in. Undo takes it back.');
    move((s) => {
      answer.forEach((d, i) => {
        if (!state.givens[i]) s.entries[i] = d;
      });
    });
    result.dataset.state = 'done';
  }
  if (solution?.stats) {
    const dev = document.createElement('dl');
    dev.className = 'stats';
    stat('Guesses', solution.stats.guesses, dev);
    stat('Search nodes', solution.stats.nodes, dev);
    stat('Solve time', `${solution.stats.solveTimeUs} µs`, dev);
    const d = document.createElement('details');
    const s = document.createElement('summary');
    s.textContent = 'How the server solved it';
    d.append(s, dev);
    detailEl.append(d);
  }
}

async function check() {
  const r = await client.validate(
    { puzzle: { text: puzzleLine() }, current: { text: currentLine() } },
    { timeoutMs: TIMEOUT_MS },
  );
  // The player's digits that clash, not the givens they clash with.
  const clashes = r.currentConflicts.flatMap((c) => [c.first, c.second]).filter((i) => !state.givens[i]);
  const bad = new Set([...r.wrongCells, ...clashes]);
  for (const c of r.conflicts) {
    bad.add(c.first);
    bad.add(c.second);
  }
  for (const i of r.currentNoCandidateCells) bad.add(i);
  const filled = state.entries.filter((e, i) => e && !state.givens[i]).length;
  const open = cells.filter((_, i) => !isDigit(valueAt(i))).length;
  let title;
  let text;
  if (r.conflicts.length > 0) {
    title = 'This puzzle breaks the rules';
    text = 'Its own digits clash (in red): a digit may appear once in each row, column and box.';
  } else if (!r.solvable) {
    title = 'This puzzle has no solution';
    text = r.searchComplete ? 'No way to fill it keeps the rules.' : 'The server gave up looking.';
  } else if (!r.unique) {
    title = 'This puzzle has more than one solution';
    text = 'Only clashes can be checked (in red).';
  } else if (r.wrongCells.length > 0) {
    const n = r.wrongCells.length;
    title = n === 1 ? 'One digit is wrong' : `${n} digits are wrong`;
    text = `In red: ${r.wrongCells.map(rc).join(', ')}.`;
    const stuck = r.currentNoCandidateCells.filter((i) => !isDigit(valueAt(i)));
    if (stuck.length > 0) {
      text += ` No digit fits ${stuck.map(rc).join(', ')} any more (in red too).`;
    }
  } else if (open === 0) {
    title = 'Solved!';
    text = 'Every digit is right. Well done.';
  } else {
    title = 'All correct so far';
    text = `${filled === 1 ? 'Your one digit is' : `All ${filled} of your digits are`} right; ${open} ${open === 1 ? 'cell' : 'cells'} to go.`;
  }
  clearResult(title, open === 0 && bad.size === 0 ? 'solved' : 'done');
  say(text);
  state.wrong = bad;
  render();
  result.scrollIntoView({ block: 'nearest' });
}

/** The player's pencil marks for Hint: none when they wrote none; else
 * every blank cell's, all nine digits for a blank without marks. */
function candidates() {
  if (!state.marks.some((m, i) => m && !valueAt(i))) return undefined;
  return { masks: state.marks.map((m, i) => (valueAt(i) ? 0 : m || ALL)) };
}

async function hint() {
  const r = await client.hint(
    { puzzle: { text: currentLine() }, candidates: candidates() },
    { timeoutMs: TIMEOUT_MS },
  );
  const step = r.step;
  if (!step) {
    clearResult(r.solved ? 'The grid is full' : r.searchComplete ? 'No step from here' : 'The server gave up looking', 'done');
    say(r.solved ? 'Check my progress says whether it is right.' : 'A digit is wrong: Check my progress shows which.');
    return;
  }
  state.step = step;
  state.wrong.clear();
  clearResult(`Hint: ${techniqueName(step.techniqueName)}`, 'hint');
  say(step.explanation);
  const does = [
    ...step.placements.map((p) => `place ${p.digit} in ${rc(p.cell)}`),
    ...step.eliminations.map((p) => `remove ${p.digit} from ${rc(p.cell)}`),
    ...step.restorations.map((p) => `put ${p.digit} back in ${rc(p.cell)}`),
  ];
  applyEl.textContent = 'Apply';
  applyEl.setAttribute('aria-label', `Apply: ${does.join(', ')}`);
  render();
  // On a phone the explanation sits below the board: bring it to view.
  $('status').scrollIntoView({ block: 'nearest' });
  applyEl.scrollIntoView({ block: 'nearest' });
}

/** The hint's step on the board: placements as entries, eliminations
 * and restorations in the pencil marks (written out first where the
 * player had none, so the removal shows). */
function applyStep() {
  const step = state.step;
  if (!step) return;
  const placed = move((s) => {
    const touched = new Set([...step.eliminations, ...step.restorations].map((e) => e.cell));
    for (const i of touched) if (!s.marks[i] && !valueAt(i)) s.marks[i] = gridCandidates(i);
    for (const e of step.eliminations) s.marks[e.cell] &= ~bit(e.digit);
    for (const e of step.restorations) s.marks[e.cell] |= bit(e.digit);
    for (const p of step.placements) {
      s.entries[p.cell] = String(p.digit);
      s.marks[p.cell] = 0;
      for (const q of peers(p.cell)) s.marks[q] &= ~bit(p.digit);
    }
  });
  if (!placed) state.step = null;
  const first = step.placements[0]?.cell ?? step.eliminations[0]?.cell;
  if (result.dataset.state !== 'busy') {
    clearResult('Applied', 'done');
    say(`${step.explanation} Done: Hint again for the next step.`);
  }
  render();
  if (first !== undefined) select(first);
}

// --- wiring ----------------------------------------------------------------

$('new').addEventListener('click', () => call('Making a puzzle', newPuzzle));
$('hint').addEventListener('click', () => call('Looking for a step', hint));
$('check').addEventListener('click', () => call('Checking', check));
$('solve').addEventListener('click', () => call('Solving', solve));
applyEl.addEventListener('click', applyStep);
$('undo').addEventListener('click', undo);
$('redo').addEventListener('click', redo);
pencilEl.addEventListener('click', togglePencil);
$('example').addEventListener('click', () => {
  puzzleEl.value = CLASSIC;
  fromText();
});
$('clear').addEventListener('click', () => {
  puzzleEl.value = '';
  fromText();
  puzzleEl.focus();
});
puzzleEl.addEventListener('input', fromText);
puzzleEl.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    call('Solving', solve);
  }
});

puzzleEl.value = CLASSIC;
fromText();
select(state.givens.findIndex((g) => g === ''), false);
say('Play this example, or pick a level and press New puzzle.');
document.body.dataset.ready = 'true';
