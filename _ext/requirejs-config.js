// Loaded (via nb_ipywidgets_js) after require.js and before embed-amd.js on
// pages that contain widgets. Maps the AMD module "anywidget" to our local copy
// so @jupyter-widgets/html-manager never falls back to its CDN. The URL is
// resolved against this script's own URL, so it works from nested pages too.
(function () {
  var base = new URL("./", document.currentScript.src).href; // .../_static/jsdeps/
  window.requirejs.config({
    paths: {
      anywidget: base + "anywidget/index",
      // module.uri of the bundled html-manager -> webpack publicPath for its fonts
      "@jupyter-widgets/html-manager/dist": base + "html-manager",
    },
  });
  window.__jupyter_widgets_assets_path__ = base + "html-manager/";
})();
