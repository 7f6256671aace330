"""The exercise checks speak the student's language (``attnkit/exercises/wording.py``).

Every message a student can read is a template given to ``_()``; the Japanese catalogue holds
each template of the sources and no other, every one translated, none fuzzy, with the same
fields; and every verdict of every check, right answer or wrong, reads in Japanese when
``ATTNKIT_LANGUAGE=ja``.
"""

import ast
import gettext
import re
import string
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import translated_verdicts
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import attnkit.exercises
from attnkit.exercises import check_softmax, wording
from booktools import translation
from tests.support.answers import every_answers, seeds
from tests.support.catalogues import compiled_catalogue
from tests.support.terms import terms

EXERCISES = Path(attnkit.exercises.__file__).parent
CATALOGUE = EXERCISES / "locales" / "ja" / "LC_MESSAGES" / "checks.po"


def module_trees():
    return {path.name: ast.parse(path.read_text()) for path in sorted(EXERCISES.glob("*.py"))}


def is_translated(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_"


def is_message(node) -> bool:
    """A template, a name that holds one, or a template with more added."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return is_message(node.left)
    if isinstance(node, ast.IfExp):
        return is_message(node.body) and is_message(node.orelse)
    return is_translated(node) or isinstance(node, ast.Name)


def decorated_as_check(function) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "check")
        or (isinstance(d, ast.Call) and getattr(d.func, "id", None) == "check")
        for d in function.decorator_list
    )


def test_every_message_is_a_template_given_to_the_catalogue():
    untranslated = []
    for name, tree in module_trees().items():
        for node in ast.walk(tree):
            if is_translated(node):
                template = node.args[0] if len(node.args) == 1 else None
                if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
                    untranslated.append((name, node.lineno, "_() of no plain string"))
                    continue
                fields = {f for _, f, _, _ in string.Formatter().parse(template.value) if f}
                arguments = {k.arg for k in node.keywords}  # None: a **mapping of them
                if (None not in arguments and fields != arguments) or "" in fields:
                    untranslated.append((name, node.lineno, "fields and arguments differ"))
            # what a check fails with: a template, or a name that holds one
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("Failed", "Raised")
                and not is_message(node.args[0])
            ):
                untranslated.append((name, node.lineno, "Failed() of no template"))
            # what a check passes with
            if isinstance(node, ast.FunctionDef) and decorated_as_check(node):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Return) and not is_translated(inner.value):
                        untranslated.append((name, inner.lineno, "a verdict of no template"))
    assert untranslated == []


def template_fields(text: str) -> Counter:
    return Counter((f, spec) for _, f, spec, _ in string.Formatter().parse(text) if f is not None)


def test_the_japanese_catalogue_holds_every_template_translated_with_its_fields():
    extracted = {
        message
        for _, _, message, _, _ in extract_from_dir(
            EXERCISES, method_map=[("**.py", "python")], keywords={"_": None}
        )
    }
    with open(CATALOGUE, "rb") as file:
        catalogue = read_po(file)
    entries = {m.id: m for m in catalogue if m.id}
    assert not extracted - entries.keys(), "new messages: run make catalogues, then translate"
    assert not entries.keys() - extracted, "messages no check uses: run make catalogues"
    assert not catalogue.obsolete
    assert not translation.lost("checks"), "published translations lost or fuzzy"
    for message in entries.values() if translation.strict() else []:
        assert message.string, f"untranslated: {message.id!r}"
        assert not message.fuzzy, f"fuzzy (the English changed): {message.id!r}"
        assert template_fields(message.string) == template_fields(message.id), message.id
        assert wording.catalogue("ja").gettext(message.id) == message.string  # read alike here


JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff々]")
FIELD = re.compile(r"\{(\w+)[^{}]*\}")
# The fields that hold a message of their own, written in the reader's language: in Japanese they
# join their neighbours as any Japanese words do. Every other field holds a value (a shape, a
# dtype, numbers), set apart like a Latin word.
MESSAGE_FIELDS = {
    "advice", "called_with", "cause", "culprit", "entry", "example", "far", "helpers", "hint",
    "kind", "lost", "mixed_up", "name", "reason", "result", "scale", "scores", "sliced",
    "stable", "what", "where", "why", "whys",
}  # fmt: skip
# the terms that join a Latin word to Japanese: the glossary's (KVヘッド, one-hotベクトル), and
# the compositions of chapter 9 as its pages write them
LATIN_TERMS = [term.japanese for term in terms() if re.search("[A-Za-z]", term.japanese)] + [
    "Q合成",
    "K合成",
    "V合成",
]


def spacing_breaches(text: str) -> list[str]:
    """Where ``text`` breaks the catalogue's one rule for spaces (review K-5): a Latin word, a
    code span or a field that holds a value stands one space apart from Japanese text on each
    side; a field that holds a message joins it unspaced."""
    for term in LATIN_TERMS:
        text = text.replace(term, "語")
    breaches = []
    for token in re.finditer(r"[!-~]+", text):  # a run of ASCII without a space
        start, end = token.span()
        valued = FIELD.sub(lambda f: "" if f[1] in MESSAGE_FIELDS else "x", token[0])
        if re.search("[A-Za-z]", valued):
            touching = [i for i in (start - 1, end) if 0 <= i < len(text)]
            if any(JAPANESE.match(text[i]) for i in touching):
                breaches.append(f"{token[0]!r} touches Japanese: a space is missing")
        elif not valued and FIELD.search(token[0]):
            apart = [(start - 1, start - 2), (end, end + 1)]
            if any(
                0 <= j < len(text) and text[i] == " " and JAPANESE.match(text[j]) for i, j in apart
            ):
                breaches.append(f"{token[0]!r} holds Japanese: no space beside it")
    return breaches


def test_the_japanese_sets_latin_words_apart_by_one_rule():
    with open(CATALOGUE, "rb") as file:
        catalogue = read_po(file)
    breaches = {
        message.id: spacing_breaches(message.string)
        for message in catalogue
        if message.id and spacing_breaches(message.string)
    }
    assert breaches == {}


def test_the_japanese_joins_clauses_without_a_colon():
    """Japanese prose ends a sentence where English joins two with a colon (review K-4); only the
    verdicts' labels, 正解です： and ✗ 不合格:, keep one."""
    with open(CATALOGUE, "rb") as file:
        catalogue = read_po(file)
    joined = [
        m.id
        for m in catalogue
        if m.id and re.search("(?<!正解です)：|[ぁ-ヿ一-龯]:(?!$)", m.string)
    ]
    assert joined == []


@pytest.mark.parametrize(
    "text, breaches",
    [
        ("float32 の入力", 0),
        ("float32の入力", 1),
        ("クエリ{query}の出力は {should} になる", 1),
        ("{where}、{what}に NaN か inf", 0),
        ("{where} 出力", 1),
        ("KVヘッド j のバリュー", 0),
        ("0/0 になります。1つ", 0),
    ],
)
def test_the_spacing_rule_finds_what_it_should(text, breaches):
    assert len(spacing_breaches(text)) == breaches, spacing_breaches(text)


def test_the_compiled_catalogue_leaves_out_what_is_not_a_translation(tmp_path):
    compiled_catalogue(
        tmp_path,
        "checks",
        [
            "#, python-brace-format",
            'msgid ""',
            '"two lines, {n} \\"quoted\\""',
            'msgstr "二行 {n} \\"引用\\""',
            "",
            "#, fuzzy, python-brace-format",
            'msgid "changed {n}"',
            'msgstr "古い {n}"',
            "",
            'msgid "not yet"',
            'msgstr ""',
        ],
    )
    japanese = gettext.translation("checks", tmp_path, languages=["ja"])
    assert japanese.gettext('two lines, {n} "quoted"') == '二行 {n} "引用"'
    assert japanese.gettext("changed {n}") == "changed {n}"
    assert japanese.gettext("not yet") == "not yet"


@pytest.mark.parametrize(
    "setting, language", [(None, "en"), ("ja", "ja"), ("ja_JP.UTF-8", "ja"), ("xx", "en")]
)
def test_the_language_is_read_from_the_environment(monkeypatch, setting, language):
    if setting is None:
        monkeypatch.delenv(wording.LANGUAGE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(wording.LANGUAGE_VARIABLE, setting)
    assert wording.language() == language
    translated = wording._("the result")
    assert (translated == "the result") == (language == "en")


# every check's reference answer, and each wrong answer in the first dtype it is tried in,
# with the advice that tests/library/test_answers.py finds in its English verdict
VERDICTS = [(a, a.right["reference"], "reference", None, "") for a in every_answers()] + [
    (a, wrong.fn, name, wrong.dtypes[0] if a.float_inputs else None, wrong.advice)
    for a in every_answers()
    for name, wrong in a.wrong.items()
]


@pytest.mark.parametrize(
    "answers, fn, name, dtype, advice",
    VERDICTS,
    ids=[f"{a.name}-{name}-{getattr(d, '__name__', 'all')}" for a, _, name, d, _ in VERDICTS],
)
def test_every_verdict_reads_in_japanese(monkeypatch, answers, fn, name, dtype, advice):
    """Run once, in Japanese: the verdict is Japanese, and its parts (from which the book's
    Japanese pages write the verdicts of cells that ran in English) write it alike in Japanese
    and, in English, as the check says it in English."""
    if dtype is None:
        options = {"seed": seeds(answers.name, name)[0]}
    else:
        options = {"seed": seeds(answers.name, name, dtype.__name__)[0], "dtypes": (dtype,)}
    monkeypatch.setenv(wording.LANGUAGE_VARIABLE, "ja")
    japanese = answers.check(fn, **options)
    assert japanese.passed == (name == "reference")
    assert any("\u3040" <= c <= "\u9fff" for c in japanese.message), japanese.message
    assert repr(japanese).startswith("✓ " if japanese.passed else "✗ 不合格: ")
    assert wording.written_in(japanese.parts, "ja") == japanese.message
    english = wording.written_in(japanese.parts, "en")
    assert english != japanese.message and advice in english, english


def stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_verdict_box_shown_in_english_is_written_again_in_japanese(monkeypatch):
    """As the book's Japanese pages show the verdicts of cells that ran in English."""
    in_language = translated_verdicts.in_language
    monkeypatch.delenv(wording.LANGUAGE_VARIABLE, raising=False)
    boxes = [check_softmax(fn, seed=0)._repr_html_() for fn in (abs, stable_softmax)]
    monkeypatch.setenv(wording.LANGUAGE_VARIABLE, "ja")
    japanese = [check_softmax(fn, seed=0)._repr_html_() for fn in (abs, stable_softmax)]
    page = "<p>a cell</p>{}<p>another</p>{}"
    assert in_language(page.format(*boxes), "ja") == page.format(*japanese)
    assert "✗ 不合格:" in japanese[0] and "正解です" in japanese[1]
