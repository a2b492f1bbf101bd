#!/usr/bin/env node
// Calls the gRPC-Web endpoint directly, without a browser, the way the page
// does (Connect's gRPC-Web transport, binary, over HTTP/1.1): a Solve, and
// malformed and clashing puzzles whose google.rpc.BadRequest and ErrorInfo
// are decoded. When the browser test fails and this passes, the page broke;
// when this fails too, the endpoint did. tests/it/node_client.rs runs it.
//
// Usage:  node test/endpoint.mjs http://127.0.0.1:PORT
// Exit status 0 when every check passed; 1 with a "FAIL:" line otherwise.

import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-node';
import { BadRequestSchema, ErrorInfoSchema } from '../src/gen/google/rpc/error_details_pb.js';
import { Outcome, SudokuService } from '../src/gen/sudoku/v1/sudoku_pb.js';
import { CLASSIC, whyNotSolution } from './sudoku.mjs';

const baseUrl = process.argv[2] ?? 'http://127.0.0.1:50051';
const client = createClient(
  SudokuService,
  createGrpcWebTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: true }),
);

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function refused(text) {
  try {
    await client.solve({ puzzle: { text } }, { timeoutMs: 10_000 });
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error(`Solve accepted ${JSON.stringify(text)}`);
}

function details(err) {
  check(err.code === Code.InvalidArgument, `code ${Code[err.code]}: ${err.rawMessage}`);
  const [bad] = err.findDetails(BadRequestSchema);
  const [info] = err.findDetails(ErrorInfoSchema);
  check(bad, `no google.rpc.BadRequest in ${JSON.stringify(err.details.map((d) => d.desc?.typeName ?? d.type))}`);
  check(info, 'no google.rpc.ErrorInfo');
  check(info.domain === 'sudoku.v1', `domain ${info.domain}`);
  return { violations: bad.fieldViolations, info };
}

async function main() {
  let headers;
  const { solution } = await client.solve(
    { puzzle: { text: CLASSIC } },
    { timeoutMs: 10_000, onHeader: (h) => (headers = h) },
  );
  check(solution?.outcome === Outcome.SOLVED, `Solve outcome ${solution?.outcome}`);
  const why = whyNotSolution(CLASSIC, solution.grid?.text ?? '');
  check(why === null, `Solve: ${why}`);
  console.log(`ok: Solve -> ${solution.grid.text} (${solution.stats?.nodes} nodes)`);
  const accepted = headers?.get('grpc-accept-encoding') ?? '';
  check(accepted.split(',').includes('gzip'), `grpc-accept-encoding ${JSON.stringify(accepted)}`);
  console.log(`ok: grpc-accept-encoding: ${accepted}`);

  const malformed = CLASSIC.slice(0, 10) + 'x' + CLASSIC.slice(11);
  let { violations, info } = details(await refused(malformed));
  check(violations.length === 1, `${violations.length} violations`);
  let [v] = violations;
  check(v.field === 'puzzle.text', `field ${v.field}`);
  check(v.description.includes('row 2, column 2'), `description ${v.description}`);
  check(info.reason === 'MALFORMED_GRID' && info.metadata.cells === '10', `ErrorInfo ${JSON.stringify(info)}`);
  console.log(`ok: malformed -> INVALID_ARGUMENT ${v.field}: ${v.description} [${info.reason} cells=${info.metadata.cells}]`);

  ({ violations, info } = details(await refused('5' + CLASSIC.slice(1, 8) + '5' + CLASSIC.slice(9))));
  [v] = violations;
  check(v.field === 'puzzle' && v.description.includes('row 1, column 9'), `clash ${v.field}: ${v.description}`);
  check(info.reason === 'CONFLICTING_GIVENS' && info.metadata.cells === '0,8', `ErrorInfo ${JSON.stringify(info)}`);
  console.log(`ok: clashing -> INVALID_ARGUMENT ${v.field}: ${v.description} [${info.reason} cells=${info.metadata.cells}]`);

  ({ violations, info } = details(await refused(CLASSIC.slice(0, 80))));
  check(info.reason === 'MALFORMED_GRID' && !('cells' in info.metadata), `short ErrorInfo ${JSON.stringify(info)}`);
  console.log(`ok: short -> INVALID_ARGUMENT ${violations[0].field}: ${violations[0].description} [${info.reason}]`);
  console.log('all checks passed');
}

main().catch((err) => {
  console.log(`FAIL: ${err.stack ?? err}`);
  process.exit(1);
});
