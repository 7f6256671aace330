// Attention heatmap that computes its weights in the browser (anywidget front end).
//
// Everything the reader changes (temperature, scaling, masks, head, positional
// encoding, token order, a query vector, the width d_k) is recomputed here, so the controls
// work on a static page with no kernel. In a live kernel the weights shown are
// written back to the model's `weights` trait. Labels are always inserted as
// text: a token such as "<img src=x onerror=...>" is shown, never run.
//
// anywidget loads one ES module, so the parts are sections of this file, top to bottom:
//   words     WORDS: every word the widget shows or reads aloud, in English and in Japanese
//   weights   computeWeights and positionalEncoding: pure, no DOM, run by the tests in Node
//   controls  CONTROLS: one builder per control that heatmap.py's CONTROLS names
//   labels    the token labels, as text, and the grid they frame
//   drawing   the cells: a canvas with one pixel per cell, and the numbers of small grids
//   legend    the colour bar
//   readout   the cell under the mouse or the keyboard's cursor: its query, key and weight
//   render    anywidget's entry point; TRAIT_EFFECTS says what each trait's change redraws
//
// Colours other than the cells' come from the page's theme (heatmap.css), so the widget follows
// the book's light and dark modes and JupyterLab's themes. Its words are those of the page around
// it: Japanese inside an element whose lang is "ja" (the Japanese edition's <html lang="ja">),
// English everywhere else.
//
// DOM contract (tests and benchmarks read it):
//   [data-attn-widget]            the root; data-drawn counts the redraws
//   root.attnWidget.drawn         {weights, masked} as last drawn, rows in the order drawn:
//                                 weights[i][j] at full precision, masked[i][j] 1 where masked
//   .attn-grid[role=grid]         focusable, named by its aria-label (the shape and settings);
//                                 arrow keys move the cursor cell, Enter masks the cursor's key
//   canvas.attn-canvas            pixel (j, i) is cell (i, j): its viridis colour, transparent
//                                 where masked (the hatched background shows through)
//   .attn-cell[data-row][data-col] with at most 16 keys, the weight rounded to two decimals,
//                                 "–" where masked, in black or white, whichever contrasts
//                                 more with the cell; larger heatmaps show colour only
//   .attn-rowhead / .attn-colhead the token labels, in the order drawn; where the padding control
//                                 is shown, each key's label is a button, aria-pressed if masked
//   .attn-readout                 a polite live region: the cursor cell's query, key and weight
//   .attn-colorbar[role=img]      the colour scale, weights 0 to 1, with its tick labels

const VIRIDIS = [ // matplotlib's viridis at 9 evenly spaced stops
  [68, 1, 84], [71, 45, 123], [59, 82, 139], [44, 114, 142], [33, 145, 140],
  [40, 174, 128], [94, 201, 98], [173, 220, 48], [253, 231, 37],
];
const LEVELS = 64; // weights are quantised to LEVELS + 1 colours
const PALETTE = Array.from({ length: LEVELS + 1 }, (_, k) => { // [r, g, b] per level
  const x = (k / LEVELS) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  return VIRIDIS[i].map((v, n) => Math.round(v + (x - i) * (VIRIDIS[i + 1][n] - v)));
});
// The palette as opaque canvas pixels: RGBA bytes read as 32-bit words, so in the machine's byte order.
const PIXELS = new Uint32Array(Uint8Array.from(PALETTE.flatMap((rgb) => [...rgb, 255])).buffer);
const MAX_ANNOTATED = 16; // with more keys than this, cells show colour only

// WCAG's relative luminance of an sRGB colour [r, g, b], 0 to 255.
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
// Per level, whether black text contrasts more with its colour than white does. On viridis the
// better of the two always reaches 4.5:1.
const BLACK_TEXT = PALETTE.map((rgb) => {
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05);
});

// --- words ----------------------------------------------------------------------------------
// One table per language, with the same keys (tests/library/test_widget_words.py checks them).
// A word "{name}" in a text is filled in by `say`. Numbers, token labels and math (τ, d_k, q[0])
// are written as they are in every language.

export const WORDS = {
  en: {
    temperature: "temperature τ",
    width: "d_k",
    scale: "÷ √d_k",
    causal: "causal mask",
    positional: "positional encoding",
    head: "head",
    headNumber: "head {n}",
    shuffle: "shuffle tokens",
    restore: "original order",
    paddingHint: "click a key, or press Enter on it, to mask it",
    query: "query",
    corner: "query ↓ key →",
    maskKey: "mask {key}",
    grid: "attention weights of {rows} queries (rows) over {columns} keys (columns), {settings}; "
      + "arrow keys move between cells",
    gridTemperature: "temperature {t}",
    gridScaled: "scaled by √d_k",
    gridWidth: "d_k {d}",
    gridCausal: "causal mask",
    gridPositional: "positional encoding",
    gridKeyMasked: "{n} key masked",
    gridKeysMasked: "{n} keys masked",
    gridSeparator: ", ",
    colourScale: "colour scale: weight 0 dark purple, 0.5 teal, 1 yellow; hatched cells are masked",
    weight: "weight",
    masked: "masked",
    readoutHint: "point at a cell, or use the arrow keys on the grid, to read its weight",
    readout: "{query} attends to {key}: {weight}",
    maskedWeight: "masked (0)",
  },
  ja: {
    temperature: "温度 τ",
    width: "d_k",
    scale: "√d_k で割る",
    causal: "因果マスク",
    positional: "位置エンコーディング",
    head: "ヘッド",
    headNumber: "ヘッド {n}",
    shuffle: "トークンをシャッフル",
    restore: "元の順序に戻す",
    paddingHint: "キーをクリックするか、キーの上で Enter を押すとマスクします",
    query: "クエリ",
    corner: "クエリ ↓ キー →",
    maskKey: "{key} をマスクする",
    grid: "{rows}個のクエリ（行）から{columns}個のキー（列）への注目度。{settings}。"
      + "矢印キーでセルを移動します",
    gridTemperature: "温度 {t}",
    gridScaled: "√d_k で割る",
    gridWidth: "d_k {d}",
    gridCausal: "因果マスク",
    gridPositional: "位置エンコーディング",
    gridKeyMasked: "マスクしたキー{n}個",
    gridKeysMasked: "マスクしたキー{n}個",
    gridSeparator: "、",
    colourScale: "色の目盛り: 注目度 0 は濃い紫、0.5 は青緑、1 は黄色。斜線のセルはマスク済み",
    weight: "注目度",
    masked: "マスク済み",
    readoutHint: "セルを指すか、グリッドの上で矢印キーを使うと、その注目度を表示します",
    readout: "{query} から {key} への注目度: {weight}",
    maskedWeight: "マスク済み (0)",
  },
};

// The words of the page around `element`: Japanese inside an element whose lang is "ja" or
// "ja-…", English elsewhere. An element not yet in the page reads the page's own language.
export function wordsFor(element) {
  const holder = element.closest("[lang]") || (element.isConnected ? null : document.documentElement);
  return /^ja(-|$)/i.test(holder?.getAttribute("lang") || "") ? WORDS.ja : WORDS.en;
}

// `text` with each "{name}" replaced by values[name]. The values are inserted once, never read
// as words themselves, so a token such as "{n}" stays as it is.
function say(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

// A head's name: the one it was given, or "head 2" in the page's words (the name
// heatmap.py gives a head without one, which stands for the same).
function headName(head, i, w) {
  return head.name && head.name !== `head ${i + 1}` ? head.name : say(w.headNumber, { n: i + 1 });
}

// --- weights: mirrors AttentionHeatmap.expected_weights -----------------------------------

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

// Which original token each row and each column draws: the permutation, or the original order.
function drawnIndices(s) {
  const order = s.permutation.length ? s.permutation : s.query_vectors.map((_, i) => i);
  return { order, keyIndex: s.self_attention ? order : s.key_vectors.map((_, j) => j) };
}

// The queries and keys in the order drawn, with positional encoding added where asked.
function drawnInputs(s, order) {
  let queries = order.map((i) => s.query_vectors[i]);
  if (s.positional && s.self_attention) { // positions are those drawn, after shuffling
    const pe = positionalEncoding(queries.length, queries[0].length);
    queries = queries.map((row, p) => row.map((v, j) => v + pe[p][j]));
  }
  return { queries, keys: s.self_attention ? queries : s.key_vectors };
}

// Q and K: through the chosen head's W_Q and W_K, then only the first d_k coordinates.
function projections(s, queries, keys) {
  const head = s.heads.length ? s.heads[s.head] : null;
  let Q = head ? matmul(queries, head.W_Q) : queries;
  let K = head ? matmul(keys, head.W_K) : keys;
  if (s.d_k > 0) {
    Q = Q.map((q) => q.slice(0, s.d_k));
    K = K.map((k) => k.slice(0, s.d_k));
  }
  return { Q, K };
}

// masked[i][j] is 1 where the causal mask or the padding hides key j from query i.
function masks(s, rows, keyIndex) {
  const padded = Uint8Array.from(keyIndex, (j) => (s.padding[j] ? 1 : 0));
  return Array.from({ length: rows }, (_, i) => {
    const row = padded.slice();
    if (s.causal) row.fill(1, i + 1);
    return row;
  });
}

// q·k for every query (row) and key (column), one Float64Array per query.
function dotProducts(Q, K) {
  const n = K.length, dk = Q[0].length;
  const keys = new Float64Array(n * dk); // one flat array: this loop is the hot path
  K.forEach((k, j) => keys.set(k, j * dk));
  return Q.map((q) => {
    const query = Float64Array.from(q), row = new Float64Array(n);
    for (let j = 0, at = 0; j < n; j++, at += dk) {
      let dot = 0;
      for (let t = 0; t < dk; t++) dot += query[t] * keys[at + t];
      row[j] = dot;
    }
    return row;
  });
}

// Each row: softmax of dot × factor over the keys left visible; a row whose keys are all
// masked is zeros, as AttentionHeatmap documents. Plain arrays, as the model's `weights` holds.
function maskedSoftmax(dots, factor, masked) {
  return dots.map((scores, i) => {
    const n = scores.length, hidden = masked[i], row = new Array(n).fill(0);
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      if (hidden[j]) continue;
      row[j] = scores[j] * factor;
      if (row[j] > max) max = row[j];
    }
    if (max === -Infinity) return row;
    let total = 0;
    for (let j = 0; j < n; j++) total += (row[j] = hidden[j] ? 0 : Math.exp(row[j] - max));
    for (let j = 0; j < n; j++) row[j] /= total;
    return row;
  });
}

// The unscaled scores q·k of settings `s` and the width d_k of q and k. They depend neither on
// τ, the scaling nor the masks (SCORE_INPUTS lists what they depend on).
function scores(s) {
  const { queries, keys } = drawnInputs(s, drawnIndices(s).order);
  const { Q, K } = projections(s, queries, keys);
  return { dots: dotProducts(Q, K), dk: Q[0].length };
}
const SCORE_INPUTS = ["query_vectors", "key_vectors", "self_attention", "heads", "head", "positional",
  "permutation", "d_k"];

function weightsFromScores(s, { dots, dk }) {
  const factor = 1 / (s.temperature * (s.scale ? Math.sqrt(dk) : 1));
  const masked = masks(s, dots.length, drawnIndices(s).keyIndex);
  return { weights: maskedSoftmax(dots, factor, masked), masked };
}

// Weights for settings `s` (the model's traits), rows and columns in the order drawn.
// Returns {weights, masked}: weights[i][j] the weight, masked[i][j] 1 where a mask hides key j
// from query i.
export function computeWeights(s) {
  return weightsFromScores(s, scores(s));
}

// The traits computeWeights reads.
const WEIGHT_INPUTS = [...SCORE_INPUTS, "temperature", "scale", "causal", "padding"];

// computeWeights of a model's current traits. The scores are kept while their inputs are the
// same values (the model replaces a trait's value on every change), so that dragging the
// temperature slider only repeats the softmax.
function modelWeights(model) {
  let scored = null, inputs = {};
  return () => {
    const s = Object.fromEntries(WEIGHT_INPUTS.map((name) => [name, model.get(name)]));
    if (!scored || SCORE_INPUTS.some((name) => s[name] !== inputs[name])) {
      scored = scores(s);
      inputs = s;
    }
    return weightsFromScores(s, scored);
  };
}

// --- controls -------------------------------------------------------------------------------
// A builder takes {model, set, w} (w: the page's WORDS) and returns the control's DOM nodes and `follow`, which shows the
// model's current value (Python, or another view of the same model, may have changed it); it
// returns null when it has nothing to offer (a head menu for one head).

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child); // strings become Text nodes
  return node;
}

function temperatureSlider({ model, set, w }) {
  // the slider moves log10(τ) from -1 to 1: τ from 0.1 to 10
  const slider = h("input", { type: "range", min: "-1", max: "1", step: "0.01", className: "attn-temperature" });
  const out = h("output");
  slider.addEventListener("input", () => set("temperature", Math.pow(10, Number(slider.value))));
  const follow = () => {
    const tau = model.get("temperature");
    // moved only for a new τ, so that a reader's drag is not snapped
    if (Math.abs(Math.pow(10, Number(slider.value)) - tau) > 1e-9) slider.value = String(Math.log10(tau));
    out.textContent = tau.toFixed(2);
    slider.setAttribute("aria-valuetext", tau.toFixed(2)); // τ itself, not its logarithm
  };
  return { nodes: [h("label", {}, `${w.temperature} `, slider, " ", out)], follow };
}

function widthSlider({ model, set, w }) {
  // a slider over the allowed widths, e.g. 4, 16, 64, 256, 1024
  const choices = model.get("d_k_choices");
  const slider = h("input", { type: "range", min: "0", max: String(choices.length - 1), step: "1",
    className: "attn-d_k" });
  const out = h("output");
  slider.addEventListener("input", () => set("d_k", choices[Number(slider.value)]));
  const follow = () => {
    slider.value = String(Math.max(0, choices.indexOf(model.get("d_k"))));
    out.textContent = String(model.get("d_k"));
    slider.setAttribute("aria-valuetext", out.textContent); // the width, not its place in the list
  };
  return { nodes: [h("label", {}, `${w.width} `, slider, " ", out)], follow };
}

function checkbox(name) { // its words are w[name]
  return ({ model, set, w }) => {
    const box = h("input", { type: "checkbox", className: `attn-${name}` });
    box.addEventListener("change", () => set(name, box.checked));
    return { nodes: [h("label", {}, box, ` ${w[name]}`)], follow: () => { box.checked = model.get(name); } };
  };
}

function headMenu({ model, set, w }) {
  const heads = model.get("heads");
  if (heads.length < 2) return null;
  const select = h("select", { className: "attn-head" }, ...heads.map(
    (head, i) => h("option", { value: String(i) }, headName(head, i, w))));
  select.addEventListener("change", () => set("head", Number(select.value)));
  return { nodes: [h("label", {}, `${w.head} `, select)], follow: () => { select.value = String(model.get("head")); } };
}

function shuffled(n) { // Fisher-Yates
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

function shuffleButtons({ model, set, w }) {
  const shuffle = h("button", { type: "button", className: "attn-shuffle" }, w.shuffle);
  const reset = h("button", { type: "button", className: "attn-reset" }, w.restore);
  shuffle.addEventListener("click", () => set("permutation", shuffled(model.get("query_vectors").length)));
  reset.addEventListener("click", () => set("permutation", []));
  return { nodes: [shuffle, reset], follow: () => {} };
}

// The keys' labels do the masking (see keyLabel); the control bar only says so.
function paddingHint({ w }) {
  return { nodes: [h("span", { className: "attn-hint" }, w.paddingHint)],
    follow: () => {} };
}

// A menu of the query rows and one slider per component of the chosen row. Rebuilt when the
// row, the tokens or the width change; otherwise the sliders follow the values in place, so
// that the one a reader drags is not replaced.
function queryEditor({ model, set, w }) {
  const line = h("span", { className: "attn-query-line" });
  let shape = null, sliders = [], outs = [];
  function build(row, q) {
    const select = h("select", { className: "attn-query-row" }, ...model.get("query_tokens").map(
      (token, i) => h("option", { value: String(i) }, token)));
    select.value = String(row);
    select.addEventListener("change", () => set("query_row", Number(select.value)));
    sliders = q.map((_, k) => {
      const slider = h("input", { type: "range", min: "-3", max: "3", step: "0.1", className: "attn-query-component" });
      slider.addEventListener("input", () => {
        const queries = model.get("query_vectors").map((q) => q.slice());
        queries[row][k] = Number(slider.value);
        set("query_vectors", queries);
      });
      return slider;
    });
    outs = sliders.map(() => h("output"));
    line.replaceChildren(h("label", {}, `${w.query} `, select),
      ...sliders.map((slider, k) => h("label", {}, `q[${k}] `, slider, " ", outs[k])));
  }
  const follow = () => {
    const row = model.get("query_row"), q = model.get("query_vectors")[row] || [];
    const now = JSON.stringify([row, q.length, model.get("query_tokens")]);
    if (now !== shape) { shape = now; build(row, q); }
    q.forEach((v, k) => {
      if (Number(sliders[k].value) !== v) sliders[k].value = String(v);
      outs[k].textContent = Number(v).toFixed(1);
    });
  };
  return { nodes: [line], follow };
}

// Every control heatmap.py's CONTROLS names, in the order shown.
export const CONTROLS = {
  temperature: temperatureSlider,
  d_k: widthSlider,
  scale: checkbox("scale"),
  causal: checkbox("causal"),
  positional: checkbox("positional"),
  head: headMenu,
  shuffle: shuffleButtons,
  padding: paddingHint,
  query: queryEditor,
};

// The controls the model asks for: a bar, and below it the query editor's line (there even
// when empty, which keeps the spacing the same).
function buildControls(model, set, w) {
  const shown = new Set(model.get("controls"));
  const bar = h("div", { className: "attn-controls" });
  const editor = h("div", { className: "attn-controls attn-query-editor" });
  const built = [];
  for (const [name, build] of Object.entries(CONTROLS)) {
    const control = shown.has(name) && build({ model, set, w });
    if (!control) continue;
    (name === "query" ? editor : bar).append(...control.nodes);
    built.push(control);
  }
  const follow = () => built.forEach((control) => control.follow());
  follow();
  return { nodes: [bar, editor], follow };
}

// --- labels ---------------------------------------------------------------------------------

// What the grid shows besides the weights: the tokens on its rows and columns, in the order
// drawn, and which keys are padded.
function gridLayout(model) {
  const { order, keyIndex } = drawnIndices({ permutation: model.get("permutation"),
    query_vectors: model.get("query_vectors"), key_vectors: model.get("key_vectors"),
    self_attention: model.get("self_attention") });
  const padding = model.get("padding");
  return {
    rowLabels: order.map((i) => model.get("query_tokens")[i]),
    colLabels: keyIndex.map((j) => model.get("key_tokens")[j]),
    keyIndex,
    padded: keyIndex.map((j) => Boolean(padding[j])),
    clickable: model.get("controls").includes("padding"),
  };
}

// Width of a label in `ch` units: CJK characters take two.
function textWidth(text) {
  return [...String(text)].reduce((width, c) => width + (c.codePointAt(0) >= 0x2e80 ? 2 : 1), 0);
}

// Column widths come from the labels, never from the numbers, so a redraw never re-runs grid layout.
// Compact columns are 0.8em wide, or 24 px where the keys' labels are buttons: the least size of
// a target that WCAG 2.2 (2.5.8) allows.
function gridColumns(layout, compact) {
  const labelWidth = Math.min(16, Math.max(5, ...layout.rowLabels.map(textWidth))) + 1;
  const cellWidth = Math.min(12, Math.max(5, ...layout.colLabels.map(textWidth))) + 1;
  const compactWidth = layout.clickable ? "24px" : "0.8em";
  return `${labelWidth}ch repeat(${layout.colLabels.length}, ${compact ? compactWidth : `${cellWidth}ch`})`;
}

// Masks key `j` (its original index) if it is visible, else shows it again.
function paddingToggle(model, set) {
  return (j) => {
    const padding = model.get("key_tokens").map((_, k) => Boolean(model.get("padding")[k]));
    padding[j] = !padding[j];
    set("padding", padding);
  };
}

// A key's label; where the padding control is shown, it is a button that masks or unmasks that
// key (markPadded shows which).
function keyLabel(label, j, layout, togglePadding, w) {
  const key = h("div", { className: "attn-colhead", role: "columnheader", title: label });
  if (!layout.clickable) {
    key.append(label);
    return key;
  }
  key.setAttribute("aria-label", label); // the column's name is the key, not its button's
  const button = h("button", { type: "button" }, label);
  button.setAttribute("aria-label", say(w.maskKey, { key: label }));
  button.addEventListener("click", () => togglePadding(layout.keyIndex[j]));
  key.classList.add("attn-clickable");
  key.append(button);
  return key;
}

function markPadded(key, padded) {
  key.classList.toggle("attn-padded", padded);
  key.firstElementChild?.setAttribute("aria-pressed", String(padded)); // the button, if any
}

// The header row (the keys) and one row per query, each opening with the query's label.
function labelRows(layout, togglePadding, w) {
  const header = h("div", { className: "attn-row attn-header", role: "row" },
    h("div", { className: "attn-corner", role: "columnheader" }, w.corner),
    ...layout.colLabels.map((label, j) => keyLabel(label, j, layout, togglePadding, w)));
  const rows = layout.rowLabels.map((label, i) => {
    const head = h("div", { className: "attn-rowhead", role: "rowheader", title: label }, label);
    head.style.gridArea = `${i + 2} / 1`;
    return h("div", { className: "attn-row", role: "row" }, head);
  });
  return { header, rows };
}

// The grid's accessible name: what it shows and the settings it is drawn with.
function gridName(model, layout, w) {
  const settings = [say(w.gridTemperature, { t: model.get("temperature").toFixed(2) })];
  if (model.get("scale")) settings.push(w.gridScaled);
  if (model.get("d_k") > 0) settings.push(say(w.gridWidth, { d: model.get("d_k") }));
  const heads = model.get("heads");
  if (heads.length > 1) settings.push(headName(heads[model.get("head")], model.get("head"), w));
  if (model.get("causal")) settings.push(w.gridCausal);
  if (model.get("positional")) settings.push(w.gridPositional);
  const padded = layout.padded.filter(Boolean).length;
  if (padded) settings.push(say(padded === 1 ? w.gridKeyMasked : w.gridKeysMasked, { n: padded }));
  return say(w.grid, { rows: layout.rowLabels.length, columns: layout.colLabels.length,
    settings: settings.join(w.gridSeparator) });
}

// --- drawing --------------------------------------------------------------------------------
// The cells are one canvas with a pixel per cell, scaled up by CSS without smoothing, so a
// redraw writes m·n pixels however large the cells are drawn.

function paintPixels(canvas, weights, masked) {
  const m = canvas.height, n = canvas.width; // read once: DOM properties are slow in a loop
  const context = canvas.getContext("2d");
  const image = context.createImageData(n, m);
  const pixels = new Uint32Array(image.data.buffer);
  for (let i = 0, p = 0; i < m; i++) {
    const w = weights[i], hidden = masked[i];
    for (let j = 0; j < n; j++, p++) pixels[p] = hidden[j] ? 0 : PIXELS[Math.round(w[j] * LEVELS)];
  }
  context.putImageData(image, 0, 0); // a masked cell stays transparent
}

// In small grids each cell also shows its weight, as text over the canvas.
function numberCells(rows, columns) {
  return rows.map((row, i) => Array.from({ length: columns }, (_, j) => {
    const cell = h("div", { className: "attn-cell", role: "gridcell" }, "");
    cell.dataset.row = String(i);
    cell.dataset.col = String(j);
    cell.style.gridArea = `${i + 2} / ${j + 2}`;
    row.append(cell);
    return cell;
  }));
}

function paintNumbers(cells, weights, masked) {
  cells.forEach((row, i) => row.forEach((cell, j) => {
    const w = weights[i][j], hidden = masked[i][j];
    const text = hidden ? "–" : w.toFixed(2);
    if (cell.firstChild.nodeValue !== text) cell.firstChild.nodeValue = text;
    cell.classList.toggle("attn-masked", Boolean(hidden));                         // on the hatching
    cell.classList.toggle("attn-on-light", !hidden && BLACK_TEXT[Math.round(w * LEVELS)]); // black text
  }));
}

// The labels, the canvas, (in small grids) the number cells and the cursor, in a CSS grid.
// The grid is one tab stop; the cursor is the cell its arrow keys (or the mouse) point at.
class HeatmapGrid {
  constructor(togglePadding, w) {
    this.element = h("div", { className: "attn-grid", role: "grid", tabIndex: 0 });
    this.words = w;
    this.canvas = h("canvas", { className: "attn-canvas" });
    this.canvas.setAttribute("aria-hidden", "true"); // the labels, numbers and readout carry the content
    this.mark = h("div", { className: "attn-cursor", hidden: true });
    this.mark.setAttribute("aria-hidden", "true");
    this.togglePadding = togglePadding;
    this.layout = null;
    this.layoutKey = "";
    this.keys = [];
    this.cells = [];
    this.cursor = null; // [i, j]
  }

  // Rebuilds labels and cells if the tokens or their order changed; masking a key only marks its
  // label, so that the button a reader pressed keeps the focus. A redraw leaves them in place.
  lay(layout) {
    this.layout = layout;
    const m = layout.rowLabels.length, n = layout.colLabels.length;
    const key = JSON.stringify({ ...layout, padded: null });
    if (key !== this.layoutKey) {
      this.layoutKey = key;
      const compact = n > MAX_ANNOTATED;
      this.element.classList.toggle("attn-compact", compact);
      this.element.classList.toggle("attn-key-buttons", layout.clickable);
      this.element.style.gridTemplateColumns = gridColumns(layout, compact);
      this.canvas.width = n;
      this.canvas.height = m;
      this.canvas.style.gridArea = `2 / 2 / ${m + 2} / ${n + 2}`;
      const { header, rows } = labelRows(layout, this.togglePadding, this.words);
      this.keys = [...header.children].slice(1);
      this.cells = compact ? [] : numberCells(rows, n);
      this.element.replaceChildren(header, this.canvas, ...rows, this.mark);
      if (this.cursor) this.moveCursor([Math.min(this.cursor[0], m - 1), Math.min(this.cursor[1], n - 1)]);
    }
    this.keys.forEach((label, j) => markPadded(label, layout.padded[j]));
  }

  paint(weights, masked) {
    paintPixels(this.canvas, weights, masked);
    paintNumbers(this.cells, weights, masked);
  }

  name(text) {
    if (this.element.getAttribute("aria-label") !== text) this.element.setAttribute("aria-label", text);
  }

  // The cell [i, j] under a point of the page, or null.
  cellAt(x, y) {
    const box = this.canvas.getBoundingClientRect();
    const i = Math.floor(((y - box.top) / box.height) * this.canvas.height);
    const j = Math.floor(((x - box.left) / box.width) * this.canvas.width);
    return i >= 0 && j >= 0 && i < this.canvas.height && j < this.canvas.width ? [i, j] : null;
  }

  // Puts the cursor on cell [i, j]: the mark fills that cell's grid area (it is absolutely
  // positioned, so moving it does not lay the grid out again; an absolutely positioned item's
  // area needs both its end lines, which would otherwise be the grid's edges).
  moveCursor([i, j]) {
    this.cursor = [i, j];
    this.mark.style.gridArea = `${i + 2} / ${j + 2} / ${i + 3} / ${j + 3}`;
    this.mark.hidden = false;
  }
}

// --- legend ---------------------------------------------------------------------------------

const TICKS = [0, 0.25, 0.5, 0.75, 1];

// The colour scale of the cells: weights from 0 to 1, the same for every row and every setting
// (each row's weights sum to 1), and the hatching of masked cells.
function legend(w) {
  const stops = VIRIDIS.map((rgb, k) => `rgb(${rgb.join(" ")}) ${(100 * k) / (VIRIDIS.length - 1)}%`);
  const ramp = h("div", { className: "attn-colorbar-ramp" });
  ramp.style.backgroundImage = `linear-gradient(to right, ${stops.join(", ")})`;
  const ticks = TICKS.map((t) => {
    const tick = h("span", { className: "attn-colorbar-tick" }, String(t));
    tick.style.left = `${100 * t}%`;
    return tick;
  });
  const bar = h("div", { className: "attn-colorbar", role: "img" }, ramp, ...ticks);
  bar.setAttribute("aria-label", w.colourScale);
  return h("div", { className: "attn-legend" }, h("span", {}, w.weight), bar,
    h("span", { className: "attn-legend-masked" }, h("span", { className: "attn-swatch" }), w.masked));
}

// --- readout --------------------------------------------------------------------------------

const STEPS = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
  PageUp: [-10, 0], PageDown: [10, 0] };

// The cursor cell's query, key and weight in full. A polite live region, so that screen readers
// announce it; shown again on every redraw, so that it never tells a weight no longer drawn.
class Readout {
  constructor(grid, drawn, w) {
    this.grid = grid;
    this.drawn = drawn;
    this.words = w;
    this.element = h("div", { className: "attn-readout" }, w.readoutHint);
    this.element.setAttribute("aria-live", "polite");
    this.element.setAttribute("aria-atomic", "true");
    grid.element.addEventListener("mousemove", (event) => {
      const cell = grid.cellAt(event.clientX, event.clientY);
      if (cell) this.point(cell);
    });
    grid.element.addEventListener("focus", () => this.point(grid.cursor || [0, 0]));
    grid.element.addEventListener("keydown", (event) => this.key(event));
  }

  // Arrow keys, Page Up and Down, Home and End move the cursor; Enter or Space masks its key.
  key(event) {
    const grid = this.grid;
    if (event.target !== grid.element || event.altKey || event.ctrlKey || event.metaKey) return;
    const [i, j] = grid.cursor || [0, 0], m = grid.canvas.height, n = grid.canvas.width;
    const clamp = (v, size) => Math.max(0, Math.min(size - 1, v));
    let next = null;
    if (event.key in STEPS) {
      const [di, dj] = STEPS[event.key];
      next = [clamp(i + di, m), clamp(j + dj, n)];
    } else if (event.key === "Home" || event.key === "End") {
      next = [i, event.key === "Home" ? 0 : n - 1];
    } else if ((event.key === "Enter" || event.key === " ") && grid.layout.clickable) {
      grid.togglePadding(grid.layout.keyIndex[j]);
    } else {
      return;
    }
    event.preventDefault(); // the page does not scroll
    if (next) {
      this.point(next);
      grid.mark.scrollIntoView({ block: "nearest", inline: "nearest" }); // within a large grid
    }
  }

  point(cell) {
    this.grid.moveCursor(cell);
    this.show();
  }

  show() {
    if (!this.grid.cursor) return;
    const [i, j] = this.grid.cursor, { weights, masked } = this.drawn();
    const { rowLabels, colLabels } = this.grid.layout;
    // In words, not "a → b": the live region is read aloud, and an arrow is read as "right arrow".
    const w = this.words, weight = masked[i][j] ? w.maskedWeight : weights[i][j].toFixed(6);
    const text = say(w.readout, { query: rowLabels[i], key: colLabels[j], weight });
    if (this.element.textContent !== text) this.element.textContent = text;
  }
}

// --- render ---------------------------------------------------------------------------------

// What a change to each trait redraws. Every synced trait of AttentionHeatmap is here except
// `weights`, which only this front end writes (tests/test_heatmap.py checks both lists):
//   controls  the controls are built anew     values   the controls show the model's values
//   grid      labels and cells follow the tokens, their order and the masks; then a redraw
//   redraw    the weights are recomputed, drawn and reported
export const TRAIT_EFFECTS = {
  controls: ["controls", "grid"], d_k_choices: ["controls"], heads: ["controls", "redraw"],
  head: ["values", "redraw"], temperature: ["values", "redraw"], scale: ["values", "redraw"],
  causal: ["values", "redraw"], positional: ["values", "redraw"], d_k: ["values", "redraw"],
  query_row: ["values"], query_tokens: ["values", "grid"], query_vectors: ["values", "grid"],
  key_tokens: ["grid"], key_vectors: ["grid"], self_attention: ["grid"], permutation: ["grid"],
  padding: ["grid"],
};

// Writes a trait and saves it to the kernel. On a static page the widget manager has no comm
// channel and saving throws; after that it is not tried again.
function modelWriter(model) {
  let syncable = true;
  return (name, value) => {
    model.set(name, value);
    if (!syncable) return;
    try {
      model.save_changes();
    } catch (err) {
      if (String(err).includes("no comm")) syncable = false; else throw err;
    }
  };
}

function sameRows(a, b) {
  return a.length === b.length && a.every((row, i) => row.length === b[i].length
    && row.every((v, j) => v === b[i][j]));
}

// Reports the weights drawn to Python (a live kernel), unless the model has them already, so
// that a change coming from Python does not echo back and forth.
function publish(model, set, weights) {
  if (!sameRows(weights, model.get("weights"))) set("weights", weights);
}

function render({ model, el }) {
  const set = modelWriter(model);
  const w = wordsFor(el);
  const api = { model, drawn: { weights: [], masked: [] } }; // root.attnWidget, for tests
  const grid = new HeatmapGrid(paddingToggle(model, set), w);
  const weights = modelWeights(model);
  const controlArea = h("div");
  const readout = new Readout(grid, () => api.drawn, w);
  const root = h("div", { className: "attn-widget" }, controlArea, legend(w), readout.element,
    h("div", { className: "attn-scroll" }, grid.element));
  root.dataset.attnWidget = "";
  root.attnWidget = api;
  el.replaceChildren(root);

  let controls = null, draws = 0;
  function redraw() {
    api.drawn = weights();
    grid.paint(api.drawn.weights, api.drawn.masked);
    grid.name(gridName(model, grid.layout, w));
    readout.show();
    root.dataset.drawn = String(++draws);
    publish(model, set, api.drawn.weights);
  }
  function refresh(effects) {
    if (effects.includes("controls")) {
      controls = buildControls(model, set, w);
      controlArea.replaceChildren(...controls.nodes);
    } else if (effects.includes("values")) {
      controls.follow();
    }
    if (effects.includes("grid")) grid.lay(gridLayout(model));
    if (effects.includes("grid") || effects.includes("redraw")) redraw();
  }

  const handlers = Object.entries(TRAIT_EFFECTS).map(([name, effects]) => [`change:${name}`, () => refresh(effects)]);
  for (const [event, handler] of handlers) model.on(event, handler);
  refresh(["controls", "grid"]);
  return () => { for (const [event, handler] of handlers) model.off(event, handler); };
}

export default { render };
