// Runs an instrumented WASI program under node, deterministically, and
// saves its counters.
//
//   node run.cjs PROGRAM.wasm COUNTERS.wasm|- COUNTS.out [ARGS...]
//
// COUNTERS.wasm is the program's counter module, or - when its counters
// live in its own memory (it then exports their address as the global
// pathprof_counters). Standard input, output and error are the program's.
// The exit status is the program's. COUNTS.out receives the counter area,
// which pathprof reads back ("pathprof exec --counts" or counters.Read).
// A P3 copy that shares out the calls of functions exports their call
// counters as globals pathprof_calls_INDEX; COUNTS.out.calls then
// receives them as JSON, {"pathprof_calls_INDEX": "COUNT", ...}.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { WASI } = require('node:wasi');

const [program, countersPath, countsOut, ...args] = process.argv.slice(2);
if (!program || !countersPath || !countsOut) {
  process.stderr.write('usage: node run.cjs PROGRAM.wasm COUNTERS.wasm COUNTS.out [ARGS...]\n');
  process.exit(2);
}

const wasi = new WASI({
  version: 'preview1',
  args: [path.basename(program), ...args],
  env: {},
  preopens: {},
  returnOnExit: true,
});
const counters = countersPath === '-' ? null : new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(countersPath)), {});
// node 18 (Debian's) has no getImportObject.
const imports = wasi.getImportObject ? wasi.getImportObject() : { wasi_snapshot_preview1: wasi.wasiImport };
const preview1 = imports.wasi_snapshot_preview1;

// node's WASI reads the host's clocks and random source; replace them with
// the fixed ones wazero uses by default (a clock starting 2022-01-01 that
// advances 1 ms per read, and a seeded byte stream), so that every copy of
// a program follows the same paths.
let memory;
let now = 1640995200000000000n;
preview1.clock_time_get = (id, precision, out) => {
  now += 1000000n;
  new DataView(memory.buffer).setBigUint64(out, now, true);
  return 0;
};
let seed = 42n;
preview1.random_get = (buf, len) => {
  const bytes = new Uint8Array(memory.buffer, buf, len);
  for (let i = 0; i < len; i++) {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    bytes[i] = Number(seed >> 56n);
  }
  return 0;
};
if (counters) {
  imports.pathprof = counters.exports;
}

const instance = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(program)), imports);
memory = instance.exports.memory;
let code = 0;
try {
  code = wasi.start(instance);
} finally {
  if (counters) {
    fs.writeFileSync(countsOut, new Uint8Array(counters.exports.memory.buffer));
  } else {
    // The counter area runs from its address to the end of memory.
    fs.writeFileSync(countsOut, new Uint8Array(memory.buffer, instance.exports.pathprof_counters.value >>> 0));
  }
  const calls = {};
  for (const [name, g] of Object.entries(instance.exports)) {
    if (name.startsWith('pathprof_calls_')) {
      calls[name] = BigInt.asUintN(64, g.value).toString();
    }
  }
  if (Object.keys(calls).length > 0) {
    fs.writeFileSync(countsOut + '.calls', JSON.stringify(calls));
  }
}
process.exitCode = code;
