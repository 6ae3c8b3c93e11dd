// This file lays out a function's control-flow graph for drawing.

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
