// The key-value cache calculator (anywidget front end): computed in the browser.
//
// Every number is computed here, from the inputs the reader types, so the calculator works on a
// static page with no kernel; in a live kernel the inputs are written back to the model's traits.
// The arithmetic is exact: JavaScript's BigInt, as Python's integers in kv_calculator.py, whose
// decoding_budget, format_bytes and describe the sections below mirror line for line.
//
// anywidget loads one ES module, so the parts are sections of this file, top to bottom:
//   words    WORDS: every word the calculator shows or reads aloud, in English and in Japanese
//   budget   decodingBudget, formatBytes, describe, checkInputs: pure, no DOM, run by the tests
//            in Node against kv_calculator.py
//   form     the menu of models and one labelled number field per input
//   results  the outputs as text, a bar of the step's bytes, and a status line
//   render   anywidget's entry point
//
// Colours come from the page's theme (kv_calculator.css), as the heatmap's do. Its words are those
// of the page around it, as the heatmap's are: Japanese inside an element whose lang is "ja"
// (the Japanese edition's <html lang="ja">), English everywhere else. The pure functions write
// English unless given other words: Python's words, which the tests hold them to.
//
// DOM contract (tests read it):
//   [data-kv-calculator]          the root; data-drawn counts the updates shown
//   root.kvCalculator.shown       {budget, text}: as last shown, budget[name] the exact integer
//                                 as a decimal string, text[name] what the output says
//   select.kv-preset              the models of the presets, and "custom" (in the page's words):
//                                 it names the preset whose MODEL inputs the fields hold (any length)
//   input.kv-input[data-name=N]   the field of input N (kv_calculator.py's INPUTS), in its label;
//                                 aria-invalid="true" while its text is not a valid value
//   .kv-output[data-name=N]       the text of output N (describe's keys)
//   .kv-status                    a polite live region: a one-sentence summary, or what is wrong
//                                 with the inputs (the outputs then keep the last valid inputs')

// --- words ----------------------------------------------------------------------------------
// One table per language, with the same keys (tests/library/test_widget_words.py checks
// them). A word "{name}" in a text is filled in by `say`. Numbers, units (MiB, GiB) and math
// (h, g, d_k) are written as they are in every language; English is kv_calculator.py's.

export const WORDS = {
  en: {
    inputs: { // in the order shown: kv_calculator.py's INPUTS
      layers: "layers",
      query_heads: "query heads h",
      kv_heads: "key-value heads g",
      head_size: "head size d_k",
      length: "length n (tokens)",
      batch: "batch b (sequences)",
      bytes_per_number: "bytes per number",
      parameters: "parameters (weights)",
      memory_gib: "memory (GiB)",
    },
    outputs: { // in the order shown: describe's keys
      cache_per_token: "cache per token, all layers",
      cache_per_sequence: "cache per sequence of n tokens",
      cache: "cache of the batch",
      weights: "weights, read once per step",
      step: "bytes read per decoding step",
      cache_share: "the cache's share of them",
      multi_head_cache: "cache of the batch with g = h",
      largest_batch: "largest batch that fits in memory",
    },
    model: "model",
    custom: "custom",
    hint: "bytes per number: 4 for float32, 2 for 16-bit numbers, 1 for 8-bit. A model from the menu "
      + "sets its layers, heads, head size, context length and parameters.",
    caption: "what the cache costs",
    legendWeights: "weights",
    legendCache: "cache",
    bytes: "{n} bytes",
    sized: "{size} ({exact})",
    sequence: "{n} sequence",
    sequences: "{n} sequences",
    noneWeights: "none: the weights alone do not fit",
    noneCache: "none: one sequence's cache does not fit beside the weights",
    summary: "A decoding step reads {step}, {share} of it the cache; {fits}.",
    fitsNone: "no batch fits in {memory} GiB",
    fitsAtMost: "at most {batch} of {length} tokens fit in {memory} GiB",
    positive: "{label} must be a positive whole number",
    atMost: "{label} must be at most {most}",
    heads: "{h} query heads cannot be shared equally by {g} key-value heads: "
      + "the number of query heads must be a multiple of the number of key-value heads",
    stale: "{wrong}. The results below are for the last valid inputs.",
  },
  ja: {
    inputs: {
      layers: "層数",
      query_heads: "クエリヘッド数 h",
      kv_heads: "KVヘッド数 g",
      head_size: "ヘッドの幅 d_k",
      length: "系列長 n（トークン）",
      batch: "バッチ b（系列）",
      bytes_per_number: "1数値あたりのバイト数",
      parameters: "パラメータ数（重み）",
      memory_gib: "メモリ（GiB）",
    },
    outputs: {
      cache_per_token: "1トークンあたりのキャッシュ（全層）",
      cache_per_sequence: "n トークンの系列1つあたりのキャッシュ",
      cache: "バッチ全体のキャッシュ",
      weights: "重み（1ステップに1回読む）",
      step: "デコード1ステップで読むバイト数",
      cache_share: "そのうちキャッシュの割合",
      multi_head_cache: "g = h のときのバッチ全体のキャッシュ",
      largest_batch: "メモリに収まる最大のバッチ",
    },
    model: "モデル",
    custom: "カスタム",
    hint: "1数値あたりのバイト数は、float32 なら 4、16ビットなら 2、8ビットなら 1。メニューでモデルを"
      + "選ぶと、層数、ヘッド数、ヘッドの幅、コンテキスト長、パラメータ数が設定されます。",
    caption: "KVキャッシュのコスト",
    legendWeights: "重み",
    legendCache: "キャッシュ",
    bytes: "{n} バイト",
    sized: "{size}（{exact}）",
    sequence: "{n} 系列",
    sequences: "{n} 系列",
    noneWeights: "なし: 重みだけでメモリに収まりません",
    noneCache: "なし: 重みを置いた残りに、系列ひとつ分のキャッシュも収まりません",
    summary: "デコードの1ステップで {step} を読み込み、そのうち {share} がキャッシュです。{fits}。",
    fitsNone: "{memory} GiB にはどのバッチも収まりません",
    fitsAtMost: "{length} トークンの系列は、{memory} GiB に最大 {batch}まで収まります",
    positive: "{label}は正の整数にしてください",
    atMost: "{label}は {most} 以下にしてください",
    heads: "クエリヘッド{h}個を KVヘッド{g}個で均等に分けられません。"
      + "クエリヘッド数は KVヘッド数の倍数でなければなりません",
    stale: "{wrong}。下の結果は、最後に有効だった入力のものです。",
  },
};

// The words of the page around `element`: Japanese inside an element whose lang is "ja" or
// "ja-…", English elsewhere. An element not yet in the page reads the page's own language.
export function wordsFor(element) {
  const holder = element.closest("[lang]") || (element.isConnected ? null : document.documentElement);
  return /^ja(-|$)/i.test(holder?.getAttribute("lang") || "") ? WORDS.ja : WORDS.en;
}

// `text` with each "{name}" replaced by values[name] (inserted once, never read as words).
function say(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

// The inputs, in the order shown, with their labels (kv_calculator.py's INPUTS).
export const INPUTS = Object.entries(WORDS.en.inputs);

// The outputs, in the order shown, with their labels (describe's keys).
export const OUTPUTS = Object.entries(WORDS.en.outputs);

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER; // 2**53 - 1, as kv_calculator.SAFE_INTEGER
const GIB = 2n ** 30n;
const UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

// --- budget: mirrors kv_calculator.py ------------------------------------------------------

// What is wrong with the inputs `s` ({name: number}), in the words `w`, or null if nothing is.
// The English words of the heads' rule are rules.check_kv_heads's.
export function checkInputs(s, w = WORDS.en) {
  for (const [name] of INPUTS) {
    const v = s[name], label = w.inputs[name];
    if (!Number.isInteger(v) || v < 1) return say(w.positive, { label });
    if (v > SAFE_INTEGER) return say(w.atMost, { label, most: withCommas(BigInt(SAFE_INTEGER)) });
  }
  if (s.query_heads % s.kv_heads !== 0) return say(w.heads, { h: s.query_heads, g: s.kv_heads });
  return null;
}

// decoding_budget: every value a BigInt, in bytes (largest_batch in sequences).
export function decodingBudget(s) {
  const v = Object.fromEntries(INPUTS.map(([name]) => [name, BigInt(s[name])]));
  const perToken = 2n * v.layers * v.kv_heads * v.head_size * v.bytes_per_number;
  const perSequence = perToken * v.length;
  const cache = perSequence * v.batch;
  const weights = v.parameters * v.bytes_per_number;
  const memory = v.memory_gib * GIB;
  const room = memory > weights ? memory - weights : 0n;
  return {
    cache_per_token: perToken,
    cache_per_sequence: perSequence,
    cache,
    weights,
    step: weights + cache,
    multi_head_cache: (cache / v.kv_heads) * v.query_heads,
    memory,
    largest_batch: room / perSequence,
  };
}

function withCommas(n) {
  return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// numerator / denominator to `digits` decimals, halves rounded up, from BigInts only (_rounded).
function rounded(numerator, denominator, digits) {
  const unit = 10n ** BigInt(digits);
  const scaled = (2n * numerator * unit + denominator) / (2n * denominator);
  const whole = withCommas(scaled / unit);
  return digits ? `${whole}.${(scaled % unit).toString().padStart(digits, "0")}` : whole;
}

// n bytes in the largest binary unit it reaches, to two decimals ("288.00 MiB"); null below 1 KiB.
function inUnits(n) {
  if (n < 1024n) return null;
  let power = 1;
  while (power < UNITS.length && n >= 1024n ** BigInt(power + 1)) power += 1;
  return `${rounded(n, 1024n ** BigInt(power), 2)} ${UNITS[power - 1]}`;
}

// format_bytes: "288.00 MiB (301,989,888 bytes)", in the words `w`.
export function formatBytes(n, w = WORDS.en) {
  const exact = say(w.bytes, { n: withCommas(n) }), size = inUnits(n);
  return size === null ? exact : say(w.sized, { size, exact });
}

// describe: the text of each output, in the words `w`.
export function describe(b, w = WORDS.en) {
  let largest;
  if (b.memory < b.weights) largest = w.noneWeights;
  else if (b.largest_batch === 0n) largest = w.noneCache;
  else largest = say(b.largest_batch > 1n ? w.sequences : w.sequence, { n: withCommas(b.largest_batch) });
  return {
    cache_per_token: formatBytes(b.cache_per_token, w),
    cache_per_sequence: formatBytes(b.cache_per_sequence, w),
    cache: formatBytes(b.cache, w),
    weights: formatBytes(b.weights, w),
    step: formatBytes(b.step, w),
    cache_share: `${rounded(100n * b.cache, b.step, 1)} %`,
    multi_head_cache: formatBytes(b.multi_head_cache, w),
    largest_batch: largest,
  };
}

// What makes a model: the inputs a preset sets besides the length (its context, which the reader
// may shorten without changing the model).
export const MODEL = ["layers", "query_heads", "kv_heads", "head_size", "parameters"];

// The preset whose model the inputs `s` describe, or "" (custom).
function presetOf(presets, s) {
  const found = Object.entries(presets).find(([, values]) => MODEL.every((name) => s[name] === values[name]));
  return found ? found[0] : "";
}

// --- form -----------------------------------------------------------------------------------

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child); // strings become Text nodes
  return node;
}

// A field's text as an input value: a whole number written in digits, else NaN.
function parsed(text) {
  const t = text.trim();
  return /^[0-9]+$/.test(t) ? Number(t) : NaN;
}

let views = 0; // ids unique on the page, however many calculators it shows

function buildForm(model, id, w) {
  const presets = model.get("presets");
  const select = h("select", { className: "kv-preset" },
    ...Object.keys(presets).map((name) => h("option", { value: name }, name)),
    h("option", { value: "" }, w.custom));
  const fields = {};
  const labels = INPUTS.map(([name]) => {
    const input = h("input", { type: "number", min: "1", step: "1", className: "kv-input" });
    input.dataset.name = name;
    input.setAttribute("inputmode", "numeric");
    input.setAttribute("aria-describedby", `${id}-status`);
    fields[name] = input;
    return h("label", { className: "kv-field" }, h("span", {}, w.inputs[name]), input);
  });
  const grid = h("div", { className: "kv-fields" }, ...labels);
  const top = h("label", { className: "kv-field kv-model" }, h("span", {}, w.model), select);
  const hint = h("p", { className: "kv-hint" }, w.hint);
  return { nodes: [top, grid, hint], select, fields };
}

// --- results --------------------------------------------------------------------------------

function buildResults(w) {
  const cells = {};
  const rows = OUTPUTS.map(([name]) => {
    const cell = h("td", { className: "kv-output" });
    cell.dataset.name = name;
    cells[name] = cell;
    return h("tr", {}, h("th", { scope: "row" }, w.outputs[name]), cell);
  });
  const table = h("table", { className: "kv-results" },
    h("caption", {}, w.caption), h("tbody", {}, ...rows));
  // the bytes of one step: the weights' part and the cache's, side by side (the text says it all)
  const weights = h("span", { className: "kv-bar-weights" });
  const cache = h("span", { className: "kv-bar-cache" });
  const bar = h("div", { className: "kv-bar" }, weights, cache);
  bar.setAttribute("aria-hidden", "true");
  const legend = h("div", { className: "kv-legend" },
    h("span", {}, h("span", { className: "kv-swatch kv-bar-weights" }), w.legendWeights),
    h("span", {}, h("span", { className: "kv-swatch kv-bar-cache" }), w.legendCache));
  legend.setAttribute("aria-hidden", "true");
  return { nodes: [table, bar, legend], cells, weights, cache };
}

// The status line: the step's bytes in their unit, the cache's share, and what fits.
function summary(s, b, text, w) {
  const fits = b.memory < b.weights || b.largest_batch === 0n ? say(w.fitsNone, { memory: s.memory_gib })
    : say(w.fitsAtMost, { batch: text.largest_batch, length: withCommas(BigInt(s.length)),
      memory: withCommas(BigInt(s.memory_gib)) });
  return say(w.summary, { step: inUnits(b.step) ?? text.step, share: text.cache_share, fits });
}

// --- render ---------------------------------------------------------------------------------

// Writes traits and saves them to the kernel in one message, so that Python checks them together
// (a preset changes the heads and the key-value heads at once). On a static page the host has no
// kernel and saving throws; after that it is not tried again.
function modelWriter(model) {
  let syncable = true;
  return (values) => {
    for (const [name, value] of Object.entries(values)) model.set(name, value);
    if (!syncable) return;
    try {
      model.save_changes();
    } catch (err) {
      if (String(err).includes("no comm")) syncable = false; else throw err;
    }
  };
}

function render({ model, el }) {
  const id = `kv-calculator-${++views}`;
  const w = wordsFor(el);
  const write = modelWriter(model);
  const form = buildForm(model, id, w);
  const results = buildResults(w);
  const status = h("p", { className: "kv-status", id: `${id}-status` });
  status.setAttribute("aria-live", "polite");
  const api = { model, shown: { budget: {}, text: {} } }; // root.kvCalculator, for tests
  const root = h("div", { className: "kv-widget" }, ...form.nodes, status, ...results.nodes);
  root.dataset.kvCalculator = "";
  root.kvCalculator = api;
  el.replaceChildren(root);

  const current = () => Object.fromEntries(INPUTS.map(([name]) => [name, model.get(name)]));
  let shows = 0;

  // The outputs of the model's inputs (always valid: only valid inputs are written).
  function show() {
    const s = current();
    const budget = decodingBudget(s), text = describe(budget, w);
    for (const [name] of OUTPUTS) {
      if (results.cells[name].textContent !== text[name]) results.cells[name].textContent = text[name];
    }
    const share = Number((1000n * budget.cache) / budget.step) / 10; // width only: the text is exact
    results.weights.style.width = `${100 - share}%`;
    results.cache.style.width = `${share}%`;
    form.select.value = presetOf(model.get("presets"), s);
    status.textContent = summary(s, budget, text, w);
    api.shown = { budget: Object.fromEntries(Object.entries(budget).map(([k, v]) => [k, v.toString()])), text };
    root.dataset.drawn = String(++shows);
  }

  // The fields show the model's inputs; a field whose text already means that value is left
  // alone, so that a reader's typing is not rewritten under the cursor.
  function follow() {
    for (const [name, input] of Object.entries(form.fields)) {
      if (parsed(input.value) !== model.get(name)) input.value = String(model.get(name));
      input.removeAttribute("aria-invalid");
    }
    root.classList.remove("kv-stale");
    show();
  }

  // A field changed: if every field holds a valid value, the changed ones go to the model;
  // otherwise the status says what is wrong and the outputs stay those of the last valid inputs.
  function edited() {
    const s = Object.fromEntries(Object.entries(form.fields).map(([name, input]) => [name, parsed(input.value)]));
    const wrong = checkInputs(s, w);
    for (const [name, input] of Object.entries(form.fields)) {
      const bad = !Number.isInteger(s[name]) || s[name] < 1 || s[name] > SAFE_INTEGER;
      if (bad) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
    }
    if (wrong) {
      status.textContent = say(w.stale, { wrong });
      root.classList.add("kv-stale");
      return;
    }
    root.classList.remove("kv-stale");
    const changed = Object.fromEntries(Object.entries(s).filter(([name, v]) => model.get(name) !== v));
    if (Object.keys(changed).length) write(changed); else show();
  }

  for (const input of Object.values(form.fields)) input.addEventListener("input", edited);
  form.select.addEventListener("change", () => {
    const preset = model.get("presets")[form.select.value];
    if (!preset) return; // "custom" changes nothing
    root.classList.remove("kv-stale");
    write(preset);
  });

  // Python, or another view of the same model, may change any input: the fields follow. Several
  // changes arriving in one message each call follow; the last one shows them all.
  const handlers = INPUTS.map(([name]) => [`change:${name}`, follow]);
  for (const [event, handler] of handlers) model.on(event, handler);
  follow();
  return () => { for (const [event, handler] of handlers) model.off(event, handler); };
}

export default { render };
