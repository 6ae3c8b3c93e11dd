// This file draws a function's view, less its graph and code: the
// heading, the table of its paths, and the selection of a path.

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
      h('th', {class: 'num'}, 'share'), h('th', {}, 'kind'), h('th', {class: 'num'}, 'blocks'),
      OV.inputs ? h('th', {class: 'num', title: 'how many runs executed the path'}, 'runs') : null, h('th', {}, 'through')),
    shown.map(i => {
      const p = d.p[i];
      return h('tr', {class: 'click' + (cur.sel === i ? ' sel' : ''), dataset: {p: p[0]},
        onclick: () => { location.hash = funcLink(cur.row, p[0]); }},
        h('td', {class: 'num'}, i + 1), h('td', {class: 'num'}, p[0]), h('td', {class: 'num'}, fmt(p[1])),
        h('td', {class: 'num'}, (100 * Number(p[1]) / total).toFixed(1) + '%'), h('td', {}, pathKind(p)),
        h('td', {class: 'num'}, p[3].length), OV.inputs ? h('td', {class: 'num'}, p[5] ? p[5].length / 2 : 0) : null,
        h('td', {class: 'mono muted label'}, p[4]));
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

// nodeAt names a block as a person looks for it: as the path labels do,
// else by its first source line, else by its offset in the function.
function nodeAt(n) {
  const d = cur.d;
  if (!d.b) return hex(n);
  if (n < 2) return nodeName(n);
  if (d.at && d.at[n]) return d.at[n];
  if (d.l && d.l[n] && d.l[n].length) return baseName(OV.files[d.l[n][0]].name) + ':' + d.l[n][1];
  return '+' + hex(d.b[n][0]);
}
function baseName(p) { return p.replace(/^.*\//, ''); }

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
      h('div', {class: 'blocks', id: 'selblocks'}, p[3].map((n, i) => (i ? ' → ' : '') + nodeName(n) + (d.b ? ' (' + nodeAt(n) + ')' : ''))),
      OV.inputs ? pathRuns(p[5] || []) : null);
  }
  if (cur.svg) highlight(sel === null ? null : d.p[sel]);
  if (cur.codeRows) markCode();
}

// pathRuns lists the runs that executed a path, most often first, each a
// link to the run; by is [input, count, input, count, ...].
function pathRuns(by) {
  const pairs = [];
  for (let i = 0; i < by.length; i += 2) pairs.push([Number(by[i]), by[i + 1]]);
  pairs.sort((a, b) => { const x = big(a[1]), y = big(b[1]); return x < y ? 1 : x > y ? -1 : a[0] - b[0]; });
  const shown = pairs.slice(0, 50);
  return h('div', {class: 'runs', id: 'selruns'},
    (pairs.length === 1 ? 'Only run ' : 'Runs (' + pairs.length + ') ') + 'that executed it: ',
    shown.map(([i, c], k) => [k ? ', ' : '', h('a', {href: '#run=' + i, dataset: {run: i}}, OV.inputs[i].label), ' (' + fmt(c) + ')']).flat(),
    pairs.length > shown.length ? ', and ' + (pairs.length - shown.length) + ' more' : '');
}
