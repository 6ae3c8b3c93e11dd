// Runs one copy of a WASI program for a JavaScript host under node's WASI,
// loading it as any host would, with pathprof.mjs adding the counter
// module to the import object, and writes its part.
//
//   node wasi-host.mjs DIR COPY PART [ARGS...]
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WASI } from 'node:wasi';

const [dir, copyArg, partFile, ...args] = process.argv.slice(2);
if (!partFile) {
  process.stderr.write('usage: node wasi-host.mjs DIR COPY PART [ARGS...]\n');
  process.exit(2);
}
const { copy } = await import(pathToFileURL(resolve(dir, 'pathprof.mjs')));
const pp = copy(Number(copyArg));
// The program's output goes to files, for the part's output hash, which
// is of stdout followed by stderr.
const tmp = mkdtempSync(join(tmpdir(), 'pathprof-wasi-host-'));
const fds = [openSync(join(tmp, 'stdout'), 'w'), openSync(join(tmp, 'stderr'), 'w')];
const wasi = new WASI({ version: 'preview1', args: ['program', ...args], env: {}, stdout: fds[0], stderr: fds[1], returnOnExit: true });
// node 18 (Debian's) has no getImportObject.
const imports = wasi.getImportObject ? wasi.getImportObject() : { wasi_snapshot_preview1: wasi.wasiImport };
const { instance } = await WebAssembly.instantiate(readFileSync(join(dir, `copy-${copyArg}.wasm`)), pp.imports(imports));
const exitCode = wasi.start(instance);
fds.forEach(closeSync);
const stdout = readFileSync(join(tmp, 'stdout'));
const stderr = readFileSync(join(tmp, 'stderr'));
rmSync(tmp, { recursive: true });
process.stdout.write(stdout);
process.stderr.write(stderr);
const output = Buffer.concat([stdout, stderr]);
await pp.write(partFile, { instance, exitCode, output });
process.exitCode = exitCode;
