#!/usr/bin/env node
// Drives the page in headless Chromium (the system's, through
// puppeteer-core) on a phone-sized screen, as a person would: pastes a
// puzzle as nine lines of digits, presses Solve and checks the board it
// shows against the rules and the givens; then a puzzle with a bad
// character, and checks the error and the one cell highlighted; and saves
// screenshots. tests/it/browser.rs runs it against the real server.
//
// Usage:  node test/browser.mjs http://127.0.0.1:PORT OUT_DIR
//   CHROMIUM=/path/to/chromium (default /usr/bin/chromium)
// Exit status 0 when every check passed; 1 with a "FAIL:" line otherwise.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { CLASSIC, whyNotSolution } from './sudoku.mjs';

const [url = 'http://127.0.0.1:50051', out = '.'] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = 15_000;

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function board(page) {
  return page.$$eval('#board input', (cells) =>
    cells.map((c) => ({ value: c.value, bad: c.classList.contains('bad'), invalid: c.getAttribute('aria-invalid') })),
  );
}

/** Replaces the textarea's text with `text` as a paste does (one input). */
async function paste(page, text) {
  await page.click('#clear');
  await page.focus('#puzzle');
  await page.keyboard.sendCharacter(text);
}

async function press(page, button) {
  await page.click(button);
  await page.waitForFunction(
    () => ['done', 'error'].includes(document.getElementById('result').dataset.state),
    { timeout: TIMEOUT },
  );
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
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.setDefaultTimeout(TIMEOUT);
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1, isMobile: true, hasTouch: true });

    // 1. The page loads, and fits a phone's width.
    const response = await page.goto(url, { waitUntil: 'load' });
    check(response?.status() === 200, `GET / -> ${response?.status()}`);
    await page.waitForSelector('body[data-ready="true"]');
    check((await board(page)).length === 81, 'the board has not 81 cells');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `the page is ${overflow}px wider than a 390px screen`);
    console.log('ok: page loaded (81 cells, fits 390px)');

    // 2. A puzzle pasted as nine lines of space-separated digits, solved.
    const rows = [...Array(9)].map((_, r) =>
      [...CLASSIC.slice(r * 9, r * 9 + 9)].map((c) => (c === '.' ? '0' : c)).join(' '),
    );
    await paste(page, rows.join('\n'));
    const shown = (await board(page)).map((c) => c.value || '.').join('');
    check(shown === CLASSIC, `the board shows ${shown} after the paste`);
    await press(page, '#solve');
    const outcome = await page.$eval('#outcome', (e) => e.textContent);
    check(outcome === 'Solved', `outcome ${JSON.stringify(outcome)}; error: ${await page.$eval('#error', (e) => e.textContent)}`);
    const solved = (await board(page)).map((c) => c.value).join('');
    const why = whyNotSolution(CLASSIC, solved);
    check(why === null, `the solved board: ${why}`);
    const stats = await page.$eval('#stats', (e) => e.textContent);
    check(/Search nodes\d+/.test(stats), `stats ${JSON.stringify(stats)}`);
    console.log(`ok: pasted 9 lines, Solve -> ${solved}`);
    await page.screenshot({ path: join(out, 'solved.png'), fullPage: true });

    // The same puzzle: a hint (a step, its cells marked), and Validate.
    await press(page, '#hint');
    const hinted = await page.$eval('#outcome', (e) => e.textContent);
    check(hinted.startsWith('Hint: '), `Hint outcome ${JSON.stringify(hinted)}`);
    const marked = await page.$$eval('#board input.hint', (c) => c.length);
    check(marked > 0, 'Hint marked no cell');
    await page.screenshot({ path: join(out, 'hint.png'), fullPage: true });
    await press(page, '#validate');
    const validated = await page.$eval('#outcome', (e) => e.textContent);
    check(validated === 'Valid: one solution', `Validate outcome ${JSON.stringify(validated)}`);
    console.log(`ok: ${hinted} (${marked} cells marked); Validate -> ${validated}`);

    // Typing on the board edits the puzzle: a 4 in cell 2, from the keyboard.
    await page.focus('#board input[data-cell="0"]');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('4');
    const typed = await page.$eval('#puzzle', (e) => e.value);
    check(typed === `534${CLASSIC.slice(3)}`, `the puzzle after typing: ${typed}`);
    console.log('ok: typed 4 into row 0, column 2 from the keyboard');

    // 3. A bad character: the error, its reason, and its cell highlighted.
    await paste(page, CLASSIC.slice(0, 10) + 'x' + CLASSIC.slice(11));
    await press(page, '#solve');
    const title = await page.$eval('#outcome', (e) => e.textContent);
    check(title === 'Error: INVALID_ARGUMENT', `outcome ${JSON.stringify(title)}`);
    const error = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
    check(error.includes("puzzle.text: cell 10 (row 1, column 1): unexpected character 'x'"), `error ${JSON.stringify(error)}`);
    check(error.includes('MALFORMED_GRID'), `no reason in ${JSON.stringify(error)}`);
    const cells = await board(page);
    const bad = cells.flatMap((c, i) => (c.bad ? [i] : []));
    check(JSON.stringify(bad) === '[10]', `highlighted cells ${JSON.stringify(bad)}`);
    check(cells[10].invalid === 'true' && cells[10].value === 'x', `cell 10 ${JSON.stringify(cells[10])}`);
    console.log(`ok: malformed -> ${title}; highlighted [${bad}]`);
    await page.screenshot({ path: join(out, 'error.png'), fullPage: true });
    console.log(`ok: screenshots solved.png, hint.png, error.png in ${out}`);

    check(problems.length === 0, problems.join('\n'));
    console.log('all checks passed');
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log(`FAIL: ${err.stack ?? err}`);
  process.exit(1);
});
