// Runs run(N) of eh.wasm's copy 0, instrumented for a JavaScript host,
// with a loader of its own that provides env.print, and writes its part.
//
//   node eh-host.mjs DIR N
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, n] = process.argv.slice(2);
if (!n) {
  process.stderr.write('usage: node eh-host.mjs DIR N\n');
  process.exit(2);
}
const { copy } = await import(pathToFileURL(resolve(dir, 'pathprof.mjs')));
const pp = copy(0);
let output = '';
const env = { print: (x) => { output += x + '\n'; } };
const { instance } = await WebAssembly.instantiate(readFileSync(join(dir, 'copy-0.wasm')), pp.imports({ env }));
instance.exports.run(Number(n));
process.stdout.write(output);
await pp.write(join(dir, 'part-0.json'), { instance, output });
