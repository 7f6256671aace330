// The training scrubber (anywidget front end): drawn in the browser from the recorded run.
//
// A slider over the recorded steps; at each, every head's attention on the example sequence
// (one small heatmap per head, the query's row against the keys before it) and the loss curves
// with the step marked. Everything it draws is in the model's traits (scrubber.py), so it works
// on a static page with no kernel; in a live kernel the slider writes `step` back.
//
// Sections, top to bottom: words (WORDS, in English and Japanese), unpack (the packed weights
// of a step, as scrubber.py's weights_at reads them), draw (the heads on canvases, the curves
// in SVG), render (anywidget's entry point).
//
// DOM contract (tests read it):
//   [data-scrubber]             the root; data-drawn counts the redraws
//   root.scrubber.shown         {index, step, weights}: the step shown and its weights
//                               (layers, h, n, n), as drawn; root.scrubber.lastDrawMs the
//                               time the last redraw took
//   input.scrub-slider          the slider (index into the steps), aria-valuetext its step
//   canvas.scrub-head           one per head, role img, its aria-label says which and where
//   .scrub-marker               the line that marks the step on the curves
//   .scrub-status               a polite live region: the step and its losses

// --- words ----------------------------------------------------------------------------------
export const WORDS = {
  en: {
    slider: "training step",
    stepValue: "step {step}",
    curves: "loss on a batch of held-out sequences, nats per token, by training step",
    first: "first occurrences",
    repeat: "repeats",
    chance: "chance",
    axisStep: "step",
    axisLoss: "nats",
    head: "layer {layer}, head {head}",
    headAlt: "Layer {layer}, head {head} at step {step}: each token's attention (rows) on the "
      + "tokens up to it (columns); largest weight of the last token {largest} on position {at}.",
    sequence: "the example sequence, positions 0 to {last}:",
    status: "Step {step}: loss on repeats {repeat} nats, on first occurrences {first} nats.",
  },
  ja: {
    slider: "訓練ステップ",
    stepValue: "ステップ {step}",
    curves: "訓練に使わない系列のバッチでの損失（トークンあたりのナット）、訓練ステップごと",
    first: "初出",
    repeat: "繰り返し",
    chance: "当て推量",
    axisStep: "ステップ",
    axisLoss: "ナット",
    head: "層 {layer}、ヘッド {head}",
    headAlt: "ステップ {step} の層 {layer}・ヘッド {head}：各トークン（行）がそれまでのトークン（列）に"
      + "向ける注目度。最後のトークンの最大の注目度は {largest} で、位置 {at} に向いています。",
    sequence: "例の系列（位置 0 から {last}）：",
    status: "ステップ {step}：繰り返しの損失 {repeat} ナット、初出の損失 {first} ナット。",
  },
};

export function wordsFor(element) {
  const holder = element.closest("[lang]") || (element.isConnected ? null : document.documentElement);
  return /^ja(-|$)/i.test(holder?.getAttribute("lang") || "") ? WORDS.ja : WORDS.en;
}

function say(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

// --- unpack ---------------------------------------------------------------------------------

// The packed lower triangles of one step -> weights[layer][head][query][key], in [0, 1].
export function unpack(packed, layers, heads, n) {
  const out = [];
  let i = 0;
  for (let l = 0; l < layers; l++) {
    const layer = [];
    for (let h = 0; h < heads; h++) {
      const rows = [];
      for (let q = 0; q < n; q++) {
        const row = new Array(n).fill(0);
        for (let k = 0; k <= q; k++) row[k] = packed[i++] / 100;
        rows.push(row);
      }
      layer.push(rows);
    }
    out.push(layer);
  }
  return out;
}

// --- draw -----------------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320, HEIGHT = 150, LEFT = 34, RIGHT = 8, TOP = 8, BOTTOM = 26;

function svg(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

function colour(element, name) {
  return getComputedStyle(element).getPropertyValue(name).trim();
}

// A CSS colour as [r, g, b], read back through a canvas (which takes any colour the computed
// style gives). One small canvas serves every read.
let probe = null;
function parse(css) {
  probe ??= document.createElement("canvas").getContext("2d");
  probe.fillStyle = "#000";
  probe.fillStyle = css;
  const hex = probe.fillStyle;
  if (hex.startsWith("#")) return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return hex.match(/[\d.]+/g).slice(0, 3).map(Number);
}

// One pixel per weight, the canvas scaled up by CSS: the background mixed towards `hot` by the
// weight, the cells above the diagonal (weight 0) the background itself.
function drawHead(canvas, weights, cold, hot) {
  const n = weights.length;
  const context = canvas.getContext("2d");
  const image = context.createImageData(n, n);
  for (let q = 0; q < n; q++) {
    for (let k = 0; k < n; k++) {
      const w = weights[q][k], at = 4 * (q * n + k);
      for (let i = 0; i < 3; i++) image.data[at + i] = Math.round(cold[i] + (hot[i] - cold[i]) * w);
      image.data[at + 3] = 255;
    }
  }
  context.putImageData(image, 0, 0);
}

function curves(model, words) {
  const steps = model.get("steps"), first = model.get("first"), repeat = model.get("repeat");
  const chance = model.get("chance");
  const top = Math.ceil(Math.max(chance, ...first, ...repeat));
  const x = (s) => LEFT + (s / steps[steps.length - 1]) * (WIDTH - LEFT - RIGHT);
  const y = (v) => TOP + (1 - v / top) * (HEIGHT - TOP - BOTTOM);
  const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "scrub-curves", role: "img",
    "aria-label": words.curves });
  chart.append(svg("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(chance), y2: y(chance),
    class: "scrub-chance" }));
  for (const [values, name] of [[first, "scrub-first"], [repeat, "scrub-repeat"]]) {
    chart.append(svg("polyline", { class: name, fill: "none",
      points: values.map((v, i) => `${x(steps[i]).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
  }
  chart.append(svg("line", { x1: LEFT, x2: LEFT, y1: TOP, y2: HEIGHT - BOTTOM, class: "scrub-axis" }));
  chart.append(svg("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: HEIGHT - BOTTOM, y2: HEIGHT - BOTTOM,
    class: "scrub-axis" }));
  const label = (text, attributes) => {
    const node = svg("text", attributes);
    node.textContent = text;
    chart.append(node);
  };
  for (const v of [0, top]) label(String(v), { x: LEFT - 4, y: y(v) + 4, "text-anchor": "end" });
  label(words.axisLoss, { x: LEFT - 4, y: y(top / 2) + 4, "text-anchor": "end" });
  const last = steps[steps.length - 1];
  // the first and last steps' numbers inside the chart, flush with the axis' ends
  label("0", { x: x(0), y: HEIGHT - 10, "text-anchor": "start" });
  label(String(last), { x: x(last), y: HEIGHT - 10, "text-anchor": "end" });
  label(words.axisStep, { x: x(last / 2), y: HEIGHT - 10, "text-anchor": "middle" });
  const marker = svg("line", { y1: TOP, y2: HEIGHT - BOTTOM, class: "scrub-marker" });
  chart.append(marker);
  return { chart, marker, x };
}

function legend(words) {
  const list = document.createElement("p");
  list.className = "scrub-legend";
  for (const [name, text] of [["scrub-first", words.first], ["scrub-repeat", words.repeat],
    ["scrub-chance", words.chance]]) {
    const item = document.createElement("span");
    const swatch = svg("svg", { viewBox: "0 0 24 8", width: 24, height: 8, "aria-hidden": "true" });
    swatch.append(svg("line", { x1: 0, x2: 24, y1: 4, y2: 4, class: name }));
    item.append(swatch, document.createTextNode(text));
    list.append(item);
  }
  return list;
}

// --- render ---------------------------------------------------------------------------------

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "scrub-widget";
  root.dataset.scrubber = "";
  el.append(root);
  const words = wordsFor(el);
  const layers = model.get("layers"), heads = model.get("heads"), tokens = model.get("tokens");
  const steps = model.get("steps"), n = tokens.length;

  const control = document.createElement("label");
  control.className = "scrub-control";
  const name = document.createElement("span");
  name.textContent = words.slider;
  const slider = Object.assign(document.createElement("input"), {
    type: "range", className: "scrub-slider", min: 0, max: steps.length - 1, step: 1 });
  const value = document.createElement("output");
  value.className = "scrub-value";
  control.append(name, slider, value);

  const sequence = document.createElement("p");
  sequence.className = "scrub-sequence";
  sequence.textContent = `${say(words.sequence, { last: n - 1 })} ${tokens.join(" ")}`;

  const { chart, marker, x } = curves(model, words);
  const grid = document.createElement("div");
  grid.className = "scrub-heads";
  const canvases = [];
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const figure = document.createElement("figure");
      const canvas = Object.assign(document.createElement("canvas"), {
        className: "scrub-head", width: n, height: n });
      canvas.setAttribute("role", "img");
      const caption = document.createElement("figcaption");
      caption.textContent = say(words.head, { layer: l + 1, head: h + 1 });
      figure.append(canvas, caption);
      grid.append(figure);
      canvases.push(canvas);
    }
  }
  const status = document.createElement("p");
  status.className = "scrub-status";
  status.setAttribute("aria-live", "polite");
  const plot = document.createElement("div");
  plot.className = "scrub-plot";
  plot.append(chart, legend(words));
  const body = document.createElement("div");
  body.className = "scrub-body";
  body.append(plot, grid);
  root.append(control, sequence, body, status);

  const api = { model, shown: null, lastDrawMs: 0 };
  root.scrubber = api;
  let drawn = 0;

  function draw() {
    const began = performance.now();
    const index = model.get("step"), step = steps[index];
    const weights = unpack(model.get("weights")[index], layers, heads, n);
    const cold = parse(colour(root, "--scrub-cold")), hot = parse(colour(root, "--scrub-hot"));
    canvases.forEach((canvas, j) => {
      const w = weights[Math.floor(j / heads)][j % heads];
      drawHead(canvas, w, cold, hot);
      const lastRow = w[n - 1], largest = Math.max(...lastRow);
      canvas.setAttribute("aria-label", say(words.headAlt, { layer: Math.floor(j / heads) + 1,
        head: (j % heads) + 1, step, largest: largest.toFixed(2), at: lastRow.indexOf(largest) }));
    });
    marker.setAttribute("x1", x(step));
    marker.setAttribute("x2", x(step));
    slider.value = String(index);
    const said = say(words.stepValue, { step });
    slider.setAttribute("aria-valuetext", said);
    value.textContent = said;
    status.textContent = say(words.status, { step, repeat: model.get("repeat")[index].toFixed(2),
      first: model.get("first")[index].toFixed(2) });
    api.shown = { index, step, weights };
    api.lastDrawMs = performance.now() - began;
    root.dataset.drawn = String(++drawn);
  }

  slider.addEventListener("input", () => {
    model.set("step", Number(slider.value));
    model.save_changes();
  });
  model.on("change:step", draw);
  // the colour mode can change while the page is open: redraw in the new colours
  const watcher = new MutationObserver(draw);
  watcher.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  draw();
  return () => {
    watcher.disconnect();
    model.off("change:step", draw);
  };
}

export default { render };
