// This file shows a function's code: its source lines and its
// instructions, with the blocks of the selected path marked.

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
