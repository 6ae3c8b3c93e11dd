// pathprof's part of a JavaScript host: written by `pathprof instrument
// --host js` beside the instrumented copies (copy-N.wasm), with their
// counter modules inside. The host loads a copy with its own loader; this
// module adds the copy's counter module to the import object and, after
// the program ran, turns the counters into the copy's part, which
// `pathprof merge` turns into the profile.
//
//   import { copy } from './pathprof.mjs';
//   const pp = copy(0);
//   const { instance } = await WebAssembly.instantiate(bytes, pp.imports(importObject));
//   ... run the program ...
//   const part = await pp.part({ instance, exitCode, output });   // the part's JSON text
//   await pp.write('part-0.json', { instance, exitCode, output }); // node only
//
// With emscripten's glue, pp.emscripten(Module, bytes) does the wiring:
// the glue's Module.instantiateWasm hook instantiates the copy with the
// glue's import object, and print, printErr, onExit and quit record the
// output and the exit code; await pp.done, then pp.part() or
// pp.write(FILE). Runs in node (18 and later) and in browsers.

const manifest = /*MANIFEST*/ null;

// The counter module's memory, as internal/counters lays it out.
function readCounts(mem) {
  const { magic, version, dense, entry } = manifest.counters;
  const dv = new DataView(mem.buffer, mem.byteOffset, mem.byteLength);
  const fail = (why) => { throw new Error('pathprof: counter memory: ' + why); };
  if (mem.length < 16 || dv.getUint32(0, true) !== magic) fail('bad header');
  if (dv.getUint32(4, true) !== version) fail('version ' + dv.getUint32(4, true) + ', want ' + version);
  const n = dv.getUint32(8, true);
  const h = dv.getUint32(12, true);
  const start = (16 + 4 * n + 7) & ~7;
  if (start > mem.length || h + 16 > mem.length) fail('truncated');
  const counts = new Map();
  const add = (f, p, c) => {
    if (c === 0n) return;
    let m = counts.get(f);
    if (!m) counts.set(f, (m = new Map()));
    m.set(p, (m.get(p) || 0n) + c);
  };
  // A descriptor is the kind plus 4 times a dense function's paths; the
  // dense arrays follow them, fewest paths first, then by function.
  const arrays = [];
  for (let f = 0; f < n; f++) {
    const d = dv.getUint32(16 + 4 * f, true);
    if ((d & 3) === dense) arrays.push({ f, paths: d >>> 2 });
  }
  arrays.sort((a, b) => a.paths - b.paths || a.f - b.f);
  let base = start;
  for (const { f, paths } of arrays) {
    if (base + 8 * paths > mem.length) fail('dense array of function ' + f + ' out of bounds');
    for (let p = 0; p < paths; p++) add(f, BigInt(p), dv.getBigUint64(base + 8 * p, true));
    base += 8 * paths;
  }
  const cap = dv.getUint32(h, true);
  const tbase = dv.getUint32(h + 8, true);
  if (tbase + cap * entry > mem.length) fail('hash table out of bounds');
  for (let i = 0; i < cap; i++) {
    const e = tbase + i * entry;
    const key = dv.getUint32(e, true);
    if (key === 0) continue;
    if (key - 1 >= n) fail('hash entry for unknown function ' + (key - 1));
    add(key - 1, dv.getBigUint64(e + 8, true), dv.getBigUint64(e + 16, true));
  }
  return counts;
}

function base64(s) {
  if (typeof atob === 'function') return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  return new Uint8Array(Buffer.from(s, 'base64'));
}

async function sha256Hex(bytes) {
  let subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (!subtle && typeof process === 'object') subtle = (await import('node:crypto')).webcrypto.subtle;
  if (!subtle) throw new Error('pathprof: no crypto.subtle to hash the output with (pages need a secure context: https or 127.0.0.1)');
  const d = new Uint8Array(await subtle.digest('SHA-256', bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

function utf8(x) {
  if (x == null) return new Uint8Array(0);
  return typeof x === 'string' ? new TextEncoder().encode(x) : new Uint8Array(x);
}

// The part's JSON, written by hand: its counts are 64-bit.
function partJSON(p) {
  const map = (m) => '{' + Array.from(m, ([k, v]) => JSON.stringify(String(k)) + ':' + v).join(',') + '}';
  const counts = '{' + Array.from(p.counts, ([f, m]) => JSON.stringify(String(f)) + ':' + map(m)).join(',') + '}';
  const fields = [
    '"format":' + JSON.stringify(manifest.part.format),
    '"version":' + manifest.part.version,
    '"module_sha256":' + JSON.stringify(manifest.module_sha256),
    '"copy_sha256":' + JSON.stringify(p.copySHA256),
    '"copy":' + p.copy,
    '"exit_code":' + p.exitCode,
    '"output_sha256":' + JSON.stringify(p.outputSHA256),
    '"seconds":' + p.seconds,
  ];
  if (p.error) fields.push('"error":' + JSON.stringify(p.error));
  fields.push('"counts":' + counts);
  if (p.calls.size > 0) fields.push('"calls":' + map(p.calls));
  return '{' + fields.join(',') + '}\n';
}

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());

// Copy is one run of one copy.
class Copy {
  constructor(c) {
    if (!Number.isInteger(c) || c < 0 || c >= manifest.copies.length) {
      throw new Error('pathprof: copy ' + c + ': this directory has copies 0 to ' + (manifest.copies.length - 1));
    }
    this.copy = c;
    this.counters = null;
    this.instance = null;
    this.exitCode = 0;
    this.error = '';
    this.stdout = [];
    this.stderr = [];
    this.start = now();
    this.end = null; // when the run ended
    this.done = new Promise((resolve) => { this.finish = resolve; });
  }

  // imports adds the counter module, instantiated afresh (its counters at
  // zero), to importObject under the name the copy imports it by, and
  // returns importObject.
  imports(importObject = {}) {
    const bytes = base64(manifest.copies[this.copy].counters);
    this.counters = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    importObject[manifest.import_module] = this.counters.exports;
    this.start = now();
    return importObject;
  }

  // emscripten prepares the Module object of emscripten's glue to run
  // this copy, whose module (bytes, or a compiled WebAssembly.Module) the
  // host has loaded, and returns it.
  emscripten(Module, wasm) {
    Module.instantiateWasm = (info, receiveInstance) => {
      const module = wasm instanceof WebAssembly.Module ? wasm : new WebAssembly.Module(wasm);
      const instance = new WebAssembly.Instance(module, this.imports(info));
      this.instance = instance;
      receiveInstance(instance, module);
      return instance.exports;
    };
    const print = Module.print || ((s) => console.log(s));
    const printErr = Module.printErr || ((s) => console.warn(s));
    Module.print = (s) => { this.stdout.push(s + '\n'); print(s); };
    Module.printErr = (s) => { this.stderr.push(s + '\n'); printErr(s); };
    const onExit = Module.onExit;
    Module.onExit = (code) => { this.exited(code); if (onExit) onExit(code); };
    const onAbort = Module.onAbort;
    Module.onAbort = (what) => { this.exited(1, String(what)); if (onAbort) onAbort(what); };
    // The glue's own quit ends node's process, before the part is out.
    const quit = Module.quit;
    Module.quit = (status, toThrow) => {
      this.exited(status, toThrow && toThrow.name !== 'ExitStatus' ? String(toThrow) : '');
      if (quit) return quit(status, toThrow);
      throw toThrow;
    };
    // Without EXIT_RUNTIME the glue neither exits nor says so: the run
    // is over when main returned.
    const postRun = [].concat(Module.postRun || []);
    Module.postRun = [...postRun, () => this.exited(0)];
    return Module;
  }

  // exited records the end of the run, with error saying why it failed
  // (a trap the host caught, say): the first call counts.
  exited(code, error = '') {
    if (this.end !== null) return;
    this.end = now();
    this.exitCode = code >>> 0;
    this.error = error;
    this.finish(this.exitCode);
  }

  // part returns the copy's part as JSON text. instance (the program's
  // instance, for the call counters some P3 copies keep), exitCode, output
  // (stdout then stderr, as a string or bytes) and error (why the run
  // failed) default to what emscripten() recorded.
  async part(opts = {}) {
    if (!this.counters) throw new Error('pathprof: copy ' + this.copy + ' never ran: pass its import object through imports()');
    if (this.end === null) this.exited(opts.exitCode || 0, opts.error || '');
    const instance = opts.instance || this.instance;
    const calls = new Map();
    if (instance) {
      for (const [name, g] of Object.entries(instance.exports)) {
        if (name.startsWith(manifest.calls_prefix)) calls.set(name.slice(manifest.calls_prefix.length), BigInt.asUintN(64, BigInt(g.value)));
      }
    }
    const output = 'output' in opts ? utf8(opts.output) : utf8(this.stdout.join('') + this.stderr.join(''));
    return partJSON({
      copy: this.copy,
      copySHA256: manifest.copies[this.copy].sha256,
      exitCode: 'exitCode' in opts ? opts.exitCode >>> 0 : this.exitCode,
      error: 'error' in opts ? opts.error : this.error,
      outputSHA256: await sha256Hex(output),
      seconds: (this.end - this.start) / 1000,
      counts: readCounts(new Uint8Array(this.counters.exports.memory.buffer)),
      calls,
    });
  }

  // write writes the part to file (node), through a temporary file
  // renamed into place.
  async write(file, opts = {}) {
    const text = await this.part(opts);
    const fs = await import('node:fs');
    const tmp = file + '.tmp' + process.pid;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
    return text;
  }
}

// copy starts a run of copy c (0 for SBL).
export function copy(c = 0) {
  return new Copy(c);
}

// copies is the number of copies; each must run on the same input.
export const copies = manifest.copies.length;
