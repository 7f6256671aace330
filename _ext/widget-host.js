// Draws a page's widgets on the static site, with no kernel and no widget manager.
//
// myst-nb embeds the widget state that the build's kernel left (a script of type
// application/vnd.jupyter.widget-state+json) and, where a widget was displayed, a view script
// that names its model. Every widget in the book is an anywidget: its front end is an ES module
// carried in the state itself (the traits _esm and _css). This host imports that module and
// calls its render({model, el}) with a model that keeps the traits in the page: the same calls
// anywidget's front end makes in JupyterLab, in a few kilobytes instead of a 3.6 MB manager.
//
// It is an async module placed after the state: it runs while the rest of the page is still being
// parsed, starts importing the front ends at once, and draws each view as soon as the browser has
// read it, without waiting for the rest of the page or for the theme's deferred scripts.

const STATE_TYPE = "application/vnd.jupyter.widget-state+json";
const VIEW_TYPE = "application/vnd.jupyter.widget-view+json";

// The part of anywidget's model API a front end uses. As in the widget manager, set() calls the
// listeners at once; save_changes() and send() have no kernel to talk to.
function pageModel(traits) {
  const listeners = new Map();
  const model = {
    get: (name) => traits[name],
    set(name, value) {
      traits[name] = value;
      for (const callback of [...(listeners.get(`change:${name}`) || [])]) callback(model, value);
      for (const callback of [...(listeners.get("change") || [])]) callback(model);
    },
    on(event, callback) {
      listeners.set(event, [...(listeners.get(event) || []), callback]);
    },
    off(event, callback) {
      listeners.set(event, (listeners.get(event) || []).filter((c) => c !== callback));
    },
    save_changes() {},
    send() {},
  };
  return model;
}

// One import per distinct front end, however many widgets share it. anywidget accepts a default
// export that is the widget ({render, initialize}) or a function that returns it.
const definitions = new Map();
function widgetDefinition(esm) {
  if (!definitions.has(esm)) {
    const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
    definitions.set(esm, import(url).then(async (module) => {
      const widget = module.default ?? module;
      return typeof widget === "function" ? await widget() : widget;
    }));
  }
  return definitions.get(esm);
}

const styles = new Set();
function addStyle(css) {
  if (!css || styles.has(css)) return;
  styles.add(css);
  document.head.append(Object.assign(document.createElement("style"), { textContent: css }));
}

// A model is initialized once, however many views it has.
const models = new Map();
async function modelFor(id, entry) {
  if (!models.has(id)) {
    models.set(id, (async () => {
      const model = pageModel(entry.state);
      addStyle(entry.state._css);
      const widget = await widgetDefinition(entry.state._esm);
      await widget.initialize?.({ model });
      return { model, widget };
    })());
  }
  return models.get(id);
}

async function drawView(view, state) {
  const entry = state[view.model_id];
  const el = document.createElement("div");
  el.className = "widget-view";
  view.script.before(el);
  if (entry?.model_module !== "anywidget") {
    el.textContent = "This widget needs a live Python kernel.";
    return;
  }
  const { model, widget } = await modelFor(view.model_id, entry);
  await widget.render({ model, el });
}

// The view scripts the browser has read so far, each once. A script still being read holds part
// of its JSON, which does not parse: it is taken up at the next call.
const seen = new WeakSet();
function newViews() {
  const views = [];
  for (const script of document.querySelectorAll(`script[type="${VIEW_TYPE}"]`)) {
    if (seen.has(script)) continue;
    try {
      views.push({ script, ...JSON.parse(script.textContent) });
      seen.add(script);
    } catch (error) {
      if (document.readyState !== "loading") throw error;
    }
  }
  return views;
}

const stateScript = document.querySelector(`script[type="${STATE_TYPE}"]`);
if (stateScript) {
  const { state } = JSON.parse(stateScript.textContent);
  for (const [id, entry] of Object.entries(state)) {
    // a failure is reported once, by the view that waits for the model
    if (entry.model_module === "anywidget") modelFor(id, entry).catch(() => {});
  }
  const drawNewViews = () => {
    for (const view of newViews()) {
      drawView(view, state).catch((error) => console.error("a widget could not be drawn:", error));
    }
  };
  drawNewViews();
  if (document.readyState === "loading") {
    const parsing = new MutationObserver(drawNewViews);
    parsing.observe(document.documentElement, { childList: true, subtree: true });
    document.addEventListener("readystatechange", () => {
      parsing.disconnect();
      drawNewViews();
    }, { once: true });
  }
}
