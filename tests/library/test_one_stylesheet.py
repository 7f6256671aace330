"""One style sheet per page (_ext/one_stylesheet.py): the sheets joined in the pages' order,
their url()s rewritten for the new place, the rules no page can use taken out. (The built pages
link it alone: tests/book/test_book.py.)"""

from types import SimpleNamespace

import one_stylesheet


def test_urls_are_rewritten_for_the_joined_sheet():
    css = "a { background: url(../vendor/x.woff2) } b { src: url('fonts/y.woff') } c { x: url(data:,z) }"
    rebased = one_stylesheet.rebased(css, "_static/styles/theme.css")
    # the joined sheet lies in _static/styles/ too: the first stays, the others move
    assert "url(../vendor/x.woff2)" in rebased
    assert "url('fonts/y.woff')" in rebased
    assert "url(data:,z)" in rebased
    rebased = one_stylesheet.rebased(css, "_static/jsdeps/math.css")
    assert "url(../vendor/x.woff2)" in rebased  # _static/vendor/x.woff2 from _static/styles/
    assert "url('../jsdeps/fonts/y.woff')" in rebased


def test_imported_sheets_are_joined_in_their_place_not_fetched(tmp_path):
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "basic.css").write_text(
        '@import url("more/fonts.css");\n.b { background: url(img/y.png) }'
    )
    (static / "more").mkdir()
    (static / "more" / "fonts.css").write_text("@font-face { src: url(f.woff2) }")
    (static / "styles" / "theme.css").write_text(
        '@import "../basic.css";\n@import url("https://example.org/x.css");\n.a { background: url(x.png) }'
    )
    joined = one_stylesheet.flattened(tmp_path, "_static/styles/theme.css")
    assert joined.index("f.woff2") < joined.index(".b {") < joined.index(".a {")  # in order
    assert "url(../more/f.woff2)" in joined and "url(../img/y.png)" in joined
    assert "url(x.png)" in joined
    assert '@import url("https://example.org/x.css");' in joined  # not a file of the book
    assert "basic.css" not in joined and "fonts.css" not in joined


def test_the_sheet_keeps_the_rules_the_pages_use(tmp_path):
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "styles" / "theme.css").write_text(".used-by-theme { color: red }")
    (static / "styles" / "pydata-sphinx-theme.css").write_text(
        ".unused-component { color: blue } .dropdown-menu.show { display: block }"
    )
    (static / "book.css").write_text(".used-by-page { margin: 0 } #never-there { margin: 1px }")
    (static / "script.js").write_text("element.classList.add('show')")
    (tmp_path / "page.html").write_text(
        '<div class="used-by-theme"><p class="used-by-page dropdown-menu">x</p></div>'
    )
    app = SimpleNamespace(
        outdir=str(tmp_path),
        builder=SimpleNamespace(format="html"),
        env=SimpleNamespace(one_stylesheet_sources=["_static/book.css"]),
    )
    one_stylesheet.write_sheet(app, None)
    sheet = (tmp_path / "_static" / "styles" / "book.css").read_text()
    assert sheet.index(".used-by-theme") < sheet.index(".used-by-page")  # the pages' order
    assert ".dropdown-menu.show" in sheet  # a class a script adds is used
    assert ".unused-component" not in sheet and "#never-there" not in sheet


def test_a_page_links_the_one_sheet_and_no_other():
    app = SimpleNamespace(env=SimpleNamespace(), one_stylesheet_version="123")
    context = {"css_files": ["_static/pygments.css", "https://example.org/x.css"]}
    one_stylesheet.record_sheets(app, "intro", "page.html", context, None)
    assert context["css_files"] == ["https://example.org/x.css", "_static/styles/book.css?v=123"]
    assert context["book_stylesheet"]
    assert app.env.one_stylesheet_sources == ["_static/pygments.css"]
