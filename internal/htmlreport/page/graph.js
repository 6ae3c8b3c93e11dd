// This file draws the laid-out graph as SVG and highlights the selected
// path on it.

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
