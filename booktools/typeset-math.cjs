// Typesets TeX into MathML at build time (the prerendered_math extension runs it), with Temml:
// MathML Core, which the browser lays out itself with the page's math font.
//
// Reads a JSON list of {tex, display} from standard input and writes {html: [...]}: the markup
// of each formula. A formula Temml cannot read stops it with the formula and Temml's message.
const temml = require("temml");

const formulas = JSON.parse(require("fs").readFileSync(0, "utf8"));
const html = formulas.map(({ tex, display }) => {
  try {
    return temml.renderToString(tex, { displayMode: display, throwOnError: true });
  } catch (error) {
    console.error(`cannot typeset ${JSON.stringify(tex)}: ${error.message}`);
    process.exit(1);
  }
});
process.stdout.write(JSON.stringify({ html }));
