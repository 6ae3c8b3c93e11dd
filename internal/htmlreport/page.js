'use strict';
// The page is driven by its URL fragment: "" is the overview, "f=IDX" the
// function with wasm function index IDX, "f=IDX&p=ID" the same with its
// path ID selected. Links and clicks only change the fragment, so every
// view can be bookmarked and the back button works.

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
  return {f: q.get('f'), p: q.get('p')};
}

function header(sub) {
  return h('header', {class: 'topbar'},
    h('a', {class: 'title', href: '#'}, 'pathprof'),
    sub ? h('span', {}, sub) : null,
    h('span', {class: 'mod', title: OV.run.module}, OV.run.module));
}

// ---------- overview ----------

const ovState = {page: 0, per: 100, sort: 'exec', filter: '', ran: true};
let rankExec = null, rankPaths = null;
function ranks() {
  if (rankExec) return;
  // The functions come most executed first.
  rankExec = new Int32Array(OV.funcs.length);
  rankPaths = new Int32Array(OV.funcs.length);
  const byPaths = OV.funcs.map((_, i) => i);
  byPaths.sort((a, b) => (OV.funcs[b][F.paths] - OV.funcs[a][F.paths]) || (a - b));
  for (let i = 0; i < OV.funcs.length; i++) rankExec[i] = i + 1;
  byPaths.forEach((row, i) => { rankPaths[row] = i + 1; });
}

function showOverview() {
  ranks();
  const run = OV.run, t = OV.totals;
  const m = h('main', {id: 'overview'});
  if (!run.complete) {
    m.appendChild(h('div', {class: 'banner bad'}, h('b', {}, 'Incomplete profile: '), run.incomplete,
      '. Counts are exact for the paths that completed; paths still running when a run ended are not counted.'));
  }
  for (const w of OV.warnings) m.appendChild(h('div', {class: 'banner note'}, 'Warning: ' + w));
  for (const n of OV.notes) m.appendChild(h('div', {class: 'banner note'}, n));

  m.appendChild(h('div', {class: 'cards'},
    card(pct(t.coverage), 'path coverage: ' + fmt(t.paths) + ' of ' + shortNum(t.possible_paths) + ' acyclic paths'),
    card(fmt(t.executions), 'path executions'),
    card(fmt(t.calls), 'calls (paths from a function entry)'),
    card(fmt(t.executed) + ' / ' + fmt(t.profiled), 'functions that ran / profiled'),
    t.skipped ? card(fmt(t.skipped), 'functions not profiled') : null));

  const srcDesc = {dwarf: 'source lines from DWARF', offsets: 'function + offset (the module has no DWARF)',
    none: 'file offsets (the module was not found)'}[run.source] || run.source;
  const facts = h('table', {class: 'facts', id: 'facts'},
    fact('module', h('span', {class: 'mono'}, run.module)),
    run.sha256 ? fact('sha256', h('span', {class: 'mono'}, run.sha256)) : null,
    fact('strategy', run.strategy + ', ' + run.copies + (run.copies === 1 ? ' copy' : ' copies')),
    fact('result', (run.complete ? 'complete' : 'INCOMPLETE: ' + run.incomplete) + ', exit code ' + run.exit_code),
    fact('blocks shown as', srcDesc));
  const runs = h('table', {class: 'data', id: 'runs'},
    h('tr', {}, h('th', {class: 'num'}, 'copy'), h('th', {class: 'num'}, 'probe hits'), h('th', {class: 'num'}, 'seconds'),
      h('th', {class: 'num'}, 'exit'), h('th', {}, 'error')),
    run.runs.map(c => h('tr', {}, h('td', {class: 'num'}, c.copy), h('td', {class: 'num'}, fmt(c.probe_hits)),
      h('td', {class: 'num'}, c.seconds.toFixed(3)), h('td', {class: 'num'}, c.exit_code), h('td', {}, c.error || ''))));
  m.appendChild(h('div', {class: 'cols'}, h('div', {}, h('h2', {}, 'Run'), facts), h('div', {}, h('h2', {}, 'Copies'), runs)));

  m.appendChild(h('div', {class: 'cols'},
    h('div', {}, h('h2', {}, 'Hottest paths by count'), hotTable(OV.hot, 'hot')),
    h('div', {}, h('h2', {}, 'Hottest paths by count × blocks'), hotTable(OV.hot_len, 'hot-len'))));

  m.appendChild(h('h2', {}, 'Functions'));
  const box = h('div', {id: 'functions'});
  m.appendChild(box);
  app.replaceChildren(header('overview'), m);
  renderFunctions(box);
  document.title = OV.title;
}

function card(v, k) { return h('div', {class: 'card'}, h('div', {class: 'v'}, v), h('div', {class: 'k'}, k)); }
function fact(k, v) { return h('tr', {}, h('td', {}, k), h('td', {}, v)); }

const hotShown = {hot: 10, 'hot-len': 10};
function hotTable(list, id) {
  if (!list.length) return h('p', {class: 'muted'}, 'No paths ran.');
  const rows = list.slice(0, hotShown[id]).map(([row, pid, count, kind, len, where], i) => {
    const f = OV.funcs[row];
    return h('tr', {class: 'click', dataset: {f: f[F.index], p: pid}, onclick: () => { location.hash = funcLink(row, pid); }},
      h('td', {class: 'num'}, i + 1),
      h('td', {class: 'num'}, fmt(count)),
      h('td', {class: 'num'}, len),
      h('td', {}, OV.kinds[kind]),
      h('td', {}, h('a', {href: funcLink(row, pid), class: 'fname', title: f[F.name]}, clip(f[F.name], 40))),
      h('td', {class: 'mono muted', title: where}, where.split(' … ').map(baseName).join(' … ')));
  });
  const box = h('div', {});
  const table = h('table', {class: 'data', id: id},
    h('tr', {}, h('th', {class: 'num'}, '#'), h('th', {class: 'num'}, 'count'), h('th', {class: 'num'}, 'blocks'),
      h('th', {}, 'kind'), h('th', {}, 'function'), h('th', {}, 'from … to')), rows);
  box.appendChild(table);
  if (list.length > hotShown[id]) {
    box.appendChild(h('p', {}, h('button', {onclick: () => { hotShown[id] = list.length; box.replaceWith(hotTable(list, id)); }},
      'show all ' + list.length)));
  }
  return box;
}

function renderFunctions(box) {
  const st = ovState;
  const q = st.filter.toLowerCase();
  let rows = [];
  for (let i = 0; i < OV.funcs.length; i++) {
    const f = OV.funcs[i];
    if (st.ran && f[F.paths] === 0) continue;
    if (q && !f[F.name].toLowerCase().includes(q) && String(f[F.index]) !== q) continue;
    rows.push(i);
  }
  const cmp = {
    exec: (a, b) => a - b,
    paths: (a, b) => rankPaths[a] - rankPaths[b],
    cov: (a, b) => (OV.funcs[b][F.cov] - OV.funcs[a][F.cov]) || (a - b),
    possible: (a, b) => { const x = big(OV.funcs[a][F.possible]), y = big(OV.funcs[b][F.possible]); return x < y ? 1 : x > y ? -1 : a - b; },
    blocks: (a, b) => (OV.funcs[b][F.blocks] - OV.funcs[a][F.blocks]) || (a - b),
    name: (a, b) => OV.funcs[a][F.name].localeCompare(OV.funcs[b][F.name]) || (a - b),
    index: (a, b) => OV.funcs[a][F.index] - OV.funcs[b][F.index],
  }[st.sort];
  rows.sort(cmp);
  const pages = Math.max(1, Math.ceil(rows.length / st.per));
  st.page = Math.min(st.page, pages - 1);
  const shown = rows.slice(st.page * st.per, (st.page + 1) * st.per);

  const filter = h('input', {type: 'search', placeholder: 'filter by name or index', value: st.filter, id: 'filter'});
  filter.addEventListener('input', () => { st.filter = filter.value; st.page = 0; renderFunctions(box); document.getElementById('filter').focus(); });
  const ran = h('input', {type: 'checkbox', id: 'ranonly', checked: st.ran});
  ran.addEventListener('change', () => { st.ran = ran.checked; st.page = 0; renderFunctions(box); });
  const pager = h('span', {class: 'pager'},
    h('button', {disabled: st.page === 0, onclick: () => { st.page--; renderFunctions(box); }}, '‹ prev'),
    h('span', {id: 'pageinfo'}, 'page ' + (st.page + 1) + ' of ' + pages + ' (' + fmt(rows.length) + ' functions)'),
    h('button', {disabled: st.page >= pages - 1, onclick: () => { st.page++; renderFunctions(box); }}, 'next ›'));
  const th = (key, label, cls) => h('th', {class: (cls || '') + ' sortable' + (st.sort === key ? ' sorted' : ''),
    title: 'sort', onclick: () => { st.sort = key; st.page = 0; renderFunctions(box); }}, label);
  const table = h('table', {class: 'data', id: 'functable'},
    h('tr', {}, th('exec', 'rank by executions', 'num'), th('paths', 'rank by paths', 'num'), th('name', 'function'),
      th('index', 'index', 'num'), th('exec', 'path executions', 'num'), h('th', {class: 'num'}, 'calls'),
      th('paths', 'paths run', 'num'), th('possible', 'possible', 'num'), th('cov', 'coverage'), th('blocks', 'blocks', 'num')),
    shown.map(i => {
      const f = OV.funcs[i];
      const skipped = f[F.status] !== 'profiled';
      return h('tr', {class: 'click', dataset: {f: f[F.index]}, onclick: () => { location.hash = funcLink(i); }},
        h('td', {class: 'num'}, rankExec[i]), h('td', {class: 'num'}, rankPaths[i]),
        h('td', {}, h('a', {href: funcLink(i), class: 'fname', title: f[F.name]}, f[F.name]),
          skipped ? h('span', {class: 'muted'}, ' (' + f[F.status] + ')') : null),
        h('td', {class: 'num'}, f[F.index]), h('td', {class: 'num'}, fmt(f[F.exec])), h('td', {class: 'num'}, fmt(f[F.calls])),
        h('td', {class: 'num'}, fmt(f[F.paths])), h('td', {class: 'num', title: f[F.possible]}, shortNum(f[F.possible])),
        h('td', {}, f[F.cov] < 0 ? '–' : covBar(f[F.cov])), h('td', {class: 'num'}, f[F.blocks] || ''));
    }));
  const t = OV.totals;
  box.replaceChildren(
    h('div', {class: 'controls'}, filter, h('label', {}, ran, ' only functions that ran'), pager),
    table,
    h('p', {class: 'muted'}, 'Total: ' + fmt(t.paths) + ' of ' + shortNum(t.possible_paths) + ' possible acyclic paths ran (' +
      pct(t.coverage) + '), ' + fmt(t.executions) + ' path executions in ' + fmt(t.executed) + ' of ' + fmt(t.profiled) + ' profiled functions.'));
}

// ---------- function view ----------

let cur = null; // {row, d, lay, sel}

function showFunction(row, pathID) {
  if (cur && cur.row === row) { select(pathID); return; }
  const f = OV.funcs[row];
  const d = detail(row) || {p: []};
  cur = {row, f, d, sel: null, pathsShown: 300, nodeFilter: -1};
  const m = h('main', {id: 'function', dataset: {f: f[F.index]}});
  m.appendChild(h('h2', {}, h('span', {class: 'mono', id: 'fname'}, f[F.name]), h('span', {class: 'muted'}, '  function ' + f[F.index])));
  if (f[F.status] !== 'profiled') m.appendChild(h('div', {class: 'banner note'}, 'Not profiled: ' + f[F.status]));
  if (d.err) m.appendChild(h('div', {class: 'banner note'}, d.err));
  if (d.unmatched) m.appendChild(h('div', {class: 'banner bad'}, d.unmatched + ' path blocks are not block starts of this function\'s graph: the module differs from the one profiled.'));
  const back = d.e ? d.e.filter(e => e[3]).length : 0;
  m.appendChild(h('div', {class: 'cards'},
    card(fmt(f[F.exec]), 'path executions'), card(fmt(f[F.calls]), 'calls'),
    card(fmt(f[F.paths]) + ' / ' + shortNum(f[F.possible]), 'paths run / possible'),
    card(f[F.cov] < 0 ? '–' : pct(f[F.cov]), 'path coverage'),
    d.b ? card(fmt(d.b.length - 2) + ' / ' + fmt(d.e.length - 1), 'blocks / edges') : null,
    d.b ? card(fmt(back), 'back edges') : null));
  m.appendChild(h('div', {id: 'sel', class: 'sel'}));
  const graphCol = h('div', {});
  if (d.b) {
    graphCol.append(h('h3', {}, 'Control-flow graph'), legend(), h('div', {class: 'graphbox', id: 'graph'}));
  } else {
    graphCol.append(h('p', {class: 'muted'}, d.err ? 'No control-flow graph.' : 'No control-flow graph: the report was written without the module.'));
  }
  const pathCol = h('div', {}, h('h3', {}, 'Paths (' + fmt(d.p.length) + ' ran)'), h('div', {class: 'pathbox', id: 'paths'}),
    h('div', {id: 'code'}));
  m.appendChild(h('div', {class: 'fview'}, graphCol, pathCol));
  app.replaceChildren(header(h('a', {href: '#'}, '← overview')), m);
  document.title = f[F.name] + ' — ' + OV.title;
  if (d.b) {
    const t0 = performance.now();
    cur.lay = layout(d);
    cur.svg = drawGraph(d, cur.lay);
    document.getElementById('graph').appendChild(cur.svg);
    cur.layoutMs = performance.now() - t0;
  }
  renderPaths();
  cur.codeTab = null;
  select(pathID);
  renderCode();
}

function legend() {
  const sw = (st) => s('svg', {width: 34, height: 10}, s('line', Object.assign({x1: 2, y1: 5, x2: 32, y2: 5}, st)));
  return h('div', {class: 'legend'},
    h('span', {}, sw({stroke: '#cdd5de', 'stroke-width': 1.2}), ' not crossed'),
    h('span', {}, sw({stroke: shade(0.35), 'stroke-width': width(0.35)}), sw({stroke: shade(1), 'stroke-width': width(1)}), ' crossed by more path executions'),
    h('span', {}, sw({stroke: '#a23b3b', 'stroke-width': 1.6, 'stroke-dasharray': '6 4'}), ' back edge'),
    h('span', {}, sw({stroke: '#e8590c', 'stroke-width': 3.2}), ' selected path'),
    h('span', {}, 'click a block to list the paths through it'));
}

function pathKind(p) { return OV.kinds[p[2]]; }

function renderPaths() {
  const d = cur.d, box = document.getElementById('paths');
  let list = d.p.map((p, i) => i);
  if (cur.nodeFilter >= 0) list = list.filter(i => d.p[i][3].includes(cur.nodeFilter));
  const total = Number(cur.f[F.exec]) || 1;
  const shown = list.slice(0, cur.pathsShown);
  const table = h('table', {class: 'data', id: 'pathtable'},
    h('tr', {}, h('th', {class: 'num'}, '#'), h('th', {class: 'num'}, 'path'), h('th', {class: 'num'}, 'count'),
      h('th', {class: 'num'}, 'share'), h('th', {}, 'kind'), h('th', {class: 'num'}, 'blocks'), h('th', {}, 'through')),
    shown.map(i => {
      const p = d.p[i];
      return h('tr', {class: 'click' + (cur.sel === i ? ' sel' : ''), dataset: {p: p[0]},
        onclick: () => { location.hash = funcLink(cur.row, p[0]); }},
        h('td', {class: 'num'}, i + 1), h('td', {class: 'num'}, p[0]), h('td', {class: 'num'}, fmt(p[1])),
        h('td', {class: 'num'}, (100 * Number(p[1]) / total).toFixed(1) + '%'), h('td', {}, pathKind(p)),
        h('td', {class: 'num'}, p[3].length), h('td', {class: 'mono muted'}, blockSummary(p[3], 6)));
    }));
  const kids = [];
  if (cur.nodeFilter >= 0) {
    kids.push(h('div', {class: 'controls'}, 'Paths through ' + nodeName(cur.nodeFilter) + ': ' + list.length,
      h('button', {onclick: () => { cur.nodeFilter = -1; renderPaths(); markNodeFilter(); }}, 'show all')));
  }
  kids.push(list.length ? table : h('p', {class: 'muted', style: 'padding:8px'}, 'No path ran.'));
  if (list.length > shown.length) {
    kids.push(h('p', {style: 'padding:0 8px'}, h('button', {onclick: () => { cur.pathsShown = Infinity; renderPaths(); }},
      'show all ' + fmt(list.length) + ' paths')));
  }
  box.replaceChildren(...kids);
}

function nodeName(n) {
  if (n === 0) return 'entry';
  if (n === 1) return 'exit';
  return cur.d.b ? 'B' + n : hex(n);
}

// nodeAt names a block as a person looks for it: its first source line,
// else its offset in the function.
function nodeAt(n) {
  const d = cur.d;
  if (!d.b) return hex(n);
  if (n < 2) return nodeName(n);
  if (d.l && d.l[n] && d.l[n].length) return baseName(OV.files[d.l[n][0]].name) + ':' + d.l[n][1];
  return '+' + hex(d.b[n][0]);
}
function baseName(p) { return p.replace(/^.*\//, ''); }

function blockSummary(nodes, max) {
  const parts = nodes.slice(0, max).map(n => n < 0 ? '?' : nodeName(n));
  if (nodes.length > max) parts.push('… ' + nodeName(nodes[nodes.length - 1]));
  return parts.join(' ');
}

function select(pathID) {
  const d = cur.d;
  let sel = null;
  if (pathID !== null && pathID !== undefined) {
    const i = d.p.findIndex(p => String(p[0]) === String(pathID));
    if (i >= 0) sel = i;
  }
  if (sel === null && d.p.length && (pathID === null || pathID === undefined)) sel = 0;
  cur.sel = sel;
  for (const tr of document.querySelectorAll('#pathtable tr[data-p]')) {
    tr.classList.toggle('sel', sel !== null && tr.dataset.p === String(d.p[sel][0]));
  }
  const box = document.getElementById('sel');
  if (sel === null) {
    box.replaceChildren(pathID ? 'No path ' + pathID + ' ran in this function.' : 'No path ran in this function.');
    box.dataset.p = '';
  } else {
    const p = d.p[sel];
    box.dataset.p = p[0];
    box.replaceChildren(
      h('b', {}, 'Path ' + p[0]), ': ran ' + fmt(p[1]) + ' times, ' + pathKind(p) + ', ' + p[3].length + ' blocks',
      h('div', {class: 'blocks', id: 'selblocks'}, p[3].map((n, i) => (i ? ' → ' : '') + nodeName(n) + (d.b ? ' (' + nodeAt(n) + ')' : ''))));
  }
  if (cur.svg) highlight(sel === null ? null : d.p[sel]);
  if (cur.codeRows) markCode();
}

// ---------- graph layout ----------

// layout places the graph in layers: longest-path layering of the graph
// without its back edges (which the profile's DFS found, so the rest is
// acyclic), dummy nodes where an edge spans layers, orders within layers
// by barycentre sweeps keeping the order with the fewest crossings, and
// x positions as close to the neighbours' as the spacing allows.
const NW = 118, NH = 38, VGAP = 46, HGAP = 22, DGAP = 12;

function layout(d) {
  const n = d.b.length;
  const fwd = [], backs = [];
  d.e.forEach((e, i) => { (e[3] || e[0] === e[1] ? backs : fwd).push(i); });
  const isBack = new Set(backs);
  const out = Array.from({length: n}, () => []), indeg = new Int32Array(n);
  for (const i of fwd) { out[d.e[i][0]].push(i); indeg[d.e[i][1]]++; }
  // Topological order from the entry (Kahn); anything left over (not
  // possible for a DFS's forward edges) keeps layer 0.
  const layer = new Int32Array(n);
  const q = [];
  for (let v = 0; v < n; v++) if (indeg[v] === 0) q.push(v);
  const topo = [];
  while (q.length) {
    const v = q.pop();
    topo.push(v);
    for (const i of out[v]) {
      const w = d.e[i][1];
      layer[w] = Math.max(layer[w], layer[v] + 1);
      if (--indeg[w] === 0) q.push(w);
    }
  }
  // The exit has no place of its own in a graph where nothing returns;
  // put it last so that it is found at the bottom.
  let maxL = 0;
  for (let v = 0; v < n; v++) if (v !== 1) maxL = Math.max(maxL, layer[v]);
  if (layer[1] <= 0 || d.e.every(e => e[1] !== 1)) layer[1] = maxL + 1;
  maxL = Math.max(maxL, layer[1]);

  // Nodes: real 0..n-1, dummies after.
  const nodeLayer = Array.from(layer);
  const isDummy = new Array(n).fill(false);
  const up = Array.from({length: n}, () => []), down = Array.from({length: n}, () => []);
  const chains = new Map(); // edge index -> node chain
  let dummies = 0;
  // A back edge gets dummies too, running down from its target to its
  // source, so that the ordering finds it a way between the nodes; it is
  // drawn from the source's right side up to the target's.
  for (const i of fwd.concat(backs)) {
    const back = isBack.has(i);
    let [a, b] = d.e[i];
    if (back) [a, b] = [b, a];
    let span = layer[b] - layer[a];
    if (span < 0) { chains.set(i, [a, b]); continue; }
    const chain = [a];
    // Very long spans in very large graphs would add more dummies than
    // the ordering can afford; those edges are drawn straight.
    if (span > 1 && dummies + span < 60000) {
      for (let l = layer[a] + 1; l < layer[b]; l++) {
        const v = nodeLayer.length;
        nodeLayer.push(l); isDummy.push(true); up.push([]); down.push([]);
        chain.push(v);
        dummies++;
      }
    }
    chain.push(b);
    if (a !== b) for (let k = 1; k < chain.length; k++) { down[chain[k - 1]].push(chain[k]); up[chain[k]].push(chain[k - 1]); }
    chains.set(i, chain);
  }
  const N = nodeLayer.length;
  const layers = Array.from({length: maxL + 1}, () => []);
  // Initial order: depth-first from the entry, so that a branch's blocks
  // start out together.
  const seen = new Uint8Array(N);
  const stack = [0];
  const order0 = [];
  while (stack.length) {
    const v = stack.pop();
    if (seen[v]) continue;
    seen[v] = 1;
    order0.push(v);
    for (let k = down[v].length - 1; k >= 0; k--) if (!seen[down[v][k]]) stack.push(down[v][k]);
  }
  for (let v = 0; v < N; v++) if (!seen[v]) order0.push(v);
  for (const v of order0) layers[nodeLayer[v]].push(v);
  const pos = new Float64Array(N);
  const setPos = () => { for (const L of layers) L.forEach((v, i) => { pos[v] = i; }); };
  setPos();

  // Crossings between two layers are the inversions of the lower ends
  // when the edges are sorted by their upper ends.
  const crossings = () => {
    let c = 0;
    for (let l = 0; l + 1 < layers.length; l++) {
      const W = layers[l + 1].length + 1;
      let m = 0;
      for (const v of layers[l]) m += down[v].length;
      const keys = new Float64Array(m);
      let k = 0;
      for (const v of layers[l]) for (const w of down[v]) if (nodeLayer[w] === l + 1) keys[k++] = pos[v] * W + pos[w];
      const ks = keys.subarray(0, k).sort();
      const lower = new Int32Array(k);
      for (let i = 0; i < k; i++) lower[i] = ks[i] % W;
      c += inversions(lower, new Int32Array(k));
    }
    return c;
  };
  const budget = N * 8 < 400000 ? 8 : N < 200000 ? 2 : 0;
  let best = layers.map(L => L.slice()), bestC = budget ? crossings() : 0;
  const key = new Float64Array(N);
  for (let it = 0; it < budget && bestC > 0; it++) {
    const sweep = (from, to, step, nbr) => {
      for (let l = from; l !== to; l += step) {
        const L = layers[l];
        for (const v of L) {
          const ns = nbr[v];
          if (!ns.length) { key[v] = pos[v]; continue; }
          let sum = 0;
          for (const w of ns) sum += pos[w];
          key[v] = sum / ns.length;
        }
        L.sort((a, b) => key[a] - key[b] || pos[a] - pos[b]);
        L.forEach((v, i) => { pos[v] = i; });
      }
    };
    if (it % 2 === 0) sweep(1, layers.length, 1, up);
    else sweep(layers.length - 2, -1, -1, down);
    const c = crossings();
    if (c < bestC) { bestC = c; best = layers.map(L => L.slice()); }
  }
  for (let l = 0; l < layers.length; l++) layers[l] = best[l];
  setPos();

  // x: each node wants the mean x of its neighbours; within a layer the
  // order and spacing are kept, which is an isotonic regression solved by
  // pooling adjacent violators.
  const w = v => isDummy[v] ? 0 : NW;
  const gap = (a, b) => (w(a) + w(b)) / 2 + (isDummy[a] || isDummy[b] ? DGAP : HGAP);
  const x = new Float64Array(N);
  for (const L of layers) { let cx = 0; L.forEach((v, i) => { if (i) cx += gap(L[i - 1], v); x[v] = cx; }); }
  const place = (L, want) => {
    const off = new Float64Array(L.length);
    for (let i = 1; i < L.length; i++) off[i] = off[i - 1] + gap(L[i - 1], L[i]);
    const blocks = []; // [sum, count]
    for (let i = 0; i < L.length; i++) {
      let b = [want[i] - off[i], 1, i, i];
      while (blocks.length && blocks[blocks.length - 1][0] / blocks[blocks.length - 1][1] > b[0] / b[1]) {
        const p = blocks.pop();
        b = [p[0] + b[0], p[1] + b[1], p[2], b[3]];
      }
      blocks.push(b);
    }
    for (const b of blocks) for (let i = b[2]; i <= b[3]; i++) x[L[i]] = b[0] / b[1] + off[i];
  };
  const mean = (v, nbrs) => { if (!nbrs.length) return x[v]; let s0 = 0; for (const u of nbrs) s0 += x[u]; return s0 / nbrs.length; };
  if (N < 300000) {
    for (let it = 0; it < 6; it++) {
      if (it % 2 === 0) for (let l = 1; l < layers.length; l++) place(layers[l], layers[l].map(v => mean(v, up[v])));
      else for (let l = layers.length - 2; l >= 0; l--) place(layers[l], layers[l].map(v => mean(v, down[v])));
    }
    for (let l = 0; l < layers.length; l++) place(layers[l], layers[l].map(v => mean(v, up[v].concat(down[v]))));
  }
  let minX = Infinity, maxX = -Infinity;
  for (let v = 0; v < N; v++) { minX = Math.min(minX, x[v] - w(v) / 2); maxX = Math.max(maxX, x[v] + w(v) / 2); }
  const M = 20;
  for (let v = 0; v < N; v++) x[v] += M - minX;
  const y = new Float64Array(N);
  for (let v = 0; v < N; v++) y[v] = M + nodeLayer[v] * (NH + VGAP) + NH / 2;

  // Back edges leave their source's right side and enter their target's,
  // running through their dummies between; the width makes room for the
  // bulge of those whose ends are on adjacent layers.
  const backRoutes = new Map();
  let width = maxX - minX + 2 * M;
  for (const i of backs) {
    const [u, t] = d.e[i];
    const chain = chains.get(i); // target first
    const pts = [[x[u] + NW / 2, y[u] + (u === t ? 8 : 0)]];
    for (let k = chain.length - 2; k >= 1; k--) pts.push([x[chain[k]], y[chain[k]]]);
    pts.push([x[t] + NW / 2, y[t] - (u === t ? 8 : 0)]);
    backRoutes.set(i, pts);
    width = Math.max(width, x[u] + NW / 2 + 50, x[t] + NW / 2 + 50);
  }
  const height = M * 2 + (maxL + 1) * (NH + VGAP) - VGAP;
  return {x, y, chains, backRoutes, isBack, width, height, crossings: bestC, dummies};
}

// inversions counts the pairs out of order in a, sorting it (bottom-up
// merge sort through tmp, which allocates nothing per merge).
function inversions(a, tmp) {
  let c = 0;
  const n = a.length;
  for (let w = 1; w < n; w *= 2) {
    for (let lo = 0; lo < n - w; lo += 2 * w) {
      const mid = lo + w, hi = Math.min(lo + 2 * w, n);
      let i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (a[i] <= a[j]) tmp[k++] = a[i++];
        else { tmp[k++] = a[j++]; c += mid - i; }
      }
      while (i < mid) tmp[k++] = a[i++];
      while (j < hi) tmp[k++] = a[j++];
      for (k = lo; k < hi; k++) a[k] = tmp[k];
    }
  }
  return c;
}

// ---------- graph drawing ----------

function shade(t) {
  // light grey-blue to deep blue
  const a = [176, 196, 222], b = [16, 52, 128];
  return 'rgb(' + a.map((c, i) => Math.round(c + (b[i] - c) * t)).join(',') + ')';
}
function width(t) { return (1.3 + 3.7 * t).toFixed(2); }

function edgePoints(lay, d, i) {
  if (lay.backRoutes.has(i)) return lay.backRoutes.get(i);
  const chain = lay.chains.get(i);
  const pts = [];
  const [a, b] = d.e[i];
  const {x, y} = lay;
  // Ports spread an edge's end over the node's bottom or top side in the
  // order of the nodes at the other end, which keeps them from crossing.
  pts.push([x[a] + port(lay, d, a, i, 'out'), y[a] + NH / 2]);
  for (let k = 1; k < chain.length - 1; k++) pts.push([x[chain[k]], y[chain[k]]]);
  pts.push([x[b] + port(lay, d, b, i, 'in'), y[b] - NH / 2]);
  return pts;
}

function port(lay, d, v, i, dir) {
  if (!lay.ports) lay.ports = new Map();
  const key = dir + v;
  let m = lay.ports.get(key);
  if (!m) {
    const es = [];
    d.e.forEach((e, j) => { if (!lay.isBack.has(j) && (dir === 'out' ? e[0] : e[1]) === v) es.push(j); });
    const other = j => { const c = lay.chains.get(j); return lay.x[dir === 'out' ? c[1] : c[c.length - 2]]; };
    es.sort((p, q) => other(p) - other(q));
    m = new Map();
    const span = Math.min(NW - 16, 14 * (es.length - 1));
    es.forEach((j, k) => m.set(j, es.length === 1 ? 0 : -span / 2 + span * k / (es.length - 1)));
    lay.ports.set(key, m);
  }
  return m.get(i) || 0;
}

function pathD(pts, back) {
  const f = v => v.toFixed(1);
  let str = 'M' + f(pts[0][0]) + ',' + f(pts[0][1]);
  if (back) {
    // Out of the source's right side, up through the dummies, into the
    // target's right side; with no dummies, a bulge to the right.
    const n = pts.length - 1;
    if (n === 1) {
      const bx = Math.max(pts[0][0], pts[1][0]) + 38;
      return str + ' C' + f(bx) + ',' + f(pts[0][1]) + ' ' + f(bx) + ',' + f(pts[1][1]) + ' ' + f(pts[1][0]) + ',' + f(pts[1][1]);
    }
    str += ' C' + f(pts[0][0] + 30) + ',' + f(pts[0][1]) + ' ' + f(pts[1][0]) + ',' + f(pts[1][1] + 30) + ' ' + f(pts[1][0]) + ',' + f(pts[1][1]);
    for (let k = 2; k < n; k++) {
      const [x0, y0] = pts[k - 1], [x1, y1] = pts[k];
      const dy = (y1 - y0) / 2;
      str += ' C' + f(x0) + ',' + f(y0 + dy) + ' ' + f(x1) + ',' + f(y1 - dy) + ' ' + f(x1) + ',' + f(y1);
    }
    const [x0, y0] = pts[n - 1], [x1, y1] = pts[n];
    return str + ' C' + f(x0) + ',' + f(y0 - 30) + ' ' + f(x1 + 30) + ',' + f(y1) + ' ' + f(x1) + ',' + f(y1);
  }
  for (let k = 1; k < pts.length; k++) {
    const [x0, y0] = pts[k - 1], [x1, y1] = pts[k];
    const dy = (y1 - y0) / 2;
    str += ' C' + f(x0) + ',' + f(y0 + dy) + ' ' + f(x1) + ',' + f(y1 - dy) + ' ' + f(x1) + ',' + f(y1);
  }
  return str;
}

function drawGraph(d, lay) {
  const svg = s('svg', {class: 'cfg', id: 'cfg', width: Math.ceil(lay.width), height: Math.ceil(lay.height),
    viewBox: '0 0 ' + Math.ceil(lay.width) + ' ' + Math.ceil(lay.height), 'data-crossings': lay.crossings});
  const levels = 6;
  const defs = s('defs', {});
  const marker = (id, color) => defs.appendChild(s('marker', {id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
    orient: 'auto-start-reverse', markerUnits: 'userSpaceOnUse'}, s('path', {d: 'M0,1 L10,5 L0,9 z', fill: color})));
  marker('m-zero', '#cdd5de');
  for (let k = 0; k < levels; k++) marker('m-' + k, shade((k + 1) / levels));
  marker('m-back0', '#d9b3b3');
  marker('m-back', '#a23b3b');
  marker('m-hi', '#e8590c');
  svg.appendChild(defs);

  let maxC = 0;
  for (const e of d.e) maxC = Math.max(maxC, Number(e[4]));
  const gE = s('g', {class: 'edges'});
  const order = d.e.map((e, i) => i).sort((a, b) => Number(d.e[a][4]) - Number(d.e[b][4]));
  for (const i of order) {
    const e = d.e[i];
    const c = Number(e[4]);
    const back = lay.backRoutes.has(i);
    const t = c > 0 && maxC > 0 ? Math.log1p(c) / Math.log1p(maxC) : 0;
    const lvl = Math.min(levels - 1, Math.floor(t * levels));
    let stroke, mk, sw;
    if (back) { stroke = c > 0 ? '#a23b3b' : '#d9b3b3'; mk = c > 0 ? 'm-back' : 'm-back0'; sw = c > 0 ? width(t) : 1.2; }
    else if (c > 0) { stroke = shade((lvl + 1) / levels); mk = 'm-' + lvl; sw = width((lvl + 1) / levels); }
    else { stroke = '#cdd5de'; mk = 'm-zero'; sw = 1.2; }
    const kind = (d.ek && d.ek[i]) || OV.edge_kinds[e[2]];
    gE.appendChild(s('path', {class: 'edge' + (back ? ' back' : ''), d: pathD(edgePoints(lay, d, i), back), stroke,
      'stroke-width': sw, 'marker-end': 'url(#' + mk + ')', 'data-e': i, 'data-count': String(e[4])},
      s('title', {}, nodeName(e[0]) + ' → ' + nodeName(e[1]) + ' (' + kind + (back ? ', back edge' : '') + '): crossed by ' + fmt(e[4]) + ' path executions')));
  }
  svg.appendChild(gE);
  svg.appendChild(s('g', {class: 'hilite', id: 'hilite'}));

  const gN = s('g', {class: 'nodes'});
  for (let v = 0; v < d.b.length; v++) {
    const cx = lay.x[v], cy = lay.y[v];
    const g = s('g', {class: 'node' + (Number(d.b[v][3]) > 0 ? ' ran' : '') + ((d.cuts || []).includes(v) ? ' cut' : ''),
      'data-n': v, transform: 'translate(' + (cx - NW / 2).toFixed(1) + ',' + (cy - NH / 2).toFixed(1) + ')'});
    if (v < 2) {
      g.appendChild(s('ellipse', {cx: NW / 2, cy: NH / 2, rx: NW / 2 - 14, ry: NH / 2 - 4}));
      g.appendChild(s('text', {x: NW / 2, y: NH / 2 + 4, 'text-anchor': 'middle'}, v === 0 ? 'entry' : 'exit'));
    } else {
      g.appendChild(s('rect', {width: NW, height: NH, rx: 4}));
      g.appendChild(s('text', {x: 6, y: 15}, 'B' + v + '  ×' + shortNum(d.b[v][3])));
      g.appendChild(s('text', {x: 6, y: 30, fill: '#5f6b7a'}, clip(nodeAt(v), 17)));
      g.appendChild(s('title', {}, 'B' + v + ' at ' + hex(d.off + Number(d.b[v][0])) + ' (' + nodeAt(v) + '), ' +
        d.b[v][2] + ' instructions, entered ' + fmt(d.b[v][3]) + ' times by counted paths'));
    }
    g.addEventListener('click', () => {
      cur.nodeFilter = cur.nodeFilter === v ? -1 : v;
      cur.pathsShown = 300;
      renderPaths();
      markNodeFilter();
      select(cur.sel === null ? null : cur.d.p[cur.sel][0]);
    });
    gN.appendChild(g);
  }
  svg.appendChild(gN);
  svg.appendChild(s('g', {class: 'steps', id: 'steps'}));
  return svg;
}
function clip(str, n) { return str.length > n ? '…' + str.slice(str.length - n + 1) : str; }

function markNodeFilter() {
  for (const g of document.querySelectorAll('#cfg .node')) {
    g.querySelector('rect, ellipse').style.strokeDasharray = Number(g.dataset.n) === cur.nodeFilter ? '3 2' : '';
  }
}

function highlight(p) {
  const d = cur.d, lay = cur.lay;
  const hi = document.getElementById('hilite'), steps = document.getElementById('steps');
  hi.replaceChildren(); steps.replaceChildren();
  for (const g of document.querySelectorAll('#cfg .node.on')) g.classList.remove('on');
  if (!p) return;
  const nodes = p[3];
  const kind = pathKind(p);
  const edgeIdx = new Map();
  d.e.forEach((e, i) => edgeIdx.set(e[0] + ',' + e[1], i));
  const hops = [];
  if (kind.startsWith('entry-')) hops.push([0, nodes[0]]);
  for (let k = 1; k < nodes.length; k++) hops.push([nodes[k - 1], nodes[k]]);
  if (kind.endsWith('-exit')) hops.push([nodes[nodes.length - 1], 1]);
  else {
    // The back edge the path ends at, when the block has only one.
    const last = nodes[nodes.length - 1];
    const outs = d.e.map((e, i) => i).filter(i => d.e[i][0] === last && (lay.backRoutes.has(i) || (d.cuts || []).includes(d.e[i][1])));
    if (outs.length === 1) hops.push([last, d.e[outs[0]][1]]);
  }
  for (const [a, b] of hops) {
    const i = edgeIdx.get(a + ',' + b);
    if (i === undefined) continue;
    const back = lay.backRoutes.has(i);
    hi.appendChild(s('path', {class: 'hiedge' + (back ? ' back' : ''), d: pathD(edgePoints(lay, d, i), back), 'marker-end': 'url(#m-hi)', 'data-e': i}));
  }
  const onPath = new Set(nodes);
  if (kind.startsWith('entry-')) onPath.add(0);
  if (kind.endsWith('-exit')) onPath.add(1);
  for (const g of document.querySelectorAll('#cfg .node')) if (onPath.has(Number(g.dataset.n))) g.classList.add('on');
  nodes.forEach((n, k) => {
    if (n < 0) return;
    const cx = lay.x[n] - NW / 2, cy = lay.y[n] - NH / 2;
    steps.appendChild(s('g', {class: 'step', transform: 'translate(' + cx.toFixed(1) + ',' + cy.toFixed(1) + ')'},
      s('circle', {cx: 0, cy: 0, r: 8}), s('text', {x: 0, y: 3.5}, k + 1)));
  });
  // Bring the path's first block into view.
  const box = document.getElementById('graph');
  const n0 = nodes[0] >= 0 ? nodes[0] : 0;
  const tx = lay.x[n0] - box.clientWidth / 2, ty = lay.y[n0] - 60;
  if (lay.y[n0] < box.scrollTop || lay.y[n0] > box.scrollTop + box.clientHeight - 40 ||
      lay.x[n0] < box.scrollLeft || lay.x[n0] > box.scrollLeft + box.clientWidth - 40) {
    box.scrollTo({left: Math.max(0, tx), top: Math.max(0, ty)});
  }
}

// ---------- source and instructions ----------

function hasSource(d) {
  if (!d.l) return false;
  for (const ls of d.l) for (let k = 0; k < ls.length; k += 2) if (OV.files[ls[k]].path) return true;
  return false;
}

// The code view is built once per function and tab, as HTML text (a
// function can have thousands of instructions); selecting a path only
// re-marks the rows of its blocks.
// Fixed column widths spare the browser measuring every row of a long
// listing.
const COLS = '<colgroup><col style="width:5.5em"><col style="width:6.5em"><col style="width:4em"><col></colgroup>';
function esc(str) { return String(str).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]); }

function renderCode() {
  const d = cur.d, box = document.getElementById('code');
  if (!d.b) { box.replaceChildren(); return; }
  const tabs = [];
  if (d.l && d.l.some(ls => ls.length)) tabs.push('source');
  tabs.push('instructions');
  if (!cur.codeTab) cur.codeTab = hasSource(d) ? 'source' : 'instructions';
  const bar = h('div', {class: 'tabs'}, tabs.map(t => h('button', {class: t === cur.codeTab ? 'on' : '', 'data-tab': t,
    onclick: () => { cur.codeTab = t; renderCode(); }}, t === 'source' ? 'Source' : 'Instructions')),
  h('span', {class: 'muted'}, cur.codeTab === 'source'
    ? 'margin: times the line\'s most-entered block was entered; steps of the selected path'
    : 'blocks with the times counted paths entered them; steps of the selected path'));
  const view = cur.codeTab === 'source' ? sourceView(d) : instrView(d);
  box.replaceChildren(bar, view);
  // Rows by what marks them: "n<node>" for instruction rows, "l<file>:<line>"
  // for source lines.
  cur.codeRows = new Map();
  for (const tr of view.querySelectorAll('tr[data-k]')) {
    const k = tr.dataset.k;
    if (!cur.codeRows.has(k)) cur.codeRows.set(k, []);
    cur.codeRows.get(k).push(tr);
  }
  cur.marked = [];
  markCode();
}

function markCode() {
  const d = cur.d;
  if (!cur.codeRows) return;
  for (const tr of cur.marked) { tr.classList.remove('on'); const st = tr.querySelector('td.st'); if (st) st.textContent = ''; }
  cur.marked = [];
  const p = cur.sel === null ? null : d.p[cur.sel];
  if (!p) return;
  const steps = new Map();
  const add = (k, i) => { if (!steps.has(k)) steps.set(k, []); const a = steps.get(k); if (!a.includes(i)) a.push(i); };
  p[3].forEach((v, i) => {
    if (v < 0) return;
    if (cur.codeTab === 'source') {
      const ls = d.l[v];
      for (let k = 0; k < ls.length; k += 2) add('l' + ls[k] + ':' + ls[k + 1], i + 1);
    } else add('n' + v, i + 1);
  });
  // Classes first, one layout read last: reading a row's position between
  // class changes would lay out the whole listing again each time.
  let first = null;
  for (const [k, st] of steps) {
    for (const tr of cur.codeRows.get(k) || []) {
      tr.classList.add('on');
      cur.marked.push(tr);
      const td = tr.querySelector('td.st');
      if (td && (cur.codeTab === 'source' || tr.classList.contains('blk'))) td.textContent = stepList(st);
      if (!first || tr.rowIndex < first.rowIndex && tr.parentNode === first.parentNode) first = tr;
    }
  }
  const sb = document.querySelector('#code .srcbox');
  if (first && sb) sb.scrollTop = Math.max(0, first.offsetTop - 80);
}

function sourceView(d) {
  // Per file and line: the most times one of its blocks was entered.
  const files = new Map(); // file -> Map(line -> entries)
  const order = [];
  for (let v = 2; v < d.l.length; v++) {
    const ls = d.l[v];
    for (let k = 0; k < ls.length; k += 2) {
      if (!files.has(ls[k])) { files.set(ls[k], new Map()); order.push(ls[k]); }
      const m = files.get(ls[k]);
      m.set(ls[k + 1], Math.max(m.get(ls[k + 1]) || 0, Number(d.b[v][3])));
    }
  }
  const out = h('div', {class: 'srcbox', id: 'source'});
  for (const fi of order) {
    const file = OV.files[fi], lines = files.get(fi);
    let lo = Infinity, hi = 0;
    for (const l of lines.keys()) { lo = Math.min(lo, l); hi = Math.max(hi, l); }
    out.appendChild(h('div', {class: 'filehead'}, file.name, file.path && file.path !== file.name ? h('span', {class: 'muted'}, '  (' + file.path + ')') : null));
    if (!file.path) {
      out.appendChild(h('p', {class: 'muted', style: 'padding:4px 8px'}, 'Source file ' + file.missing + '; lines ' + lo + '–' + hi +
        ' of it are on this function\'s blocks. The Instructions tab shows the code.'));
      continue;
    }
    const text = new Map();
    for (const [first, seg] of file.segs) seg.forEach((t, k) => text.set(first + k, t));
    const rows = [];
    let prevGap = false;
    for (let l = Math.max(1, lo - 3); l <= hi + 3; l++) {
      if (!text.has(l)) {
        if (!prevGap && l <= hi) rows.push('<tr class="gap"><td colspan="4">⋯</td></tr>');
        prevGap = true;
        continue;
      }
      prevGap = false;
      const n = lines.get(l);
      const cls = n === undefined ? '' : n > 0 ? 'hit' : 'miss';
      rows.push('<tr class="' + cls + '" data-line="' + l + '"' + (n === undefined ? '' : ' data-k="l' + fi + ':' + l + '"') +
        '><td class="ln">' + l + '</td><td class="cnt">' + (n === undefined ? '' : fmt(n)) + '</td><td class="st"></td><td class="code">' +
        esc(text.get(l)) + '</td></tr>');
    }
    const table = h('table', {class: 'src', 'data-file': file.name});
    table.innerHTML = COLS + rows.join('');
    out.appendChild(table);
  }
  return out;
}
function stepList(st) { return st.length > 4 ? st.slice(0, 3).join(',') + ',…' : st.join(','); }

function instrView(d) {
  const out = h('div', {class: 'srcbox', id: 'instrs'});
  if (!d.i) {
    out.appendChild(h('p', {class: 'muted', style: 'padding:4px 8px'}, d.ni ? 'The instructions: ' + d.ni + '.' :
      'Instructions are embedded only for functions that ran. Blocks: ' +
      d.b.slice(2).map((b, k) => 'B' + (k + 2) + ' at ' + hex(d.off + Number(b[0]))).join(', ')));
    return out;
  }
  const startOf = new Map();
  for (let v = 2; v < d.b.length; v++) startOf.set(Number(d.b[v][0]), v);
  const texts = d.i.replace(/\n$/, '').split('\n');
  const limit = cur.allInstrs ? Infinity : 3000;
  const rows = [];
  let v = -1;
  let off = d.io[0];
  for (let k = 0; k < texts.length && k < limit; off += d.io[++k]) {
    if (startOf.has(off)) {
      v = startOf.get(off);
      rows.push('<tr class="blk" data-n="' + v + '" data-k="n' + v + '"><td class="ln"></td><td class="cnt">' + fmt(d.b[v][3]) +
        '</td><td class="st"></td><td class="code">B' + v + (d.l && d.l[v] && d.l[v].length ? '  ' + esc(nodeAt(v)) : '') + '</td></tr>');
    }
    const inBlock = v >= 0 && off < Number(d.b[v][1]);
    rows.push('<tr' + (inBlock ? ' data-k="n' + v + '"' : '') + '><td class="ln">' + hex(d.off + off) +
      '</td><td class="cnt"></td><td class="st"></td><td class="code">  ' + esc(texts[k]) + '</td></tr>');
  }
  const table = h('table', {class: 'src'});
  table.innerHTML = COLS + rows.join('');
  out.appendChild(table);
  if (texts.length > limit) {
    out.appendChild(h('p', {style: 'padding:4px 8px'}, h('button', {onclick: () => { cur.allInstrs = true; renderCode(); }},
      'show all ' + fmt(texts.length) + ' instructions')));
  }
  return out;
}

// ---------- routing ----------

function route() {
  const {f, p} = parseHash();
  const row = f === null ? undefined : rowOf.get(f);
  if (row === undefined) {
    cur = null;
    showOverview();
  } else {
    showFunction(row, p);
  }
  document.body.dataset.view = row === undefined ? 'overview' : 'function';
  document.body.dataset.ready = '1';
}
window.addEventListener('hashchange', route);
route();
