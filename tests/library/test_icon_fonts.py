"""The icon fonts cut to the icons the sheet draws (booktools/icon_fonts.py). (The built book's
sheet and fonts: tests/book/test_book.py.)"""

import shutil
from pathlib import Path

import pydata_sphinx_theme
from fontTools.ttLib import TTFont

from booktools import icon_fonts

THEME_FONTS = next(Path(pydata_sphinx_theme.__file__).parent.rglob("fontawesome/webfonts"))


def test_the_characters_drawn_are_read_from_content_with_its_escapes():
    css = r""".a:before{content:"\f186"} .b::after { content: '\f107 x' } .c{content:"\"\\"}"""
    assert icon_fonts.drawn_characters(css) == {0xF186, 0xF107, ord("x"), ord('"'), ord("\\")}


def test_each_font_is_cut_to_the_icons_drawn_and_the_sheet_points_at_it(tmp_path):
    webfonts = tmp_path / "_static/vendor/fontawesome/webfonts"
    shutil.copytree(THEME_FONTS, webfonts)
    sheet = tmp_path / "_static/styles/book.css"
    face = (
        "@font-face{font-family:Font Awesome\\ 6 Free;font-weight:900;"
        'src:url(../vendor/fontawesome/webfonts/fa-solid-900.woff2) format("woff2"),'
        'url(../vendor/fontawesome/webfonts/fa-solid-900.ttf) format("truetype")}'
    )
    other = '@font-face{font-family:Other;src:url(other.woff2) format("woff2")}'
    css = (
        f'{face}{face}{other}.fa-moon:before{{content:"\\f186"}}.fa-sun:before{{content:"\\f185"}}'
    )
    written = icon_fonts.cut_icon_fonts(css, sheet)
    cut_face = face.split("src:")[0] + 'src:url(icons/fa-solid-900.woff) format("woff")}'
    assert written == f"{cut_face}{cut_face}{other}{css.split(other)[1]}"
    font = TTFont(sheet.parent / "icons/fa-solid-900.woff")
    assert font.flavor == "woff"
    assert set(font.getBestCmap()) == {0xF186, 0xF185}
    whole = (webfonts / "fa-solid-900.woff2").stat().st_size
    assert (sheet.parent / "icons/fa-solid-900.woff").stat().st_size < whole / 20
