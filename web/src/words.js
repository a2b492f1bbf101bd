// What the page says to a player when a call fails: a title and sentences
// in a player's words (rows and columns counted from 1), and the
// developer's details (status code, ErrorInfo reason, BadRequest fields)
// for the "Details" toggle. The server's messages count from 1, as the
// page does, but name fields; the player never has to read them.

import { Code, ConnectError } from '@connectrpc/connect';
import { BadRequestSchema, ErrorInfoSchema } from './gen/google/rpc/error_details_pb.js';
import { cellsOfErrorInfo, cellsOfViolations } from './puzzle.js';

/** Code.InvalidArgument as "INVALID_ARGUMENT", as gRPC names codes. */
export function codeName(code) {
  return (Code[code] ?? String(code)).replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

const AT = String.raw`(row \d+, column \d+)`;
const BAD_CHAR = new RegExp(`${AT}: unexpected character '((?:[^'\\\\]|\\\\.)+)'`);
const OUT_OF_RANGE = new RegExp(`${AT}: value (\\d+) is out of range`);
const CLASH = new RegExp(`(\\d+) is given twice in ((?:row|column|box) \\d+): at ${AT} and ${AT}`);
const CHANGED = new RegExp(`changes a given: ${AT}`);
const LENGTH = /expected 81 (?:characters|cells) for [^,]*, found (\d+)/;

/** One google.rpc.BadRequest field violation in a player's words, or null
 * when the page does not know its shape. */
export function sayViolation(v) {
  const d = v.description;
  const whose = v.field.startsWith('current') ? 'Your grid' : 'That puzzle';
  let m;
  if ((m = d.match(BAD_CHAR))) {
    return `${whose} has a character we can't read at ${m[1]}: '${m[2]}'`;
  }
  if ((m = d.match(OUT_OF_RANGE))) {
    return `${whose} has a number we can't use at ${m[1]}: ${m[2]}`;
  }
  if ((m = d.match(CLASH))) {
    return `${whose} has ${m[1]} twice in ${m[2]}: at ${m[3]} and ${m[4]}`;
  }
  if ((m = d.match(CHANGED))) {
    return `Your grid changes a digit the puzzle gives, at ${m[1]}`;
  }
  if ((m = d.match(LENGTH))) {
    return `${whose} has ${m[1]} cells, and a sudoku has 81 (nine rows of nine)`;
  }
  if (v.field.startsWith('candidates')) return 'The page sent pencil marks the server could not read';
  return null;
}

const TITLES = {
  MALFORMED_GRID: ["We can't read that puzzle", 'Check the cells named here, or paste the puzzle again.'],
  CONFLICTING_GIVENS: ['That puzzle breaks the rules', 'A digit may appear only once in each row, column and box.'],
  CHANGED_GIVEN: ['Your grid changes the puzzle', 'The digits the puzzle gives stay as they are.'],
  INVALID_FIELD: ['The page asked for something the server does not allow', ''],
  OVERLOADED: ['The server is busy', 'Try again in a moment.'],
  GENERATE_BUDGET_EXHAUSTED: ['No puzzle of that level this time', 'Try again, or pick another level.'],
  DEADLINE_EXCEEDED: ['That took too long', 'The server did not answer in time. Try again.'],
  SHUTTING_DOWN: ['The server is restarting', 'Try again in a moment.'],
};

/**
 * A failed call, for a player: `title`, `lines` (sentences), `cells` (the
 * cells at fault, to mark on the board) and `details` (lines for
 * developers: code, reason, fields, message).
 */
export function explain(err) {
  const e = ConnectError.from(err);
  const violations = e.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
  const info = e.findDetails(ErrorInfoSchema)[0];
  let [title, advice] = TITLES[info?.reason] ?? [];
  if (!title) {
    [title, advice] =
      e.code === Code.Unavailable || e.code === Code.Unknown
        ? ["We can't reach the server", 'Check your connection, then try again or reload the page.']
        : e.code === Code.DeadlineExceeded
          ? TITLES.DEADLINE_EXCEEDED
          : e.code === Code.ResourceExhausted
            ? TITLES.OVERLOADED
            : ['Something went wrong', 'Try again. If it happens again, the details below help whoever runs the server.'];
  }
  const lines = violations.map(sayViolation).filter(Boolean);
  if (advice) lines.push(advice);
  const details = [`Code: ${codeName(e.code)}`];
  if (info) details.push(`Reason: ${info.reason} (${info.domain})`);
  for (const v of violations) details.push(`Field ${v.field}: ${v.description}`);
  if (violations.length === 0 && e.rawMessage) details.push(`Message: ${e.rawMessage}`);
  const cells = [...new Set([...cellsOfViolations(violations), ...cellsOfErrorInfo(info)])];
  return { title, lines, cells, details };
}
