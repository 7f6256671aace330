"""The Japanese edition's catalogues (``locales/ja/LC_MESSAGES/<page>.po``): one per page, every
message once published still translated and not fuzzy (every message, in the publishing
workflow: booktools/translation.py), the MyST markup of each kept (their terms: test_terms.py).

A message is one paragraph, heading, list item, table cell or caption of a page, in its MyST
source form, as Sphinx's gettext builder extracts it (``make catalogues``). Whether the
catalogues still match the English sources is checked where the sources are read, by the
Japanese build itself: a sentence without a translation is a warning there, and the build runs
with -W (``_ext/edition_language.py``; tests/book/test_japanese_edition.py).
"""

import re
from collections import Counter

import pytest
from babel.messages.pofile import read_po

from booktools import translation
from tests.support.book import ROOT, toc_files

LOCALE = ROOT / "locales" / "ja" / "LC_MESSAGES"
# the words of the book's own templates (_templates/), which Sphinx keeps in sphinx.po, and the
# theme's words that its own catalogue lacks (booktheme.po, _ext/launch_buttons.py), and
# sphinx-exercise's words as the book says them (exercise.po, _ext/exercise_labels.py)
CATALOGUES = [*toc_files(), "sphinx", "booktheme", "exercise"]

# The markup a translation must keep as the English has it. Math and roles are taken out of the
# text before the code spans are looked for: both hold backticks.
MARKUP = {
    "display math": re.compile(r"\$\$.*?\$\$", re.S),
    "math": re.compile(r"(?<!\$)\$(?!\$)(?:\\.|[^$\\])+?\$"),
    "role": re.compile(r"\{[\w:+-]+\}`[^`]*`"),
    "code": re.compile(r"``?[^`]+``?"),
    "link target": re.compile(r"\]\(([^)]*)\)"),
    "footnote": re.compile(r"\[\^[^\]]+\]"),
    "substitution": re.compile(r"\{\{[^}]*\}\}"),
    "HTML tag": re.compile(r"</?[a-zA-Z][^>]*>"),
}
TAKEN_OUT = ("display math", "math", "role")
PUNCTUATION = (
    "\u3001\u3002\u300c\u300d\u300e\u300f\uff08\uff09\uff1a\uff1b\uff01\uff1f.,:;!?()[]「」"
)


def stranded_emphasis(text: str) -> bool:
    """Whether a ** of ``text`` cannot do its part: CommonMark opens emphasis only with a run
    not followed by punctuation unless whitespace or punctuation precedes it, and closes it
    only with a run not preceded by punctuation unless whitespace or punctuation follows it
    (``は**「注意」**です`` prints its asterisks; ``は「**注意**」です`` is bold)."""

    def kind(char):
        return (
            "space" if not char or char.isspace() else "punct" if char in PUNCTUATION else "letter"
        )

    runs = [
        i
        for i in range(len(text) - 1)
        if text.startswith("**", i)
        and (i == 0 or text[i - 1] != "*")
        and text[i + 2 : i + 3] != "*"
    ]
    for order, i in enumerate(runs):
        before, after = kind(text[i - 1] if i else ""), kind(text[i + 2 : i + 3])
        opening = order % 2 == 0
        if opening and after == "punct" and before == "letter":
            return True
        if not opening and before == "punct" and after == "letter":
            return True
    return False


def catalogue(name: str):
    with open(LOCALE / f"{name}.po", "rb") as file:
        return read_po(file)


def messages(name: str):
    """The catalogue's messages; none where a new page has no catalogue yet."""
    return translation.entries(name) or []


def role_key(role: str) -> str:
    """A role's name and target: its title, before ``<target>``, may be translated."""
    name, content = role.split("`", 1)
    content = content[:-1]
    if content.endswith(">") and "<" in content:
        content = content[content.rindex("<") + 1 : -1]
    return f"{name}`{content}`"


# words in a formula, such as \text{(each row)}, which a translation puts in its own language; a
# single English word only where it is a word of the sentence (n - \text{length}), never where it
# names a quantity or a code value (d_\text{model}, RoPE_\text{half}), which stays as it is
MATH_WORDS = re.compile(
    r"\\text\{(?:[^{}]*[ (][^{}]*|[^{}]*[^\x00-\x7f][^{}]*|for|otherwise|logits|causal|cache|length)\}"
)
MATH_KINDS = ("display math", "math")
# notation in words in a code span, such as `[head 0's row | head 1's row | ...]`, which a
# translation also puts in its own language (a code span of code stays as it is)
CODE_WORDS = re.compile(r"``?(?:\[head 0's row[^`]*|[^`]*[^\x00-\x7f][^`]*)``?")


def markup(text: str) -> dict[str, Counter]:
    found = {}
    for kind, pattern in MARKUP.items():
        items = pattern.findall(text)
        if kind in MATH_KINDS:
            items = [MATH_WORDS.sub(r"\\text{…}", item) for item in items]
        if kind == "code":
            items = ["`…`" if CODE_WORDS.fullmatch(item) else item for item in items]
        found[kind] = (
            Counter(role_key(item) for item in items) if kind == "role" else Counter(items)
        )
        if kind in TAKEN_OUT:
            text = pattern.sub(" ", text)
    return found


@pytest.mark.parametrize("name", CATALOGUES)
def test_every_page_keeps_its_published_translation(name):
    """A message translated when the edition was last published (locales/ja/translated.json)
    stays translated; under BOOK_REQUIRE_TRANSLATION=1 (the publishing workflow) every message
    of every page is translated."""
    if translation.strict():
        left = translation.untranslated(name)
        assert left is not None, f"no catalogue for {name}: run make catalogues"
        assert not left, f"{name}: {len(left)} untranslated or fuzzy, first {left[:3]}"
    lost = translation.lost(name)
    assert not lost, f"{name}: {len(lost)} published translations lost or fuzzy, first {lost[:3]}"
    if (LOCALE / f"{name}.po").is_file():
        obsolete = list(catalogue(name).obsolete)
        assert not obsolete, f"{name}: entries no page has any more, first {obsolete[:3]}"


def test_every_complete_catalogue_is_recorded_as_published():
    """A catalogue translated whole is in locales/ja/translated.json (make untranslated records
    it), so that the tests keep it whole."""
    for name in [*CATALOGUES, "checks"]:
        if translation.untranslated(name) == []:
            assert name in translation.recorded(), f"{name}: translated, not recorded"


@pytest.mark.parametrize("name", CATALOGUES)
def test_translations_keep_the_markup(name):
    wrong = []
    for message in messages(name):
        english, japanese = markup(message.id), markup(message.string)
        for kind in MARKUP:
            if english[kind] != japanese[kind]:
                missing = list((english[kind] - japanese[kind]).elements())
                extra = list((japanese[kind] - english[kind]).elements())
                wrong.append(f"{message.id[:60]!r}: {kind} missing {missing} extra {extra}")
        if stranded_emphasis(message.string):
            wrong.append(f"{message.string[:60]!r}: ** between punctuation and a letter")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


def test_markup_check_catches_what_it_should():
    english = "The **weights** $a_{ij}$ of {ref}`the chapter <attention>` in `softmax` [^n]"
    assert markup(english) == markup("{ref}`前の章 <attention>` の $a_{ij}$ を `softmax` で [^n]")
    assert markup(english) != markup("{ref}`前の章 <attention>` の $a_{ji}$ を `softmax` で [^n]")
    assert markup(english) != markup("{ref}`前の章 <tiny-gpt>` の $a_{ij}$ を `softmax` で [^n]")
    assert markup(english) != markup("{ref}`前の章 <attention>` の $a_{ij}$ を softmax で [^n]")
    assert markup("$A \\ \\text{(each row)}$") == markup("$A \\ \\text{（各行）}$")
    assert markup("$d_\\text{model}$") != markup("$d_\\text{モデル}$")
    assert markup("$n - \\text{length}$") == markup("$n - \\text{長さ}$")
    assert markup("$\\operatorname{RoPE}_{\\text{half}}$") != markup(
        "$\\operatorname{RoPE}_{\\text{半分}}$"
    )
    assert markup("`[head 0's row | head 1's row | ...]`") == markup(
        "`[ヘッド0の行 | ヘッド1の行 | ...]`"
    )
    assert markup("`merge_heads(Y)`") != markup("`ヘッドの統合(Y)`")
    assert stranded_emphasis("これは**「注意」**です")
    assert not stranded_emphasis("これは「**注意**」です")
    assert not stranded_emphasis("**注意機構**（attention mechanism）")
