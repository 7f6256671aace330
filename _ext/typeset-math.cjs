// Typesets TeX into MathJax's CommonHTML at build time (the prerendered_math extension runs it).
//
// Reads a JSON list of {tex, display} from standard input and writes {html: [...], css}: the
// markup of each formula, with MathML beside it for screen readers, and one stylesheet for all of
// them, whose fonts lie at FONT_URL (the first argument, relative to where the sheet is served).
// A formula MathJax cannot read stops it with the formula and MathJax's message.
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

const fontURL = process.argv[2];
const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
const tex = new TeX({
  // what MathJax's browser component would load on demand, less the loaders themselves, and
  // without noundefined, which would draw an unknown macro in red instead of failing
  packages: AllPackages.filter((name) => !["autoload", "require", "noundefined"].includes(name)),
  formatError: (jax, error) => { throw error; },
});
const document = mathjax.document("", { InputJax: tex, OutputJax: new CHTML({ fontURL }) });

const formulas = JSON.parse(require("fs").readFileSync(0, "utf8"));
const html = formulas.map(({ tex: source, display }) => {
  try {
    const container = document.convert(source, { display });
    // a display formula wider than the column scrolls in its box; focusable, it scrolls by keys
    if (display) adaptor.setAttribute(container, "tabindex", "0");
    return adaptor.outerHTML(container);
  } catch (error) {
    console.error(`cannot typeset ${JSON.stringify(source)}: ${error.message}`);
    process.exit(1);
  }
});
// In a browser MathJax scales formulas to the x-height of the text around them, about 1.2 times
// with the theme's sans-serif fonts; with no text to measure here, one scale serves all.
const scale = 'mjx-container[jax="CHTML"] { font-size: 120%; }';
const css = adaptor.textContent(document.outputJax.styleSheet(document)) + scale;
process.stdout.write(JSON.stringify({ html, css }));
