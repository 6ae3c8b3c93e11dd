// This file holds the helpers every view uses: element builders, number
// formats, links to functions and paths, and the top bar.

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of kids.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return e;
}
function s(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs || {}) {
    if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
  }
  for (const c of kids.flat()) {
    if (c === undefined || c === null) continue;
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Counts arrive as numbers, or as decimal strings past 2^53.
function fmt(n) {
  const str = String(n);
  if (!/^\d+$/.test(str)) return str;
  return str.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
function big(n) { try { return BigInt(n); } catch (e) { return 0n; } }
function pct(p) {
  if (p < 0) return '–';
  if (p === 0) return '0.0%';
  if (p < 0.05) return '<0.1%';
  if (p > 99.95 && p < 100) return '>99.9%';
  return p.toFixed(1) + '%';
}
function shortNum(str) {
  str = String(str);
  if (str.length <= 12) return fmt(str);
  return '~' + str[0] + '.' + str.slice(1, 4) + 'e' + (str.length - 1);
}
function hex(n) { return '0x' + Number(n).toString(16); }
function covBar(p) {
  return h('span', {}, h('span', {class: 'bar'}, h('i', {style: 'width:' + Math.max(0, Math.min(100, p)).toFixed(1) + '%'})), pct(p));
}
function funcLink(row, pathID) {
  const f = OV.funcs[row];
  let href = '#f=' + f[F.index];
  if (pathID !== undefined) href += '&p=' + pathID;
  return href;
}

function parseHash() {
  const q = new URLSearchParams(location.hash.replace(/^#/, ''));
  return {f: q.get('f'), p: q.get('p'), run: q.get('run')};
}

function header(sub) {
  return h('header', {class: 'topbar'},
    h('a', {class: 'title', href: '#'}, 'pathprof'),
    sub ? h('span', {}, sub) : null,
    h('span', {class: 'mod', title: OV.run.module}, OV.run.module));
}
