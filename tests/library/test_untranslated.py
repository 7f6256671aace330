"""A passage without a Japanese translation: shown in English, marked, under the page's notice;
refused, named, where every passage must be translated (the publishing workflow)."""

from types import SimpleNamespace

import edition_language
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from booktools import translation


def page():
    """A page with its title, one translated paragraph and one that is not."""
    doctree = new_document("page", get_default_settings(Parser))
    section = nodes.section("", nodes.title(text="見出し"))
    done, left = nodes.paragraph(text="訳した段落"), nodes.paragraph(text="Left in English.")
    section += [done, left]
    doctree += section
    doctree.untranslated_messages = [(left, "Left in English.")]
    return doctree, section, left


APP = SimpleNamespace(config=SimpleNamespace(language="ja"))


def test_an_untranslated_passage_is_marked_english_under_the_notice(monkeypatch):
    monkeypatch.delenv("BOOK_REQUIRE_TRANSLATION", raising=False)
    warned = []
    monkeypatch.setattr(edition_language, "warn_untranslated", lambda *a: warned.append(a))
    doctree, section, left = page()
    edition_language.report_untranslated(APP, doctree)
    assert warned == []
    assert {"untranslated", "language-en"} <= set(left["classes"])
    notice = section[1]  # just below the title
    assert isinstance(notice, nodes.note) and "untranslated-notice" in notice["classes"]
    assert notice.astext() == edition_language.NOTICE["ja"]


def test_a_page_with_everything_translated_has_no_notice(monkeypatch):
    monkeypatch.delenv("BOOK_REQUIRE_TRANSLATION", raising=False)
    doctree, _section, left = page()
    doctree.untranslated_messages = []
    edition_language.report_untranslated(APP, doctree)
    assert not list(doctree.findall(nodes.note)) and "untranslated" not in left["classes"]


def test_the_publishing_build_warns_naming_the_passage_and_marks_nothing(monkeypatch):
    monkeypatch.setenv("BOOK_REQUIRE_TRANSLATION", "1")
    warned = []
    monkeypatch.setattr(edition_language, "warn_untranslated", lambda *a: warned.append(a))
    doctree, _section, left = page()
    edition_language.report_untranslated(APP, doctree)
    assert [(language, message) for language, _node, message in warned] == [
        ("ja", "Left in English.")
    ]
    assert not list(doctree.findall(nodes.note)) and "untranslated" not in left["classes"]


def test_the_report_counts_what_a_catalogue_leaves_untranslated(monkeypatch, tmp_path):
    po = tmp_path / "page.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n\nmsgid "Done."\nmsgstr "済み。"\n\nmsgid "Left."\nmsgstr ""\n\n'
        '#, fuzzy\nmsgid "Changed."\nmsgstr "古い訳。"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(translation, "catalogue_path", lambda name: po)
    assert translation.untranslated("page") == ["Left.", "Changed."]
    monkeypatch.setattr(translation, "recorded", lambda: {"page": {translation.key("Changed.")}})
    assert translation.lost("page") == ["Changed."]
