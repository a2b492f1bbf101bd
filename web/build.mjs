// Builds the page the server embeds (src/server/web_page.rs) into dist/:
// code for the proto (buf generate with protoc-gen-es, both from npm), one
// bundle of the page's code with esbuild, the HTML and CSS copied. The same
// inputs and the same lock file give the same bytes: .ci/check-web.sh
// rebuilds and compares with the committed dist/.
//
//   npm ci && npm run build      (in web/)

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, 'node_modules', '.bin');
const dist = join(here, 'dist');

execFileSync(join(bin, 'buf'), ['generate'], {
  cwd: here,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
});

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
await esbuild.build({
  absWorkingDir: here,
  entryPoints: ['src/main.js'],
  outfile: 'dist/app.js',
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2020',
  platform: 'browser',
  legalComments: 'none',
  charset: 'utf8',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) {
  copyFileSync(join(here, 'src', file), join(dist, file));
}
console.log('web: built dist/ (index.html, app.js, app.css)');
