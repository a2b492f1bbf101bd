#!/usr/bin/env node
// Example Node.js client of sudoku.v1.SudokuService, with @grpc/grpc-js and
// @grpc/proto-loader (the contract is loaded from ../../proto at run time; no
// code generation step).
//
// It makes one Solve call, then solves a batch through one SolveBatch stream,
// matching results to puzzles by id, then sends bad puzzles and decodes the
// google.rpc.BadRequest and google.rpc.ErrorInfo details of the
// INVALID_ARGUMENT answers (with protobufjs), then calls Validate (a rule-breaking puzzle is answered with
// its conflicts), Hint and Generate (a server stream, read with 'data'
// events), and checks every answer, so it doubles as an end-to-end test
// (tests/it/node_client.rs runs it against the real server).
//
// Usage:  node client.js [host:port]        (default 127.0.0.1:50051)
// Exit status 0 when every check passed; 1 with a "FAIL:" line otherwise.

'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const PROTO_DIR = process.env.SUDOKU_PROTO_DIR || path.join(__dirname, '..', '..', 'proto');
const target = process.argv[2] || '127.0.0.1:50051';

// includeDirs: proto/ holds sudoku/v1/sudoku.proto and the vendored
// google/rpc/status.proto it imports (and google/rpc/error_details.proto,
// used below); google/protobuf/any.proto and duration.proto come with
// protobufjs.
const definition = protoLoader.loadSync('sudoku/v1/sudoku.proto', {
  includeDirs: [PROTO_DIR],
  keepCase: false, // fields in lowerCamelCase: solveTimeUs, solutionCount...
  longs: String, // uint64 (ids, counts, stats) as decimal strings
  enums: String, // enums by name: 'OUTCOME_SOLVED'
  defaults: true,
  oneofs: true, // BatchResult.result names the member that is set
});
const sudoku = grpc.loadPackageDefinition(definition).sudoku.v1;

// The rich error model: an error's grpc-status-details-bin trailer is a
// google.rpc.Status whose details are google.protobuf.Any messages. grpc-js
// hands the trailer over as bytes, so the messages are decoded here with
// protobufjs (which proto-loader uses too) from the vendored protos.
const rpcTypes = new protobuf.Root();
rpcTypes.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
rpcTypes.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
const RpcStatus = rpcTypes.lookupType('google.rpc.Status');
const BadRequest = rpcTypes.lookupType('google.rpc.BadRequest');
const BAD_REQUEST_URL = 'type.googleapis.com/google.rpc.BadRequest';
const ErrorInfo = rpcTypes.lookupType('google.rpc.ErrorInfo');
const ERROR_INFO_URL = 'type.googleapis.com/google.rpc.ErrorInfo';

// Retry UNAVAILABLE (a server shutting down) with exponential back-off; see
// examples/python/client.py for the reasoning. grpc-js applies it when
// grpc.enable_retries is on (the default).
const serviceConfig = {
  methodConfig: [
    {
      name: [{ service: 'sudoku.v1.SudokuService' }],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

const client = new sudoku.SudokuService(target, grpc.credentials.createInsecure(), {
  'grpc.service_config': JSON.stringify(serviceConfig),
  // Compress requests with gzip (the server accepts gzip and zstd).
  'grpc.default_compression_algorithm': 2,
});

const PUZZLE =
  '53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79';
// A minimal 16x16 (4x4 boxes) of data/sizes/16x16-hard.txt: values '1'-'9'
// then 'A'-'G' (docs/sizes.md).
const PUZZLE16 =
  '.E...DF9.A.3..B7.D....2.E....8.12.B73....F....C6A8.....6...B..4.' +
  'E......5.78D......7F......B.4....69A.7.G.....F5C....24D..3C..91.' +
  '4...7.C8B.........F...5A.C..D.2...G2........9......5.B63....C.A8' +
  '62.G..7....1.4..........29.....G.9......3.EF..7....C.A3...D5.19.';
const BATCH = [
  '4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......',
  '52...6.........7.13...........4..8..6......5...........418.........3..2...87.....',
  '6.....8.3.4.7.................5.4.7.3..2.....1.6.......2.....5.....8.6......1....',
  PUZZLE,
];
const CLASHING = '5.......5' + '.'.repeat(72); // two 5s in row 1

function deadline(seconds) {
  return new Date(Date.now() + seconds * 1000);
}

// True when `solution` is a full valid grid that keeps `puzzle`'s givens.
// Every row, column and box of an N x N solution holds each value once.
function isValidSized(puzzle, solution, boxRows, boxCols) {
  const n = boxRows * boxCols;
  const want = '123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.slice(0, n).split('').sort().join('');
  if (solution.length !== n * n) return false;
  for (let i = 0; i < n * n; i++) {
    if (!'.0'.includes(puzzle[i]) && puzzle[i] !== solution[i]) return false;
  }
  const units = [];
  for (let k = 0; k < n; k++) {
    const row = [], col = [], box = [];
    const r0 = Math.floor(k / boxRows) * boxRows, c0 = (k % boxRows) * boxCols;
    for (let j = 0; j < n; j++) {
      row.push(k * n + j);
      col.push(j * n + k);
      box.push((r0 + Math.floor(j / boxCols)) * n + c0 + (j % boxCols));
    }
    units.push(row, col, box);
  }
  return units.every((u) => u.map((i) => solution[i]).sort().join('') === want);
}

function isValidSolution(puzzle, solution) {
  if (typeof solution !== 'string' || !/^[1-9]{81}$/.test(solution)) return false;
  for (let i = 0; i < 81; i++) {
    if (puzzle[i] !== '.' && puzzle[i] !== '0' && puzzle[i] !== solution[i]) return false;
  }
  for (let u = 0; u < 9; u++) {
    const row = [], col = [], box = [];
    for (let k = 0; k < 9; k++) {
      row.push(solution[u * 9 + k]);
      col.push(solution[k * 9 + u]);
      const r = 3 * Math.floor(u / 3) + Math.floor(k / 3);
      const c = 3 * (u % 3) + (k % 3);
      box.push(solution[r * 9 + c]);
    }
    for (const unit of [row, col, box]) {
      if (unit.sort().join('') !== '123456789') return false;
    }
  }
  return true;
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

// The detail of type `url` (decoded as `type`) in a call error's
// grpc-status-details-bin trailer, a google.rpc.Status.
function detail(err, type, url) {
  const [bytes] = err.metadata.get('grpc-status-details-bin');
  check(bytes, 'no grpc-status-details-bin on the error');
  const status = RpcStatus.decode(bytes);
  check(status.code === err.code, `details code ${status.code}, call code ${err.code}`);
  // google.protobuf.Any comes from protobufjs's built-in definition, which
  // keeps the proto field name type_url (the protos it parses get camelCase).
  const any = status.details.find((d) => d.type_url === url);
  check(any, `no ${url} in [${status.details.map((d) => d.type_url)}]`);
  return type.decode(any.value);
}

// The field violations ({field, description}) of the google.rpc.BadRequest.
function fieldViolations(err) {
  return detail(err, BadRequest, BAD_REQUEST_URL).fieldViolations;
}

// The google.rpc.ErrorInfo: {reason, domain, metadata}. The reason is the
// stable word to branch on (docs/grpc-web.md lists them); metadata.cells
// lists the cells at fault.
function errorInfo(err) {
  return detail(err, ErrorInfo, ERROR_INFO_URL);
}

// Solves `puzzle`, which must be refused with INVALID_ARGUMENT; returns the
// call error.
async function solveInvalid(puzzle) {
  try {
    await solve(puzzle);
  } catch (err) {
    check(err.code === grpc.status.INVALID_ARGUMENT, `Solve error code ${err.code}`);
    return err;
  }
  throw new Error('Solve accepted an invalid puzzle');
}

// Calls the unary method `name` with `request`.
function unary(name, request) {
  return new Promise((resolve, reject) => {
    client[name](request, { deadline: deadline(10) }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

// Reads a whole Generate stream.
function generate(request) {
  return new Promise((resolve, reject) => {
    const puzzles = [];
    const call = client.generate(request, { deadline: deadline(30) });
    call.on('data', (response) => puzzles.push(response));
    call.on('error', reject);
    call.on('end', () => resolve(puzzles));
  });
}

function solve(puzzle) {
  return new Promise((resolve, reject) => {
    client.solve({ puzzle: { text: puzzle } }, { deadline: deadline(10) }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

// Sends `messages` (arrays of {id, puzzle}) on one SolveBatch stream and
// resolves with every BatchResult, keyed by id.
function solveBatch(messages) {
  return new Promise((resolve, reject) => {
    const results = new Map();
    const call = client.solveBatch({ deadline: deadline(30) });
    call.on('data', (response) => {
      // Responses come in completion order: match them by id.
      for (const result of response.results) results.set(result.id, result);
    });
    call.on('error', reject);
    call.on('end', () => resolve(results));
    for (const items of messages) {
      call.write({ items: items.map(({ id, puzzle }) => ({ id, puzzle: { text: puzzle } })) });
    }
    call.end(); // half-close: the server answers what it has, then ends with OK
  });
}

async function main() {
  const one = await solve(PUZZLE);
  check(one.solution.outcome === 'OUTCOME_SOLVED', `Solve outcome ${one.solution.outcome}`);
  check(isValidSolution(PUZZLE, one.solution.grid.text), 'Solve: invalid solution');
  console.log(`ok: Solve -> ${one.solution.grid.text} (${one.solution.stats.nodes} nodes)`);

  // Other sizes: the Grid carries its box.
  const big = await unary('solve', { puzzle: { text: PUZZLE16, boxRows: 4, boxCols: 4 } });
  check(big.solution.outcome === 'OUTCOME_SOLVED', `Solve(16x16) outcome ${big.solution.outcome}`);
  check(big.solution.grid.boxRows === 4 && big.solution.grid.boxCols === 4, 'Solve(16x16): box');
  check(isValidSized(PUZZLE16, big.solution.grid.text, 4, 4), 'Solve(16x16): invalid solution');
  console.log(`ok: Solve (16x16, 4x4 boxes) -> solved in ${big.solution.stats.nodes} nodes`);

  // Two request messages: the batch, then a second one holding a bad puzzle.
  const items = BATCH.map((puzzle, i) => ({ id: String(i + 1), puzzle }));
  const bad = { id: '99', puzzle: CLASHING };
  const results = await solveBatch([items, [bad]]);
  check(results.size === items.length + 1, `SolveBatch: ${results.size} results`);
  for (const { id, puzzle } of items) {
    const result = results.get(id);
    check(result && result.result === 'solution', `item ${id}: no solution`);
    check(result.solution.outcome === 'OUTCOME_SOLVED', `item ${id}: ${result.solution.outcome}`);
    check(isValidSolution(puzzle, result.solution.grid.text), `item ${id}: invalid solution`);
  }
  const rejected = results.get('99');
  check(rejected && rejected.result === 'error', 'item 99 should carry an error');
  check(rejected.error.code === grpc.status.INVALID_ARGUMENT, `item 99 code ${rejected.error.code}`);
  check(/twice in row 1:/.test(rejected.error.message), `item 99 message ${rejected.error.message}`);
  console.log(`ok: SolveBatch -> ${items.length} solved; item 99: ${rejected.error.message}`);

  // A Solve error carries its status code and message, and a BadRequest
  // that names the field and the cells.
  const clash = await solveInvalid(CLASHING);
  console.log(`ok: Solve(clashing) -> INVALID_ARGUMENT: ${clash.details}`);
  let [v] = fieldViolations(clash);
  check(v.field === 'puzzle', `clash field ${v.field}`);
  check(
    v.description.includes('at row 1, column 1 and row 1, column 9'),
    `clash description ${v.description}`,
  );
  console.log(`ok: INVALID_ARGUMENT BadRequest: ${v.field}: ${v.description}`);
  let info = errorInfo(clash);
  check(info.reason === 'CONFLICTING_GIVENS', `clash reason ${info.reason}`);
  check(info.domain === 'sudoku.v1', `clash domain ${info.domain}`);
  check(info.metadata.cells === '0,8', `clash cells ${info.metadata.cells}`);
  console.log(`ok: INVALID_ARGUMENT ErrorInfo: ${info.reason} ${info.domain} cells=${info.metadata.cells}`);

  // A bad character: the violation names the text field and the cell.
  const badChar = PUZZLE.slice(0, 10) + 'x' + PUZZLE.slice(11);
  const badCharError = await solveInvalid(badChar);
  [v] = fieldViolations(badCharError);
  check(v.field === 'puzzle.text', `bad char field ${v.field}`);
  check(
    v.description.includes("'x'") && v.description.includes('row 2, column 2'),
    `bad char description ${v.description}`,
  );
  console.log(`ok: INVALID_ARGUMENT BadRequest: ${v.field}: ${v.description}`);
  info = errorInfo(badCharError);
  check(info.reason === 'MALFORMED_GRID', `bad char reason ${info.reason}`);
  check(info.metadata.cells === '10', `bad char cells ${info.metadata.cells}`);
  console.log(`ok: INVALID_ARGUMENT ErrorInfo: ${info.reason} ${info.domain} cells=${info.metadata.cells}`);

  // Validate: the clash is an answer, with the two cells and the unit.
  const report = await unary('validate', { puzzle: { text: CLASHING } });
  const [c] = report.conflicts;
  check(report.conflicts.length === 1, `Validate: ${report.conflicts.length} conflicts`);
  check(c.first === 0 && c.second === 8 && c.digit === 5, `Validate conflict ${JSON.stringify(c)}`);
  check(c.unit.kind === 'UNIT_KIND_ROW' && c.unit.index === 0, `Validate unit ${c.unit.kind}`);
  check(!report.solvable, 'Validate: a clashing puzzle is not solvable');
  console.log(`ok: Validate(clashing) -> conflict ${c.first}/${c.second} in ${c.unit.kind} ${c.unit.index}`);

  // Hint: the step agrees with the solution.
  const solution = one.solution.grid.text;
  const hint = await unary('hint', { puzzle: { text: PUZZLE } });
  const { step } = hint;
  check(step && step.techniqueName, 'Hint: no step');
  // searchComplete is false only when no technique applied and the search
  // behind the fallback step ran out of the server's work budget.
  check(hint.searchComplete === true && hint.solved === false, 'Hint: searchComplete / solved');
  for (const p of step.placements) {
    check(Number(solution[p.cell]) === p.digit, `Hint places ${p.digit} in cell ${p.cell}`);
  }
  for (const e of step.eliminations) {
    check(Number(solution[e.cell]) !== e.digit, `Hint removes the solution's ${e.digit}`);
  }
  console.log(`ok: Hint -> ${step.techniqueName}: ${step.explanation}`);

  // Generate: seeded, so the same request gives the same puzzles.
  const request = { count: 3, label: 'LABEL_EASY', seed: '7' };
  const first = await generate(request);
  const again = await generate(request);
  check(first.length === 3, `Generate: ${first.length} puzzles`);
  for (const [i, r] of first.entries()) {
    const p = r.puzzle;
    check(p.puzzle.text === again[i].puzzle.puzzle.text, 'Generate: same seed, other puzzles');
    check(isValidSolution(p.puzzle.text, p.solution.text), `Generate: bad solution ${i}`);
    check(p.rating.label === 'LABEL_EASY', `Generate label ${p.rating.label}`);
    check(p.minimal, `Generate: puzzle ${i} not minimal`);
  }
  console.log(`ok: Generate -> 3 easy puzzles, same for seed 7: ${first[0].puzzle.puzzle.text}`);
}

main()
  .then(() => {
    console.log('all checks passed');
    client.close();
  })
  .catch((err) => {
    console.log(`FAIL: ${err.message || err}`);
    client.close();
    process.exitCode = 1;
  });
