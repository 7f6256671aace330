// Attention heatmap that computes its weights in the browser (anywidget front end).
//
// Everything the reader changes (temperature, scaling, masks, head, positional
// encoding, token order, a query vector, the width d_k) is recomputed here, so the controls
// work on a static page with no kernel. In a live kernel the weights shown are
// written back to the model's `weights` trait. Labels are always inserted as
// text: a token such as "<img src=x onerror=...>" is shown, never run.
//
// DOM contract (tests and benchmarks read it):
//   [data-attn-widget]            the root
//   .attn-row[data-row=i]         one per query row as drawn; data-weights holds
//                                 the row's weights at full precision, space-separated
//   .attn-cell[data-row][data-col] the weight rounded to two decimals, "–" where masked
//                                 ("" when the heatmap is too large for numbers)
//   .attn-rowhead / .attn-colhead the token labels, in the order drawn

const VIRIDIS = [ // matplotlib's viridis at 9 evenly spaced stops
  [68, 1, 84], [71, 45, 123], [59, 82, 139], [44, 114, 142], [33, 145, 140],
  [40, 174, 128], [94, 201, 98], [173, 220, 48], [253, 231, 37],
];
const LEVELS = 64; // colours are quantised so a redraw only assigns cached strings
const PALETTE = Array.from({ length: LEVELS + 1 }, (_, k) => {
  const x = (k / LEVELS) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const c = VIRIDIS[i].map((v, n) => Math.round(v + (x - i) * (VIRIDIS[i + 1][n] - v)));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
});
const MAX_ANNOTATED = 16; // with more keys than this, cells show colour only

function matmul(A, B) {
  const n = B[0].length;
  return A.map((row) => {
    const out = new Float64Array(n);
    row.forEach((a, k) => { for (let j = 0; j < n; j++) out[j] += a * B[k][j]; });
    return out;
  });
}

// sin on even, cos on odd dimensions: PE[p][2i] = sin(p / 10000^(2i/d)), PE[p][2i+1] = cos(...)
export function positionalEncoding(n, d) {
  return Array.from({ length: n }, (_, p) => Array.from({ length: d }, (_, j) => {
    const angle = p / Math.pow(10000, (2 * Math.floor(j / 2)) / d);
    return j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  }));
}

// The order in which tokens are drawn: a permutation, or the original order.
function drawOrder(s) {
  return s.permutation.length ? s.permutation : s.query_vectors.map((_, i) => i);
}

// Weights for settings `s` (the model's traits); mirrors AttentionHeatmap.expected_weights.
// Returns {weights, masked}: masked[i][j] is true where a mask hides key j from query i.
export function computeWeights(s) {
  const order = drawOrder(s);
  let Xq = order.map((i) => s.query_vectors[i]);
  let Xk = s.self_attention ? Xq : s.key_vectors;
  const keyIndex = s.self_attention ? order : s.key_vectors.map((_, j) => j);
  if (s.positional && s.self_attention) { // positions are those drawn, after shuffling
    const pe = positionalEncoding(Xq.length, Xq[0].length);
    Xq = Xq.map((row, p) => row.map((v, j) => v + pe[p][j]));
    Xk = Xq;
  }
  const head = s.heads.length ? s.heads[s.head] : null;
  let Q = head ? matmul(Xq, head.W_Q) : Xq;
  let K = head ? matmul(Xk, head.W_K) : Xk;
  if (s.d_k > 0) { // keep only the first d_k coordinates of every query and key
    Q = Q.map((q) => q.slice(0, s.d_k));
    K = K.map((k) => k.slice(0, s.d_k));
  }
  const dk = Q[0].length;
  const factor = 1 / (s.temperature * (s.scale ? Math.sqrt(dk) : 1));
  const masked = Q.map((_, i) => K.map((__, j) => (s.causal && j > i) || Boolean(s.padding[keyIndex[j]])));
  const weights = Q.map((q, i) => {
    const row = new Float64Array(K.length);
    let max = -Infinity;
    K.forEach((k, j) => {
      if (masked[i][j]) return;
      let dot = 0;
      for (let t = 0; t < dk; t++) dot += q[t] * k[t];
      row[j] = dot * factor;
      if (row[j] > max) max = row[j];
    });
    if (max === -Infinity) return row; // every key masked: a row of zeros, as documented
    let total = 0;
    K.forEach((_, j) => { if (!masked[i][j]) total += (row[j] = Math.exp(row[j] - max)); else row[j] = 0; });
    return row.map((w) => w / total);
  });
  return { weights, masked };
}

// Width of a label in `ch` units: CJK characters take two.
function textWidth(text) {
  return [...String(text)].reduce((width, c) => width + (c.codePointAt(0) >= 0x2e80 ? 2 : 1), 0);
}

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child); // strings become Text nodes
  return node;
}

const TRAITS = ["query_vectors", "key_vectors", "self_attention", "heads", "head", "temperature", "scale",
  "causal", "padding", "positional", "permutation", "d_k"];

function render({ model, el }) {
  const shown = new Set(model.get("controls"));
  let syncable = true; // false on a static page, which has no kernel to sync with
  let weights = [];
  let cells = [], rowEls = [], rowLabels = [], colLabels = [], colIndex = [];
  let prevText = [], prevBucket = new Int16Array(0), prevLook = new Int8Array(0);

  const controls = h("div", { className: "attn-controls" });
  const queryEditor = h("div", { className: "attn-controls attn-query-editor" });
  const readout = h("div", { className: "attn-readout" }, "\u00a0");
  const grid = h("div", { className: "attn-grid", role: "table" });
  const root = h("div", { className: "attn-widget" }, controls, queryEditor, readout,
    h("div", { className: "attn-scroll" }, grid));
  root.dataset.attnWidget = "";
  el.replaceChildren(root);

  const set = (name, value) => {
    model.set(name, value);
    save();
  };
  function save() {
    if (!syncable) return;
    try {
      model.save_changes();
    } catch (err) { // the static page's widget manager: "no comm channel defined"
      if (String(err).includes("no comm")) syncable = false; else throw err;
    }
  }

  // --- controls -------------------------------------------------------------
  // Each control also registers how to follow its trait when Python (or another view of the
  // same model) changes it.
  const followers = [];
  const followModel = () => followers.forEach((follow) => follow());
  if (shown.has("temperature")) {
    // the slider moves log10(τ) from -1 to 1: τ from 0.1 to 10
    const slider = h("input", { type: "range", min: "-1", max: "1", step: "0.01",
      className: "attn-temperature" });
    slider.value = String(Math.log10(model.get("temperature")));
    const out = h("output", {}, model.get("temperature").toFixed(2));
    slider.addEventListener("input", () => {
      const tau = Math.pow(10, Number(slider.value));
      out.textContent = tau.toFixed(2);
      set("temperature", tau);
    });
    followers.push(() => {
      const tau = model.get("temperature");
      if (Math.abs(Math.pow(10, Number(slider.value)) - tau) > 1e-9) slider.value = String(Math.log10(tau));
      out.textContent = tau.toFixed(2);
    });
    controls.append(h("label", {}, "temperature τ ", slider, " ", out));
  }
  if (shown.has("d_k")) {
    // a slider over the allowed widths, e.g. 4, 16, 64, 256, 1024
    const choices = model.get("d_k_choices");
    const slider = h("input", { type: "range", min: "0", max: String(choices.length - 1), step: "1",
      className: "attn-d_k" });
    slider.value = String(Math.max(0, choices.indexOf(model.get("d_k"))));
    const out = h("output", {}, String(model.get("d_k")));
    slider.addEventListener("input", () => {
      const dk = choices[Number(slider.value)];
      out.textContent = String(dk);
      set("d_k", dk);
    });
    followers.push(() => {
      slider.value = String(Math.max(0, choices.indexOf(model.get("d_k"))));
      out.textContent = String(model.get("d_k"));
    });
    controls.append(h("label", {}, "d_k ", slider, " ", out));
  }
  for (const [name, text] of [["scale", " ÷ √d_k"], ["causal", " causal mask"],
    ["positional", " positional encoding"]]) {
    if (!shown.has(name)) continue;
    const box = h("input", { type: "checkbox", checked: model.get(name), className: `attn-${name}` });
    box.addEventListener("change", () => set(name, box.checked));
    followers.push(() => { box.checked = model.get(name); });
    controls.append(h("label", {}, box, text));
  }
  if (shown.has("head") && model.get("heads").length > 1) {
    const select = h("select", { className: "attn-head" }, ...model.get("heads").map(
      (head, i) => h("option", { value: String(i) }, head.name || `head ${i + 1}`)));
    select.value = String(model.get("head"));
    select.addEventListener("change", () => set("head", Number(select.value)));
    followers.push(() => { select.value = String(model.get("head")); });
    controls.append(h("label", {}, "head ", select));
  }
  if (shown.has("shuffle")) {
    const shuffle = h("button", { type: "button", className: "attn-shuffle" }, "shuffle tokens");
    const reset = h("button", { type: "button", className: "attn-reset" }, "original order");
    shuffle.addEventListener("click", () => {
      const p = model.get("query_vectors").map((_, i) => i);
      for (let i = p.length - 1; i > 0; i--) { // Fisher-Yates
        const j = Math.floor(Math.random() * (i + 1));
        [p[i], p[j]] = [p[j], p[i]];
      }
      set("permutation", p);
    });
    reset.addEventListener("click", () => set("permutation", []));
    controls.append(shuffle, reset);
  }
  if (shown.has("padding")) {
    controls.append(h("span", { className: "attn-hint" }, "click a key to mask it"));
  }

  // One slider per component of the chosen query row ("query" control).
  function drawQueryEditor() {
    queryEditor.replaceChildren();
    if (!shown.has("query")) return;
    const row = model.get("query_row");
    const select = h("select", { className: "attn-query-row" }, ...model.get("query_tokens").map(
      (token, i) => h("option", { value: String(i) }, token)));
    select.value = String(row);
    select.addEventListener("change", () => { set("query_row", Number(select.value)); });
    queryEditor.append(h("label", {}, "query ", select));
    model.get("query_vectors")[row].forEach((v, k) => {
      const slider = h("input", { type: "range", min: "-3", max: "3", step: "0.1",
        className: "attn-query-component" });
      slider.value = String(v);
      const out = h("output", {}, Number(v).toFixed(1));
      slider.addEventListener("input", () => {
        const queries = model.get("query_vectors").map((q) => q.slice());
        queries[row][k] = Number(slider.value);
        out.textContent = Number(slider.value).toFixed(1);
        set("query_vectors", queries);
      });
      queryEditor.append(h("label", {}, `q[${k}] `, slider, " ", out));
    });
  }

  // Keep the sliders in step with queries set from Python, without replacing
  // the slider the reader may be dragging.
  function syncQueryEditor() {
    const sliders = queryEditor.querySelectorAll(".attn-query-component");
    const q = model.get("query_vectors")[model.get("query_row")];
    if (!q || sliders.length !== q.length) return drawQueryEditor();
    sliders.forEach((slider, k) => {
      if (Number(slider.value) !== q[k]) {
        slider.value = String(q[k]);
        slider.nextElementSibling.textContent = Number(q[k]).toFixed(1);
      }
    });
  }

  // --- the grid ---------------------------------------------------------------
  // Rebuilt only when the tokens, their order or the padding change.
  function build() {
    const selfAttention = model.get("self_attention");
    const order = drawOrder({ permutation: model.get("permutation"), query_vectors: model.get("query_vectors") });
    const padding = model.get("padding");
    rowLabels = order.map((i) => model.get("query_tokens")[i]);
    colIndex = selfAttention ? order : model.get("key_tokens").map((_, j) => j);
    colLabels = colIndex.map((j) => model.get("key_tokens")[j]);
    const compact = colLabels.length > MAX_ANNOTATED;
    grid.classList.toggle("attn-compact", compact);
    const labelWidth = Math.min(16, Math.max(5, ...rowLabels.map(textWidth))) + 1;
    const cellWidth = Math.min(12, Math.max(5, ...colLabels.map(textWidth))) + 1;
    grid.style.gridTemplateColumns =
      `${labelWidth}ch repeat(${colLabels.length}, ${compact ? "0.8em" : `${cellWidth}ch`})`;

    const header = h("div", { className: "attn-row attn-header", role: "row" },
      h("div", { className: "attn-corner", role: "columnheader" }, "query ↓ key →"));
    colLabels.forEach((label, j) => {
      const key = h("div", { className: "attn-colhead", role: "columnheader", title: label }, label);
      if (padding[colIndex[j]]) key.classList.add("attn-padded");
      if (shown.has("padding")) {
        key.classList.add("attn-clickable");
        key.addEventListener("click", () => {
          const next = model.get("key_tokens").map((_, i) => Boolean(model.get("padding")[i]));
          next[colIndex[j]] = !next[colIndex[j]];
          set("padding", next);
        });
      }
      header.append(key);
    });
    rowEls = []; cells = [];
    const rows = rowLabels.map((label, i) => {
      const row = h("div", { className: "attn-row", role: "row" },
        h("div", { className: "attn-rowhead", role: "rowheader", title: label }, label));
      row.dataset.row = String(i);
      cells.push(colLabels.map((_, j) => {
        const cell = h("div", { className: "attn-cell", role: "cell" }, "");
        cell.dataset.row = String(i);
        cell.dataset.col = String(j);
        row.append(cell);
        return cell;
      }));
      rowEls.push(row);
      return row;
    });
    grid.replaceChildren(header, ...rows);
    const n = rowLabels.length * colLabels.length;
    prevText = new Array(n).fill("");
    prevBucket = new Int16Array(n).fill(-1);
    prevLook = new Int8Array(n).fill(-1);
  }

  // Recompute and repaint the existing cells: the path every slider takes.
  // DOM writes are skipped where nothing visible changed.
  function paint() {
    let masked;
    ({ weights, masked } = computeWeights(Object.fromEntries(TRAITS.map((n) => [n, model.get(n)]))));
    const annotate = colLabels.length <= MAX_ANNOTATED;
    for (let i = 0, c = 0; i < cells.length; i++) {
      const w = weights[i];
      rowEls[i].dataset.weights = w.join(" ");
      for (let j = 0; j < w.length; j++, c++) {
        const cell = cells[i][j];
        const text = !annotate ? "" : masked[i][j] ? "–" : w[j].toFixed(2);
        if (text !== prevText[c]) { cell.firstChild.nodeValue = text; prevText[c] = text; }
        const bucket = Math.round(w[j] * LEVELS);
        if (bucket !== prevBucket[c]) { cell.style.backgroundColor = PALETTE[bucket]; prevBucket[c] = bucket; }
        // 2: masked (hatched grey), 1: dark text on the bright end of viridis, 0: light text
        const look = masked[i][j] ? 2 : w[j] > 0.6 ? 1 : 0;
        if (look !== prevLook[c]) {
          cell.classList.toggle("attn-light", look === 1);
          cell.classList.toggle("attn-masked", look === 2);
          prevLook[c] = look;
        }
      }
    }
  }

  // Report the weights drawn to Python (a live kernel); skip when unchanged
  // so that a change coming from Python does not echo back and forth.
  function publish() {
    const rows = weights.map((w) => Array.from(w));
    if (JSON.stringify(rows) === JSON.stringify(model.get("weights"))) return;
    set("weights", rows);
  }

  function redraw() { paint(); publish(); }
  function rebuild() { build(); redraw(); }

  grid.addEventListener("mouseover", (event) => {
    const cell = event.target.closest(".attn-cell");
    if (!cell) return;
    const i = Number(cell.dataset.row), j = Number(cell.dataset.col);
    const masked = cell.classList.contains("attn-masked");
    readout.textContent = `${rowLabels[i]} → ${colLabels[j]}: ${masked ? "masked (0)" : weights[i][j].toFixed(6)}`;
  });

  const sizeChanged = () => cells.length !== model.get("query_vectors").length
    || (!model.get("self_attention") && (cells[0] || []).length !== model.get("key_vectors").length);
  const handlers = [
    ["query_tokens", () => { rebuild(); drawQueryEditor(); }],
    ...["key_tokens", "permutation", "padding", "self_attention"].map((n) => [n, rebuild]),
    ["heads", redraw],
    ...["head", "temperature", "scale", "causal", "positional", "d_k"].map((n) => [n, () => { followModel(); redraw(); }]),
    ["key_vectors", () => (sizeChanged() ? rebuild() : redraw())],
    ["query_vectors", () => { if (sizeChanged()) build(); redraw(); syncQueryEditor(); }],
    ["query_row", drawQueryEditor],
  ];
  for (const [name, handler] of handlers) model.on(`change:${name}`, handler);

  drawQueryEditor();
  rebuild();
  root.attnWidget = { model, redraw }; // for tests and the benchmark
  return () => { for (const [name, handler] of handlers) model.off(`change:${name}`, handler); };
}

export default { render };
