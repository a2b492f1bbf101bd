// The page: a puzzle in any format `sudoku solve` reads, sent to the server
// that served the page through gRPC-Web; the answer, its stats, or the
// error with the cells its google.rpc details name, shown on the board.

import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import { BadRequestSchema, ErrorInfoSchema } from './gen/google/rpc/error_details_pb.js';
import { Outcome, SudokuService, UnitKind } from './gen/sudoku/v1/sudoku_pb.js';
import { cellsOfErrorInfo, cellsOfViolations, toCells, toLine, where } from './puzzle.js';

const CLASSIC = '53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79';
const TIMEOUT_MS = 10_000;

const client = createClient(
  SudokuService,
  createGrpcWebTransport({ baseUrl: window.location.origin, useBinaryFormat: true }),
);

const $ = (id) => document.getElementById(id);
const puzzle = $('puzzle');
const boardEl = $('board');
const result = $('result');
const outcomeEl = $('outcome');
const statsEl = $('stats');
const detailEl = $('detail');
const errorEl = $('error');
const buttons = ['solve', 'validate', 'hint'].map($);

// --- the board -----------------------------------------------------------

const cells = [];
for (let i = 0; i < 81; i++) {
  const input = document.createElement('input');
  input.type = 'text';
  input.inputMode = 'numeric';
  input.autocomplete = 'off';
  input.dataset.cell = String(i);
  input.setAttribute('aria-label', where(i));
  input.tabIndex = i === 0 ? 0 : -1;
  input.addEventListener('keydown', (e) => onCellKey(e, i));
  input.addEventListener('input', () => onCellInput(i));
  input.addEventListener('paste', (e) => {
    e.preventDefault();
    puzzle.value = e.clipboardData?.getData('text') ?? '';
    showPuzzle();
  });
  input.addEventListener('focus', () => {
    for (const c of cells) c.tabIndex = -1;
    input.tabIndex = 0;
  });
  cells.push(input);
  boardEl.append(input);
}

/** Shows `chars` (81 entries, '' for a blank) with the givens of `line`. */
function paint(chars, givenLine) {
  const givens = toCells(givenLine) ?? [];
  chars.forEach((ch, i) => {
    const c = cells[i];
    c.value = ch;
    const given = ch !== '' && givens[i] === ch;
    c.classList.toggle('given', given);
    c.classList.remove('bad', 'hint');
    c.removeAttribute('aria-invalid');
    c.setAttribute('aria-label', `${where(i)}${ch ? `, ${ch}` : ', blank'}${given ? ', given' : ''}`);
  });
}

function mark(list, cls) {
  for (const i of list) {
    const c = cells[i];
    if (!c) continue;
    c.classList.add(cls);
    if (cls === 'bad') c.setAttribute('aria-invalid', 'true');
  }
}

/** The board as the puzzle's text: the puzzle's line from the textarea. */
function showPuzzle() {
  const line = toLine(puzzle.value);
  paint(toCells(line) ?? Array(81).fill(''), line);
  clearResult('Ready', '');
}

function boardLine() {
  return cells.map((c) => (/^[1-9]$/.test(c.value) ? c.value : c.value === '' ? '.' : c.value)).join('');
}

function onCellInput(i) {
  const v = cells[i].value.slice(-1);
  cells[i].value = v === '0' || v === '.' ? '' : v;
  puzzle.value = boardLine();
  showPuzzle();
  cells[i].focus();
}

function onCellKey(e, i) {
  const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -9, ArrowDown: 9 };
  if (/^[1-9]$/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
    // A digit replaces what the cell holds (on-screen keyboards, which
    // send no such key, go through the input event).
    e.preventDefault();
    cells[i].value = e.key;
    onCellInput(i);
  } else if (e.key in moves) {
    e.preventDefault();
    const next = i + moves[e.key];
    if (next >= 0 && next < 81) cells[next].focus();
  } else if (['Backspace', 'Delete', '0', '.', ' '].includes(e.key)) {
    e.preventDefault();
    cells[i].value = '';
    onCellInput(i);
  } else if (e.key === 'Home') {
    e.preventDefault();
    cells[i - (i % 9)].focus();
  } else if (e.key === 'End') {
    e.preventDefault();
    cells[i - (i % 9) + 8].focus();
  }
}

// --- results ---------------------------------------------------------------

function clearResult(title, state) {
  outcomeEl.textContent = title;
  statsEl.replaceChildren();
  detailEl.replaceChildren();
  errorEl.hidden = true;
  errorEl.replaceChildren();
  result.dataset.state = state;
}

function stat(name, value) {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = String(value);
  statsEl.append(dt, dd);
}

function para(text) {
  const p = document.createElement('p');
  p.textContent = text;
  detailEl.append(p);
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

const OUTCOMES = {
  [Outcome.SOLVED]: 'Solved',
  [Outcome.NO_SOLUTION]: 'No solution',
  [Outcome.MULTIPLE_SOLUTIONS]: 'More than one solution',
  [Outcome.WORK_LIMIT_REACHED]: 'Work limit reached before an answer',
};
const UNITS = { [UnitKind.ROW]: 'row', [UnitKind.COLUMN]: 'column', [UnitKind.BOX]: 'box' };

function codeName(code) {
  return (Code[code] ?? String(code)).replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/** "HIDDEN_SINGLE" as "Hidden single"; a name in other words as it is. */
function techniqueName(name) {
  if (!/^[A-Z0-9_]+$/.test(name)) return name;
  const words = name.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function conflictText(c) {
  return `${where(c.first)} and ${where(c.second)} both hold ${c.digit} in ${UNITS[c.unit?.kind] ?? 'a unit'} ${c.unit?.index ?? 0}`;
}

function showError(err, line) {
  const e = ConnectError.from(err);
  clearResult(`Error: ${codeName(e.code)}`, 'error');
  const chars = toCells(line);
  if (chars) paint(chars, line);
  const violations = e.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
  const info = e.findDetails(ErrorInfoSchema)[0];
  // The message of INVALID_ARGUMENT is its violations joined: list them.
  if (violations.length > 0) {
    list(errorEl, violations.map((v) => `${v.field}: ${v.description}`));
  } else {
    const p = document.createElement('p');
    p.textContent = e.rawMessage || 'the call failed';
    errorEl.append(p);
  }
  if (info) {
    const r = document.createElement('p');
    r.className = 'reason';
    r.textContent = `Reason: ${info.reason} (${info.domain})`;
    errorEl.append(r);
  }
  const bad = [...new Set([...cellsOfViolations(violations), ...cellsOfErrorInfo(info)])];
  mark(bad, 'bad');
  if (bad.length > 0) stat('Cells at fault', bad.map(where).join('; '));
  errorEl.hidden = false;
}

async function call(name, run) {
  const line = toLine(puzzle.value);
  buttons.forEach((b) => (b.disabled = true));
  clearResult(`${name}…`, 'busy');
  try {
    await run(line);
  } catch (err) {
    showError(err, line);
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
}

const grid = (line) => ({ puzzle: { text: line } });

async function solve(line) {
  const { solution } = await client.solve(grid(line), { timeoutMs: TIMEOUT_MS });
  clearResult(OUTCOMES[solution?.outcome] ?? 'Unknown outcome', 'done');
  const answer = toCells(solution?.grid?.text ?? '');
  paint(answer ?? toCells(line) ?? Array(81).fill(''), line);
  if (solution?.stats) {
    stat('Guesses', solution.stats.guesses);
    stat('Search nodes', solution.stats.nodes);
    stat('Solve time', `${solution.stats.solveTimeUs} µs`);
  }
  if (solution && solution.solutionCount > 0n) stat('Solutions found', solution.solutionCount);
}

async function validate(line) {
  const r = await client.validate(grid(line), { timeoutMs: TIMEOUT_MS });
  const ok = r.conflicts.length === 0 && r.noCandidateCells.length === 0 && r.unique;
  clearResult(ok ? 'Valid: one solution' : r.conflicts.length > 0 ? 'Breaks the rules' : r.solvable ? 'Several solutions' : 'No solution', 'done');
  paint(toCells(line) ?? Array(81).fill(''), line);
  stat('Conflicts', r.conflictCount || r.conflicts.length);
  stat('Solvable', r.solvable ? 'yes' : 'no');
  stat('Unique', r.unique ? 'yes' : 'no');
  stat('Search complete', r.searchComplete ? 'yes' : 'no (work budget reached)');
  if (r.conflicts.length > 0) list(detailEl, r.conflicts.map(conflictText));
  if (r.noCandidateCells.length > 0) list(detailEl, r.noCandidateCells.map((c) => `${where(c)} has no candidate left`));
  mark(r.conflicts.flatMap((c) => [c.first, c.second]), 'bad');
  mark(r.noCandidateCells, 'bad');
}

async function hint(line) {
  const r = await client.hint(grid(line), { timeoutMs: TIMEOUT_MS });
  const chars = toCells(line) ?? Array(81).fill('');
  if (r.solved || !r.step) {
    clearResult(r.solved ? 'Nothing to do: the grid is full' : 'No step found', 'done');
    paint(chars, line);
    return;
  }
  const step = r.step;
  clearResult(`Hint: ${techniqueName(step.techniqueName)}`, 'done');
  for (const p of step.placements) chars[p.cell] = String(p.digit);
  paint(chars, line);
  para(step.explanation);
  if (step.placements.length > 0) stat('Places', step.placements.map((p) => `${p.digit} at ${where(p.cell)}`).join('; '));
  if (step.eliminations.length > 0) stat('Removes', step.eliminations.map((p) => `${p.digit} from ${where(p.cell)}`).join('; '));
  mark([...step.placements.map((p) => p.cell), ...step.cells], 'hint');
}

// --- wiring ---------------------------------------------------------------

$('form').addEventListener('submit', (e) => {
  e.preventDefault();
  call('Solving', solve);
});
$('validate').addEventListener('click', () => call('Validating', validate));
$('hint').addEventListener('click', () => call('Looking for a step', hint));
$('example').addEventListener('click', () => {
  puzzle.value = CLASSIC;
  showPuzzle();
});
$('clear').addEventListener('click', () => {
  puzzle.value = '';
  showPuzzle();
  puzzle.focus();
});
puzzle.addEventListener('input', showPuzzle);
puzzle.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    call('Solving', solve);
  }
});
showPuzzle();
document.body.dataset.ready = 'true';
