"""Every internal of another package that the book's own pieces rely on, one test each.

The extensions of _ext/, _templates/layout.html and _static/theme-controls.js reach past some
packages' documented interfaces (a private method, a writer's markup, a theme's template
blocks); each names in its docstring or header what it relies on and why. When an upgrade of a
pinned package moves one of these, the test of that internal fails here with a message naming
the package's module and the book's piece, instead of a page that quietly renders wrong."""

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest
from docutils import nodes

from tests.support.book import ROOT

THIS = Path(__file__).read_text(encoding="utf-8")


def moved(internal: str, piece: str) -> str:
    return (
        f"{internal} is not as {piece} relies on it: read {piece}'s docstring, then change it "
        "or pin the package back"
    )


def source(thing) -> str:
    return inspect.getsource(thing)


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_deferred_scripts_rebuilds_sphinx_script_assets():
    from sphinx.builders.html._assets import _JavaScript

    script = _JavaScript("x.js", priority=500, defer="defer")
    assert (script.filename, script.priority, script.attributes) == (
        "x.js",
        500,
        {"defer": "defer"},
    ), moved("sphinx.builders.html._assets._JavaScript", "_ext/deferred_scripts.py")


def test_numbered_references_wraps_the_standard_domains_numref_resolver():
    from sphinx.domains.std import StandardDomain

    resolve = getattr(StandardDomain, "_resolve_numref_xref", None)
    assert resolve is not None and parameters(resolve)[:2] == ["self", "env"], moved(
        "sphinx.domains.std.StandardDomain._resolve_numref_xref", "_ext/numbered_references.py"
    )
    assert "env.get_doctree(" in source(resolve), moved(
        "StandardDomain._resolve_numref_xref's env.get_doctree", "_ext/numbered_references.py"
    )


def test_translated_outputs_wraps_myst_nbs_renderer_of_outputs():
    from myst_nb.core.render import MimeData, NbElementRenderer

    here = "_ext/translated_outputs.py"
    render = getattr(NbElementRenderer, "render_mime_type", None)
    assert render is not None and parameters(render) == ["self", "data"], moved(
        "myst_nb.core.render.NbElementRenderer.render_mime_type", here
    )
    assert {"content", "output_metadata", "mime_type"} <= {
        field.name for field in dataclasses.fields(MimeData)
    }, moved("myst_nb.core.render.MimeData's fields", here)
    # it hands images and HTML on to the renderers that read the content it replaced
    calls = ("self.render_image(data)", "self.render_text_html(data)")
    assert all(call in source(render) for call in calls), moved(
        "NbElementRenderer.render_mime_type's calls of render_image and render_text_html", here
    )
    assert "data.content" in source(NbElementRenderer.render_image), moved(
        "NbElementRenderer.render_image's reading of data.content", here
    )
    assert "data.string" in source(NbElementRenderer.render_text_html), moved(
        "NbElementRenderer.render_text_html's reading of data.string", here
    )


def test_bibliography_plugins_registers_where_pybtex_looks_first():
    import pybtex.plugin

    assert "force" in parameters(pybtex.plugin.register_plugin), moved(
        "pybtex.plugin.register_plugin(force=)", "_ext/bibliography_plugins.py"
    )
    lookup = source(pybtex.plugin._load_entry_point)
    assert lookup.index("_RUNTIME_PLUGINS") < lookup.index("entry_points("), moved(
        "pybtex.plugin._load_entry_point (registered plugins before entry points)",
        "_ext/bibliography_plugins.py",
    )


def test_single_page_lends_handlers_through_the_registry():
    from sphinx.registry import SphinxComponentRegistry

    assert isinstance(SphinxComponentRegistry().translation_handlers, dict), moved(
        "sphinx.registry.SphinxComponentRegistry.translation_handlers", "_ext/single_page.py"
    )


def test_dropdown_details_replaces_the_admonition_and_solution_visitors():
    from sphinx.locale import admonitionlabels
    from sphinx.writers.html5 import HTML5Translator
    from sphinx_exercise import nodes as exercise_nodes

    for name in ("solution_node", "visit_solution_node", "depart_solution_node"):
        assert hasattr(exercise_nodes, name), moved(
            f"sphinx_exercise.nodes.{name}", "_ext/dropdown_details.py"
        )
    assert parameters(HTML5Translator.visit_admonition) == ["self", "node", "name"], moved(
        "sphinx.writers.html5.HTML5Translator.visit_admonition(node, name)",
        "_ext/dropdown_details.py",
    )
    assert "note" in admonitionlabels, moved(
        "sphinx.locale.admonitionlabels", "_ext/dropdown_details.py"
    )


def test_lazy_images_adds_attributes_where_the_writer_writes_the_img_tag():
    from docutils.writers._html_base import HTMLTranslator
    from sphinx.writers.html5 import HTML5Translator

    assert "self.emptytag(node, 'img'" in source(HTMLTranslator.visit_image), moved(
        "docutils.writers._html_base.HTMLTranslator.visit_image (its <img> through emptytag)",
        "_ext/lazy_images.py",
    )
    assert "super().visit_image(node)" in source(HTML5Translator.visit_image), moved(
        "sphinx.writers.html5.HTML5Translator.visit_image", "_ext/lazy_images.py"
    )


def test_translated_messages_replaces_mysts_make_document():
    from myst_parser.mdit_to_docutils import base

    assert parameters(base.make_document) == ["source_path", "parser_cls"], moved(
        "myst_parser.mdit_to_docutils.base.make_document", "_ext/translated_messages.py"
    )
    assert 'options.get("document", make_document())' in source(base), moved(
        "myst_parser.mdit_to_docutils.base (the module-level make_document it calls)",
        "_ext/translated_messages.py",
    )
    assert "self._document" in source(nodes.Node), moved(
        "docutils.nodes.Node._document", "_ext/translated_messages.py"
    )


def test_translatable_text_extends_sphinx_exercise_and_orders_around_locale():
    from sphinx.transforms.i18n import Locale
    from sphinx_exercise import directive
    from sphinx_exercise import nodes as exercise_nodes
    from sphinx_exercise.post_transforms import ResolveTitlesInExercises
    from sphinx_external_toc.events import InsertToctrees

    piece = "_ext/translatable_text.py"
    for name in ("ExerciseDirective", "ExerciseStartDirective"):
        assert hasattr(getattr(directive, name, None), "run"), moved(
            f"sphinx_exercise.directive.{name}", piece
        )
    for name in ("exercise_subtitle", "exercise_title", "solution_title"):
        assert hasattr(exercise_nodes, name), moved(f"sphinx_exercise.nodes.{name}", piece)
    priorities = (
        Locale.default_priority,
        ResolveTitlesInExercises.default_priority,
        InsertToctrees.default_priority,
    )
    assert priorities == (20, 20, 100), moved(
        f"the priorities of Locale, ResolveTitlesInExercises and InsertToctrees {priorities}",
        piece,
    )
    import sphinx_exercise

    assert "env.sphinx_exercise_registry" in source(sphinx_exercise), moved(
        "sphinx_exercise's env.sphinx_exercise_registry", piece
    )


def test_widget_host_reads_myst_nbs_widget_state():
    from myst_nb.sphinx_ import NbMetadataCollector

    assert parameters(NbMetadataCollector.get_js_files) == ["env", "docname"], moved(
        "myst_nb.sphinx_.NbMetadataCollector.get_js_files", "_ext/widget_host.py"
    )


def test_prerendered_math_reuses_the_mathjax_writer():
    from sphinx.ext import mathjax

    for name in ("html_visit_math", "html_visit_displaymath"):
        assert callable(getattr(mathjax, name, None)), moved(
            f"sphinx.ext.mathjax.{name}", "_ext/prerendered_math.py"
        )


def test_launch_buttons_and_notebooks_fill_the_themes_header_buttons():
    import sphinx_book_theme
    from sphinx.util.i18n import CatalogInfo
    from sphinx_book_theme import header_buttons

    assert 'context["header_buttons"] = []' in source(header_buttons.prep_header_buttons), moved(
        "sphinx_book_theme.header_buttons.prep_header_buttons", "_ext/launch_buttons.py"
    )
    assert "add_header_buttons, priority=501" in source(sphinx_book_theme), moved(
        "sphinx_book_theme's header buttons at priority 501", "_ext/launch_buttons.py"
    )
    assert 'context.get("ipynb_source")' in source(header_buttons.add_header_buttons), moved(
        "sphinx_book_theme.header_buttons.add_header_buttons (ipynb_source)", "_ext/notebooks.py"
    )
    assert parameters(CatalogInfo)[:3] == ["base_dir", "domain", "charset"] and all(
        hasattr(CatalogInfo, name) for name in ("is_outdated", "write_mo", "po_path")
    ), moved("sphinx.util.i18n.CatalogInfo", "_ext/launch_buttons.py")


def test_edition_language_uses_sphinx_gettext_helpers():
    from sphinx import locale
    from sphinx.util import i18n
    from sphinx.util import nodes as sphinx_nodes

    assert parameters(locale.init)[:3] == ["locale_dirs", "language", "catalog"], moved(
        "sphinx.locale.init", "_ext/edition_language.py"
    )
    assert parameters(i18n.docname_to_domain) == ["docname", "compaction"], moved(
        "sphinx.util.i18n.docname_to_domain", "_ext/edition_language.py"
    )
    assert callable(sphinx_nodes.extract_messages), moved(
        "sphinx.util.nodes.extract_messages", "_ext/edition_language.py"
    )


def test_citation_list_finds_the_writers_citation_markup():
    import citation_list
    from docutils.writers import _html_base

    written = source(_html_base)
    assert citation_list.CITATION_LIST in written and "doc-biblioentry" in written, moved(
        "docutils.writers._html_base's citation list markup", "_ext/citation_list.py"
    )


def test_open_graph_hands_its_description_through_the_page_metadata():
    import sphinxext.opengraph

    written = source(sphinxext.opengraph)
    assert "fields = context['meta']" in written and "k.startswith('og:')" in written, moved(
        "sphinxext.opengraph.get_tags (og: fields of context['meta'])", "_ext/open_graph.py"
    )


def test_student_edition_cuts_the_environments_contents_menus():
    from sphinx.environment import BuildEnvironment

    assert "self.tocs" in source(BuildEnvironment.__init__), moved(
        "sphinx.environment.BuildEnvironment.tocs", "_ext/student_edition.py"
    )


def theme_file(package: str, *parts: str):
    """A file of an installed theme's templates or static files."""
    return Path(importlib.import_module(package).__file__).parent.joinpath("theme", package, *parts)


def test_layout_overrides_blocks_the_themes_have():
    pydata = theme_file("pydata_sphinx_theme", "layout.html").read_text(encoding="utf-8")
    for block in ("css", "extrahead", "docs_body", "scripts_end"):
        assert re.search(rf"{{%-? block {block} %}}", pydata), moved(
            f"pydata_sphinx_theme's layout.html block {block}", "_templates/layout.html"
        )
    book = theme_file("sphinx_book_theme", "layout.html").read_text(encoding="utf-8")
    assert 'id="jb-print-docs-body"' in book, moved(
        "sphinx_book_theme's layout.html block docs_body", "_templates/layout.html"
    )


def test_one_stylesheet_and_layout_replace_the_themes_assets():
    import one_stylesheet

    macros = theme_file("pydata_sphinx_theme", "static", "webpack-macros.html").read_text(
        encoding="utf-8"
    )
    head = macros.split("{% macro head_pre_assets() %}")[1].split("{% endmacro %}")[0]
    for sheet in one_stylesheet.THEME_SHEETS:
        assert sheet in head, moved(
            f"pydata_sphinx_theme's head_pre_assets ({sheet})", "_ext/one_stylesheet.py"
        )
    for script in one_stylesheet.NOT_CONTENT:
        assert f"_static/scripts/{script}" in macros, moved(
            f"pydata_sphinx_theme's bundles ({script})", "_templates/layout.html"
        )


def test_theme_controls_drive_the_themes_markup_and_stored_mode():
    controls = (ROOT / "_static" / "theme-controls.js").read_text(encoding="utf-8")
    bundle = theme_file(
        "pydata_sphinx_theme", "static", "scripts", "pydata-sphinx-theme.js"
    ).read_text(encoding="utf-8")
    for key in ('localStorage.setItem("mode"', 'localStorage.setItem("theme"'):
        assert key in bundle, moved(f"pydata-sphinx-theme.js's {key}", "_static/theme-controls.js")
    templates = "".join(
        path.read_text(encoding="utf-8")
        for folder in (theme_file("pydata_sphinx_theme"), theme_file("sphinx_book_theme"))
        for path in folder.rglob("*.html")
    )
    for element in re.findall(r'getElementById\("([\w-]+)"\)', controls):
        assert f'id="{element}"' in templates, moved(
            f"the themes' templates' #{element}", "_static/theme-controls.js"
        )


def test_translated_formulas_run_before_sphinxs_locale_which_then_skips_the_formula():
    from sphinx.transforms.i18n import Locale
    from sphinx.util.nodes import LITERAL_TYPE_NODES, extract_messages, is_translatable
    from translatable_text import TranslatedFormulas

    piece = "_ext/translatable_text.py"
    assert TranslatedFormulas.default_priority < Locale.default_priority, moved(
        "sphinx.transforms.i18n.Locale's priority", piece
    )
    assert nodes.math_block in LITERAL_TYPE_NODES, moved(
        "sphinx.util.nodes.LITERAL_TYPE_NODES", piece
    )
    assert "node.rawsource" in source(extract_messages), moved(
        "sphinx.util.nodes.extract_messages's message of a literal block", piece
    )
    translated = nodes.math_block("y = 1", "y = 1", translatable=False)
    untouched = nodes.math_block("y = 1", "y = 1")
    translated.source = untouched.source = "chapters/page.md"
    assert is_translatable(untouched) and not is_translatable(translated), moved(
        "sphinx.util.nodes.is_translatable's reading of node['translatable']", piece
    )


@pytest.mark.parametrize(
    "piece",
    sorted((ROOT / "_ext").glob("*.py"))
    + [ROOT / "_templates/layout.html", ROOT / "_static/theme-controls.js"],
    ids=lambda p: p.name,
)
def test_each_piece_names_the_internals_it_relies_on_and_has_their_test(piece):
    """A piece whose header says "Relies on" is named by a test above, and the other way round."""
    name = str(piece.relative_to(ROOT))
    says = "Relies on" in piece.read_text(encoding="utf-8").split("\n\n\n")[0]
    tested = f'"{name}"' in THIS
    assert says == tested, (
        f"{name} says it relies on an internal that no test here checks"
        if says
        else f"{name} is checked here but its header does not say what it relies on (Relies on ...)"
    )
