// Draws a page's widgets on the static site, with no kernel and no widget manager.
//
// myst-nb embeds the widget state that the build's kernel left (a script of type
// application/vnd.jupyter.widget-state+json) and, where a widget was displayed, a view script
// that names its model. Every widget in the book is an anywidget: its front end is an ES module
// carried in the state itself (the traits _esm and _css). This host imports that module and
// calls its render({model, el}) with a model that keeps the traits in the page: the same calls
// anywidget's front end makes in JupyterLab, in a few kilobytes instead of a 3.6 MB manager.
//
// It is a module, which the browser runs once it has read the whole page, before the
// DOMContentLoaded event: all views are drawn at once. (Run as an async module while the page
// was still being read, it drew each view as soon as it was read, but took the main thread in
// turns with the reading: on a phone, a few long tasks more before the page answered.)

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

async function drawView(script, state) {
  const view = JSON.parse(script.textContent);
  const entry = state[view.model_id];
  const el = document.createElement("div");
  el.className = "widget-view";
  script.before(el);
  if (entry?.model_module !== "anywidget") {
    el.textContent = "This widget needs a live Python kernel.";
    return;
  }
  const { model, widget } = await modelFor(view.model_id, entry);
  await widget.render({ model, el });
}

const stateScript = document.querySelector(`script[type="${STATE_TYPE}"]`);
if (stateScript) {
  const { state } = JSON.parse(stateScript.textContent);
  for (const [id, entry] of Object.entries(state)) {
    // a failure is reported once, by the view that waits for the model
    if (entry.model_module === "anywidget") modelFor(id, entry).catch(() => {});
  }
  for (const script of document.querySelectorAll(`script[type="${VIEW_TYPE}"]`)) {
    drawView(script, state).catch((error) => console.error("a widget could not be drawn:", error));
  }
}
