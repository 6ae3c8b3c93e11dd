// This file reads the report's data from the page's JSON script elements:
// the overview at load, a function's details when it is first shown. It is
// the first of the page's scripts, which htmlreport.go concatenates into
// one script element in the order of pageScripts.
'use strict';

const OV = JSON.parse(document.getElementById('overview').textContent);
const SVGNS = 'http://www.w3.org/2000/svg';
const app = document.getElementById('app');

// Function rows: [index, name, status, executions, calls, executed paths,
// possible paths, coverage, blocks].
const F = {index: 0, name: 1, status: 2, exec: 3, calls: 4, paths: 5, possible: 6, cov: 7, blocks: 8};

const rowOf = new Map(OV.funcs.map((f, i) => [String(f[0]), i]));
const details = new Map();
function detail(row) {
  let d = details.get(row);
  if (!d) {
    const el = document.getElementById('fd' + row);
    d = el ? JSON.parse(el.textContent) : null;
    if (d && d.b) { d.b = unflat(d.b, 4); d.e = unflat(d.e, 5); }
    details.set(row, d);
  }
  return d;
}

function unflat(a, n) {
  const out = [];
  for (let i = 0; i < a.length; i += n) out.push(a.slice(i, i + n));
  return out;
}
