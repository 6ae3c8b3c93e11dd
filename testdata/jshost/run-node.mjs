// Runs one instrumented copy of grow through emscripten's glue in node and
// writes its part: what a node host adds to its own loader to profile.
//
//   node run-node.mjs DIR COPY PART [ARGS...]
//
// DIR is what `pathprof instrument --host js` wrote for grow.wasm.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, copyArg, partFile, ...args] = process.argv.slice(2);
if (!partFile) {
  process.stderr.write('usage: node run-node.mjs DIR COPY PART [ARGS...]\n');
  process.exit(2);
}
const { copy } = await import(pathToFileURL(resolve(dir, 'pathprof.mjs')));
const pp = copy(Number(copyArg));
const createGrow = createRequire(import.meta.url)('./grow.js');
try {
  createGrow(pp.emscripten({ arguments: args }, readFileSync(join(dir, `copy-${copyArg}.wasm`))));
} catch (e) {
  // A trap, which the glue rethrows once it has told pp; the part
  // records it, and merge marks the profile incomplete.
  pp.exited(1, String(e));
}
process.exitCode = await pp.done;
await pp.write(partFile);
if (pp.error) process.stderr.write(`copy ${copyArg}: ${pp.error}\n`);
