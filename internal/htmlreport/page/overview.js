// This file draws the overview: the run's totals and facts, the hottest
// paths, and the table of every function.

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

  if (OV.inputs) {
    m.appendChild(h('h2', {}, 'Runs (' + OV.inputs.length + ')'));
    const rb = h('div', {id: 'runs-box'});
    m.appendChild(rb);
    renderRuns(rb);
  }

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
      h('td', {class: 'mono muted label'}, where));
  });
  const box = h('div', {});
  const table = h('table', {class: 'data', id: id},
    h('tr', {}, h('th', {class: 'num'}, '#'), h('th', {class: 'num'}, 'count'), h('th', {class: 'num'}, 'blocks'),
      h('th', {}, 'kind'), h('th', {}, 'function'), h('th', {}, 'through')), rows);
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

// The runs of a profile of several (tests, a runs file's runs): the
// paths each executed and those it alone did, sortable by any column,
// most paths of their own first.
const runsState = {sort: 'unique'};
function renderRuns(box) {
  const st = runsState, ins = OV.inputs;
  const rows = ins.map((_, i) => i);
  const cmp = {
    unique: (a, b) => (ins[b].unique_paths - ins[a].unique_paths) || (a - b),
    paths: (a, b) => (ins[b].paths - ins[a].paths) || (a - b),
    seconds: (a, b) => (ins[b].seconds - ins[a].seconds) || (a - b),
    exit: (a, b) => (ins[b].exit_code - ins[a].exit_code) || (a - b),
    label: (a, b) => ins[a].label.localeCompare(ins[b].label) || (a - b),
  }[st.sort];
  rows.sort(cmp);
  const th = (key, label, cls) => h('th', {class: (cls || '') + ' sortable' + (st.sort === key ? ' sorted' : ''), dataset: {sort: key},
    title: 'sort', onclick: () => { st.sort = key; renderRuns(box); }}, label);
  box.replaceChildren(h('table', {class: 'data', id: 'runs-table'},
    h('tr', {}, th('label', 'run'), th('paths', 'paths', 'num'), th('unique', 'paths only it ran', 'num'),
      th('seconds', 'seconds', 'num'), th('exit', 'exit', 'num'), h('th', {}, 'outcome')),
    rows.map(i => {
      const r = ins[i];
      return h('tr', {class: 'click', dataset: {run: i}, onclick: () => { location.hash = 'run=' + i; }},
        h('td', {}, h('a', {href: '#run=' + i}, clip(r.label, 60))), h('td', {class: 'num'}, fmt(r.paths)),
        h('td', {class: 'num'}, fmt(r.unique_paths)), h('td', {class: 'num'}, r.seconds.toFixed(3)),
        h('td', {class: 'num'}, r.exit_code), h('td', {}, r.complete ? '' : r.incomplete));
    })));
}

// showRun shows one run: its facts and the paths no other run executed.
function showRun(i) {
  const r = OV.inputs[i], uniq = OV.unique[i];
  const m = h('main', {id: 'run', dataset: {run: i}});
  m.appendChild(h('h2', {}, h('span', {id: 'runlabel'}, r.label), h('span', {class: 'muted'}, '  run ' + (i + 1) + ' of ' + OV.inputs.length)));
  m.appendChild(h('div', {class: 'cards'},
    card(fmt(r.unique_paths), 'paths only this run executed'),
    card(fmt(r.paths), 'paths it executed'),
    card(r.seconds.toFixed(3) + ' s', 'run time'),
    card(String(r.exit_code), r.complete ? 'exit code' : 'exit code: ' + r.incomplete)));
  if (r.args && r.args.length) m.appendChild(h('p', {class: 'mono muted'}, 'arguments: ' + r.args.join(' ')));
  m.appendChild(h('h3', {}, 'Paths only this run executed'));
  if (!uniq.length) {
    m.appendChild(h('p', {class: 'muted'}, 'Every path it executed, another run executed too.'));
  } else {
    m.appendChild(h('table', {class: 'data', id: 'unique-paths'},
      h('tr', {}, h('th', {}, 'function'), h('th', {class: 'num'}, 'path'), h('th', {class: 'num'}, 'count'), h('th', {}, 'through')),
      uniq.map(([row, pid, count, label]) => {
        const f = OV.funcs[row];
        return h('tr', {class: 'click', dataset: {f: f[F.index], p: pid}, onclick: () => { location.hash = funcLink(row, pid); }},
          h('td', {}, h('a', {href: funcLink(row, pid), class: 'fname', title: f[F.name]}, clip(f[F.name], 40))),
          h('td', {class: 'num'}, pid), h('td', {class: 'num'}, fmt(count)), h('td', {class: 'mono muted label'}, label));
      })));
  }
  app.replaceChildren(header(h('a', {href: '#'}, '← overview')), m);
  document.title = r.label + ' — ' + OV.title;
}
