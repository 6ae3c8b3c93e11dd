// Runs an instrumented WASI program under node, deterministically, and
// saves its counters.
//
//   node run.cjs [--config FILE] PROGRAM.wasm COUNTERS.wasm|- COUNTS.out [ARGS...]
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

// A leading "--config FILE" gives the program's name (argv0), environment
// ({"KEY": "VALUE"}) and preopened directories ([["GUEST", "HOST"], ...], in
// the order the program sees them; ["GUEST", "HOST", "ro"] for a read-only
// one) as JSON;
// without it the program gets its file's name, no environment and no file
// system.
let argv = process.argv.slice(2);
let config = {};
if (argv[0] === '--config') {
  config = JSON.parse(fs.readFileSync(argv[1], 'utf8'));
  argv = argv.slice(2);
}
const [program, countersPath, countsOut, ...args] = argv;
if (!program || !countersPath || !countsOut) {
  process.stderr.write('usage: node run.cjs [--config FILE] PROGRAM.wasm COUNTERS.wasm COUNTS.out [ARGS...]\n');
  process.exit(2);
}

const wasi = new WASI({
  version: 'preview1',
  args: [config.argv0 || path.basename(program), ...args],
  env: config.env || {},
  preopens: Object.fromEntries(config.preopens || []),
  returnOnExit: true,
});
const counters = countersPath === '-' ? null : new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(countersPath)), {});
// node 18 (Debian's) has no getImportObject.
const imports = wasi.getImportObject ? wasi.getImportObject() : { wasi_snapshot_preview1: wasi.wasiImport };
const preview1 = imports.wasi_snapshot_preview1;

// node's WASI reads the host's clocks and random source; replace them with
// the fixed ones wazero uses by default (a real-time clock starting
// 2022-01-01 and a monotonic one starting at 0, each advancing 1 ms per
// read, and a seeded byte stream), so that every copy of a program follows
// the same paths. The config's "random" file, when given, holds the first
// bytes of wazero's own stream, which a run then reads as under wazero (a
// run needing more fails); without it the stream is node's own.
let memory;
const clocks = [1640995200000000000n - 1000000n, -1000000n];
preview1.clock_time_get = (id, precision, out) => {
  if (id > 1) {
    return 28; // EINVAL: wazero has only these two clocks
  }
  clocks[id] += 1000000n;
  new DataView(memory.buffer).setBigUint64(out, clocks[id], true);
  return 0;
};
const stream = config.random ? fs.readFileSync(config.random) : null;
let streamPos = 0;
let seed = 42n;
preview1.random_get = (buf, len) => {
  const bytes = new Uint8Array(memory.buffer, buf, len);
  if (stream) {
    if (streamPos + len > stream.length) {
      throw new Error(`random_get: more than the ${stream.length} bytes of the fixed random stream`);
    }
    bytes.set(stream.subarray(streamPos, streamPos + len));
    streamPos += len;
    return 0;
  }
  for (let i = 0; i < len; i++) {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    bytes[i] = Number(seed >> 56n);
  }
  return 0;
};
if (counters) {
  imports.pathprof = counters.exports;
}

// wazero refuses with ENOTSUP to renumber a descriptor from or onto a
// preopened one (a standard stream or a mounted directory, until it is
// closed); node's WASI renumbers them. Programs that capture a tool's
// output by renumbering onto stdout (yowasp's yosys around ABC) would
// take other paths under node than under wazero, so they are refused
// here as there.
const preopened = new Set([0, 1, 2]);
(config.preopens || []).forEach((_, i) => preopened.add(3 + i));
const fdClose = preview1.fd_close;
const fdRenumber = preview1.fd_renumber;
preview1.fd_close = (fd) => {
  const errno = fdClose(fd);
  if (errno === 0) {
    preopened.delete(fd);
  }
  return errno;
};
preview1.fd_renumber = (from, to) => (preopened.has(from) || preopened.has(to) ? 58 : fdRenumber(from, to));

// node's WASI has no read-only directories: a read-only mount is made
// one here, as wazero makes it. Every descriptor opened through it is
// tracked, and an open through one of them that would write (create,
// truncate, or ask for fd_write) fails with EROFS, as does every call that
// would create, remove, rename or link a name through them or change a
// file's size or times (a link or rename from one is refused too: the
// file would then be written elsewhere); writing to a descriptor opened
// through one fails with EBADF.
const readOnly = new Set((config.preopens || []).flatMap((p, i) => (p[2] === 'ro' ? [3 + i] : [])));
if (readOnly.size > 0) {
  const EBADF = 8;
  const EROFS = 69;
  const FD_WRITE = 1n << 6n;
  const CREAT_OR_TRUNC = 1 | 8;
  const ro = (...fds) => fds.some((fd) => readOnly.has(fd));
  const refuse = (name, errno, fdsOf) => {
    const f = preview1[name];
    preview1[name] = (...a) => (ro(...fdsOf(a)) ? errno : f(...a));
  };
  const pathOpen = preview1.path_open;
  preview1.path_open = (fd, dirflags, path, len, oflags, base, inheriting, fdflags, opened) => {
    if (!readOnly.has(fd)) {
      return pathOpen(fd, dirflags, path, len, oflags, base, inheriting, fdflags, opened);
    }
    if ((oflags & CREAT_OR_TRUNC) !== 0 || (BigInt(base) & FD_WRITE) !== 0n) {
      return EROFS;
    }
    const errno = pathOpen(fd, dirflags, path, len, oflags, base, inheriting, fdflags, opened);
    if (errno === 0) {
      readOnly.add(new DataView(memory.buffer).getUint32(opened, true));
    }
    return errno;
  };
  for (const name of ['fd_write', 'fd_pwrite', 'fd_allocate', 'fd_filestat_set_size', 'fd_filestat_set_times']) {
    refuse(name, EBADF, (a) => [a[0]]);
  }
  for (const name of ['path_create_directory', 'path_filestat_set_times', 'path_remove_directory', 'path_unlink_file']) {
    refuse(name, EROFS, (a) => [a[0]]);
  }
  refuse('path_link', EROFS, (a) => [a[0], a[4]]);
  refuse('path_rename', EROFS, (a) => [a[0], a[3]]);
  refuse('path_symlink', EROFS, (a) => [a[2]]);
  const close = preview1.fd_close;
  preview1.fd_close = (fd) => {
    const errno = close(fd);
    if (errno === 0) {
      readOnly.delete(fd);
    }
    return errno;
  };
  const renumber = preview1.fd_renumber;
  preview1.fd_renumber = (from, to) => {
    const errno = renumber(from, to);
    if (errno === 0) {
      readOnly.delete(to);
      if (readOnly.delete(from)) {
        readOnly.add(to);
      }
    }
    return errno;
  };
}

// node 20 freed its WASI object while a big program ran, from a garbage
// collection inside fd_write, and aborted: the object and the imports
// stay reachable until the run ends.
globalThis.pathprofRun = { wasi, imports };

const instance = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(program)), imports);
memory = instance.exports.memory;
let code = 0;
try {
  code = wasi.start(instance);
} catch (e) {
  // A trap: COUNTS.out.error says so, as wazero's run would fail.
  fs.writeFileSync(countsOut + '.error', String(e));
  throw e;
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
// Exit at once, not when the event loop drains: node 20 crashed with
// SIGSEGV tearing down the isolate after a big program's run (yowasp's
// yosys; not with --single-threaded), exiting 139 instead of the
// program's code. The program wrote its output to the descriptors
// directly and the counts are written: nothing is left to flush.
process.exit(code);
