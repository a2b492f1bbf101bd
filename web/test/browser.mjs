#!/usr/bin/env node
// Plays the page in headless Chromium (the system's, through
// puppeteer-core) as a person would, on a laptop's screen (1280x800) and a
// phone's (390x844): a new easy puzzle from Generate; the keyboard
// (arrows, digits, Shift+digit pencil marks, the Pencil toggle, Backspace);
// Hint with pencil marks that lack the right digit (the correction, then
// Apply); a wrong digit that Check my progress turns red; undo and redo by
// keys and buttons; then Hint and Apply, step after step, to a solved
// board, every hint a new one, its explanation on screen. The board and
// the result stay on screen at both sizes. axe-core (from node_modules,
// injected into the page) finds no serious or critical violation, in light
// and dark mode. On the phone: a puzzle pasted as nine lines, solved; one
// with a bad character, told in a player's words with the details behind
// a toggle. Screenshots go to OUT_DIR. tests/it/browser.rs runs it against
// the real server.
//
// Usage:  node test/browser.mjs http://127.0.0.1:PORT OUT_DIR
//   CHROMIUM=/path/to/chromium (default /usr/bin/chromium)
// Exit status 0 when every check passed; 1 with a "FAIL:" line otherwise.

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { CLASSIC, deadCells, solveLocally, whyNotSolution } from './sudoku.mjs';

const [url = 'http://127.0.0.1:50051', out = '.'] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = 15_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const SIZES = [
  { name: 'laptop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844, isMobile: true, hasTouch: true },
];

function check(condition, what) {
  if (!condition) throw new Error(what);
}

const cell = (i) => `#board [data-cell="${i}"]`;

/** Every cell's value ('' for empty), classes and name. */
async function board(page) {
  return page.$$eval('#board [role="gridcell"]', (cells) =>
    cells.map((c) => ({
      value: c.querySelector('.value').textContent,
      given: c.classList.contains('given'),
      bad: c.classList.contains('bad'),
      hinted: c.classList.contains('why') || c.classList.contains('target'),
      label: c.querySelector('.sr').textContent,
    })),
  );
}

/** The name a screen reader gives cell `i` ("r1c2, empty, pencil 4 7"). */
const label = (page, i) => page.$eval(cell(i), (c) => c.querySelector('.sr').textContent);
const text = (page, sel) => page.$eval(sel, (e) => e.textContent.trim());

/** Clicks `button` and waits for the call to end: the result's state is
 * no longer "busy" (it says done, hint, solved or error). */
async function press(page, button) {
  await page.waitForFunction((b) => !document.querySelector(b).disabled, { timeout: TIMEOUT }, button);
  await page.click(button);
  await page.waitForFunction(
    () => ['done', 'hint', 'solved', 'error'].includes(document.getElementById('result').dataset.state),
    { timeout: TIMEOUT },
  );
  return page.$eval('#result', (e) => e.dataset.state);
}

async function key(page, name, modifier) {
  if (modifier) await page.keyboard.down(modifier);
  await page.keyboard.press(name);
  if (modifier) await page.keyboard.up(modifier);
}

/** Where `sel` is off the screen, or null when it is wholly on it. */
async function offScreen(page, sel) {
  return page.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    const on = r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
    return on ? null : `${e.id || e.tagName} at ${r.left},${r.top}..${r.right},${r.bottom} on a ${window.innerWidth}x${window.innerHeight} screen`;
  });
}

async function onScreen(page, ...selectors) {
  for (const sel of selectors) {
    const where = await offScreen(page, sel);
    check(where === null, `${sel} is off the screen: ${where}`);
  }
}

/** axe-core's serious and critical violations in the page as it stands,
 * in `scheme` (light or dark). */
async function axe(page, scheme, when) {
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
  // Evaluated through the DevTools protocol, which the page's
  // Content-Security-Policy (script-src 'self') does not govern.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
    }));
  });
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  const grave = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  check(
    grave.length === 0,
    `axe, ${when}, ${scheme}: ${grave.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.join('\n  ')}`).join('\n')}`,
  );
  const minor = found.map((v) => `${v.id} (${v.impact})`).join(', ') || 'none';
  console.log(`ok: axe ${when} ${scheme}: no serious or critical violation (others: ${minor})`);
}

async function open(browser, size, problems) {
  const page = await browser.newPage();
  page.on('pageerror', (e) => problems.push(`${size.name}: page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`${size.name}: console: ${m.text()}`));
  page.setDefaultTimeout(TIMEOUT);
  await page.setViewport({ deviceScaleFactor: 1, ...size });
  const response = await page.goto(url, { waitUntil: 'load' });
  // 304 for the second page: the browser keeps the first one's copy and
  // the server answers its If-None-Match.
  check([200, 304].includes(response?.status()), `GET / -> ${response?.status()}`);
  await page.waitForSelector('body[data-ready="true"]');
  const shape = await page.$$eval('#board[role="grid"] > [role="row"]', (rows) =>
    rows.map((r) => r.querySelectorAll('[role="gridcell"]').length),
  );
  check(JSON.stringify(shape) === JSON.stringify(Array(9).fill(9)), `the grid's rows hold ${shape} cells`);
  check((await label(page, 0)) === 'r1c1, 5, given', `r1c1 is labelled ${await label(page, 0)}`);
  check((await label(page, 80)) === 'r9c9, 9, given', `r9c9 is labelled ${await label(page, 80)}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `the page is ${overflow}px wider than a ${size.width}px screen`);
  console.log(`ok: ${size.name}: loaded (a 9x9 ARIA grid, r1c1..r9c9, fits ${size.width}px)`);
  return page;
}

/** A game on a screen of `size`, from New puzzle to a solved board. */
async function game(browser, size, problems) {
  const page = await open(browser, size, problems);
  const shot = (name) => page.screenshot({ path: join(out, `${size.name}-${name}.png`) });

  // A new easy puzzle, solved by the test on its own.
  await page.select('#level', 'easy');
  check((await press(page, '#new')) === 'done', `New puzzle: ${await text(page, '#result')}`);
  const title = await text(page, '#outcome');
  check(title === 'New puzzle: Easy', `New puzzle says ${JSON.stringify(title)}`);
  const givens = (await board(page)).map((c) => (c.given ? c.value : '.')).join('');
  const solution = solveLocally(givens);
  check(solution !== null, `the new puzzle ${givens} has no solution`);
  await onScreen(page, '#board', '#result');
  await shot('new');
  const blanks = [...givens].flatMap((c, i) => (c === '.' ? [i] : []));
  console.log(`ok: ${size.name}: New puzzle (easy) -> ${givens} (${81 - blanks.length} givens), board and result on screen`);

  // Arrow keys to the first blank from r1c1.
  const e = blanks[0];
  await page.focus(cell(0));
  for (let k = 0; k < Math.floor(e / 9); k++) await key(page, 'ArrowDown');
  for (let k = 0; k < e % 9; k++) await key(page, 'ArrowRight');
  const at = await page.evaluate(() => document.activeElement?.dataset.cell);
  check(at === String(e), `the arrows reached cell ${at}, not ${e}`);

  // Pencil marks: a wrong digit with Shift, the right one and off again
  // with the Pencil toggle, so the marks lack the right digit.
  const right = Number(solution[e]);
  const wrong1 = (right % 9) + 1;
  const wrong2 = (wrong1 % 9) + 1;
  await key(page, String(wrong1), 'Shift');
  await key(page, String(wrong2), 'Shift');
  await page.click('#pencil');
  await page.focus(cell(e));
  await key(page, String(right));
  await key(page, String(right));
  await page.click('#pencil');
  await page.focus(cell(e));
  const marks = [wrong1, wrong2].sort().join(' ');
  check((await label(page, e)).endsWith(`empty, pencil ${marks}`), `pencil marks: ${await label(page, e)}`);
  console.log(`ok: ${size.name}: arrows to ${await label(page, e)}`);

  // Hint with these marks: the correction first, and Apply puts the
  // digit back.
  check((await press(page, '#hint')) === 'hint', `Hint: ${await text(page, '#result')}`);
  const fix = await text(page, '#outcome');
  check(fix === 'Hint: Missing candidate', `Hint with marks lacking ${right}: ${fix}`);
  await page.click('#apply');
  const all = [right, wrong1, wrong2].sort().join(' ');
  check((await label(page, e)).endsWith(`pencil ${all}`), `after Apply: ${await label(page, e)}`);
  console.log(`ok: ${size.name}: pencil marks sent to Hint -> ${fix}; Apply -> ${await label(page, e)}`);

  // A wrong digit in another blank; Check my progress turns it red. A
  // wrong digit can leave an empty cell with no digit that fits, which the
  // check shows in red too: prefer one that strands none, and expect
  // whichever cells it strands.
  const f = blanks[1];
  const withDigit = (d) => givens.slice(0, f) + d + givens.slice(f + 1);
  const wrongs = [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((d) => d !== Number(solution[f]));
  const bad = wrongs.find((d) => deadCells(withDigit(d)).length === 0) ?? wrongs[0];
  const stranded = deadCells(withDigit(bad));
  await page.click(cell(f));
  await key(page, String(bad));
  check((await press(page, '#check')) === 'done', `Check: ${await text(page, '#result')}`);
  const checked = await text(page, '#outcome');
  check(checked === 'One digit is wrong', `Check my progress says ${JSON.stringify(checked)}`);
  const red = (await board(page)).flatMap((c, i) => (c.bad ? [i] : []));
  const reds = JSON.stringify([f, ...stranded].sort((a, b) => a - b));
  check(JSON.stringify(red) === reds, `red cells ${JSON.stringify(red)}, expected ${reds}`);
  if (stranded.length > 0) {
    const said = await text(page, '#result');
    check(said.includes('No digit fits'), `red empty cells ${stranded} not explained: ${said}`);
  }
  check((await label(page, f)).endsWith(`${bad}, wrong`), `the wrong cell reads ${await label(page, f)}`);
  const colours = await page.$eval(cell(f), (c) => {
    const s = getComputedStyle(c);
    const empty = getComputedStyle(c.closest('.row').querySelector('.cell:not(.bad)'));
    return { bad: s.backgroundColor, other: empty.backgroundColor };
  });
  check(colours.bad !== colours.other, `the wrong cell is not coloured: ${JSON.stringify(colours)}`);
  await onScreen(page, '#board', '#result');
  await shot('check');
  await axe(page, 'light', `${size.name} after Check`);
  await axe(page, 'dark', `${size.name} after Check`);
  const also = stranded.length > 0 ? ` (with ${stranded.length} empty cell(s) it strands)` : '';
  console.log(`ok: ${size.name}: wrong ${bad} at ${await label(page, f)} -> ${checked}, red${also}`);

  // Backspace, undo and redo, by keys and by buttons.
  await page.focus(cell(f));
  await key(page, 'Backspace');
  const history = [await label(page, f)];
  await key(page, 'z', 'Control');
  history.push(await label(page, f));
  await key(page, 'z', 'Control');
  history.push(await label(page, f));
  await key(page, 'y', 'Control');
  history.push(await label(page, f));
  await page.click('#undo');
  history.push(await label(page, f));
  await page.click('#redo');
  await page.click('#undo');
  history.push(await label(page, f));
  const name = history[0].split(',')[0];
  const expected = ['empty', String(bad), 'empty', String(bad), 'empty', 'empty'].map((v) => `${name}, ${v}`);
  check(
    JSON.stringify(history.map((l) => l.split(', ').slice(0, 2).join(', '))) === JSON.stringify(expected),
    `Backspace, Ctrl+Z, Ctrl+Z, Ctrl+Y, Undo, Redo+Undo: ${JSON.stringify(history)}`,
  );
  console.log(`ok: ${size.name}: Backspace, undo, redo (keys and buttons) -> ${history.join(' | ')}`);

  // Hint and Apply to the end: each hint a new step, explained on screen.
  let last = '';
  let hints = 0;
  for (;;) {
    const phase = await press(page, '#hint');
    if (phase !== 'hint') break;
    const step = `${await text(page, '#outcome')}: ${await text(page, '#say')}`;
    check(step !== last, `Hint gave the same step twice: ${step}`);
    const marked = (await board(page)).filter((c) => c.hinted).length;
    check(marked > 0, `Hint marked no cell: ${step}`);
    await onScreen(page, '#board', '#say', '#apply');
    if (hints === 0) {
      await shot('hint');
      await axe(page, 'light', `${size.name} with a hint`);
      await axe(page, 'dark', `${size.name} with a hint`);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
      await shot('hint-dark');
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
      console.log(`ok: ${size.name}: ${step} (${marked} cells marked, on screen)`);
    }
    last = step;
    hints += 1;
    check(hints <= 2 * 81, `more than ${2 * 81} hints`);
    await page.click('#apply');
    await page.waitForFunction(() => document.getElementById('apply').hidden, { timeout: TIMEOUT });
    await page.waitForFunction(() => document.getElementById('result').dataset.state !== 'busy', { timeout: TIMEOUT });
    if ((await page.$eval('#result', (r) => r.dataset.state)) === 'solved') break;
  }
  const final = await text(page, '#outcome');
  check(final === 'Solved!', `after ${hints} hints: ${final}: ${await text(page, '#result')}`);
  const values = (await board(page)).map((c) => c.value).join('');
  const why = whyNotSolution(givens, values);
  check(why === null, `the board at the end: ${why}`);
  await onScreen(page, '#board', '#result');
  await shot('solved');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await shot('solved-dark');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  console.log(`ok: ${size.name}: ${hints} hints applied, each a new step -> ${final} ${values}`);
  await page.close();
}

/** Replaces the puzzle text with `text` as a paste does (one input). */
async function paste(page, text) {
  await page.click('#clear');
  await page.focus('#puzzle');
  await page.keyboard.sendCharacter(text);
}

/** The player's own puzzle, pasted; and one the server cannot read. */
async function ownPuzzle(browser, problems) {
  const size = SIZES[1];
  const page = await open(browser, size, problems);
  await page.click('#own summary');
  const rows = [...Array(9)].map((_, r) =>
    [...CLASSIC.slice(r * 9, r * 9 + 9)].map((c) => (c === '.' ? '0' : c)).join(' '),
  );
  await paste(page, rows.join('\n'));
  const shown = (await board(page)).map((c) => c.value || '.').join('');
  check(shown === CLASSIC, `the board shows ${shown} after the paste`);
  await press(page, '#solve');
  const outcome = await text(page, '#outcome');
  check(outcome === 'Solved', `outcome ${JSON.stringify(outcome)}: ${await text(page, '#result')}`);
  const solved = (await board(page)).map((c) => c.value).join('');
  const why = whyNotSolution(CLASSIC, solved);
  check(why === null, `the solved board: ${why}`);
  const stats = await text(page, '#detail');
  check(/Search nodes\d+/.test(stats), `stats ${JSON.stringify(stats)}`);
  console.log(`ok: pasted 9 lines, Solve -> ${solved}`);

  await paste(page, CLASSIC.slice(0, 10) + 'x' + CLASSIC.slice(11));
  check((await press(page, '#solve')) === 'error', `a bad character: ${await text(page, '#result')}`);
  const title = await text(page, '#outcome');
  check(title === "We can't read that puzzle", `outcome ${JSON.stringify(title)}`);
  const said = await page.$eval('#error', (e) => e.querySelector('ul').textContent);
  check(said.includes("That puzzle has a character we can't read at row 2, column 2: 'x'"), `the error says ${JSON.stringify(said)}`);
  const dev = await page.$eval('#error details', (d) => ({ open: d.open, summary: d.querySelector('summary').textContent, text: d.textContent }));
  check(!dev.open && dev.summary === 'Details', `the details toggle: ${JSON.stringify(dev)}`);
  for (const word of ['INVALID_ARGUMENT', 'MALFORMED_GRID', 'puzzle.text']) {
    check(dev.text.includes(word), `no ${word} in the details: ${dev.text}`);
  }
  const cells = await board(page);
  const bad = cells.flatMap((c, i) => (c.bad ? [i] : []));
  check(JSON.stringify(bad) === '[10]', `highlighted cells ${JSON.stringify(bad)}`);
  check(cells[10].value === 'x' && cells[10].label.startsWith('r2c2, x'), `cell 10 ${JSON.stringify(cells[10])}`);
  await onScreen(page, '#error');
  await page.click('#error summary');
  await page.screenshot({ path: join(out, 'error.png') });
  await axe(page, 'light', 'with an error');
  await axe(page, 'dark', 'with an error');
  console.log(`ok: malformed -> ${title}: ${said}; details ${JSON.stringify(dev.text)}; highlighted [${bad}]`);
  await page.close();
}

async function main() {
  mkdirSync(out, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    // Chromium's sandbox refuses to run as root (CI runs as root).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  const problems = [];
  try {
    for (const size of SIZES) await game(browser, size, problems);
    await ownPuzzle(browser, problems);
    check(problems.length === 0, problems.join('\n'));
    console.log(`ok: screenshots in ${out}`);
    console.log('all checks passed');
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log(`FAIL: ${err.stack ?? err}`);
  process.exit(1);
});
