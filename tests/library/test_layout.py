"""How the tests are laid out: every test module stands alone.

pytest may import test modules in any order, alone or together, and finds fixtures by name; a
test module that imports another one (or conftest.py) runs that module's tests twice or depends
on how it was started. Shared helpers live in ``tests.support``; conftest.py holds fixtures and hooks only.
"""

import ast

import pytest

from tests.support.book import ROOT
from tests.support.built import BUILT_FIXTURES

TESTS = ROOT / "tests"
# The two wings: library (attnkit, the checks, the grader's parts; builds nothing, `make
# test-fast`) and book (what the Make targets build, in a browser, run alone, graded).
WINGS = ("library", "book")


def imported_modules(source):
    """Every module an import statement of ``source`` names, relative ones resolved inside
    the package ``tests`` (``from .x import y`` names tests.x and tests.x.y)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(filter(None, ["tests", module]))
            names += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return names


def file_of_tests(module):
    """The name of the file of tests/ that ``module`` is, if it is one of tests/test_*.py or
    tests/conftest.py, however it is named: as tests/ on the path sees it (``test_book``), as a
    module of the package (``tests.conftest``), or through a name it defines (``conftest.ROOT``)."""
    parts = module.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    if parts and parts[0] in WINGS:
        parts = parts[1:]
    if parts and (parts[0] == "conftest" or parts[0].startswith("test_")):
        return parts[0]
    return None


def forbidden_imports(source):
    return sorted({name for m in imported_modules(source) if (name := file_of_tests(m))})


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from conftest import ROOT", ["conftest"]),
        ("import conftest", ["conftest"]),
        ("from test_book import page, toc_files", ["test_book"]),
        ("from tests.test_book import page", ["test_book"]),
        ("from tests import conftest", ["conftest"]),
        ("from .test_book import page", ["test_book"]),
        ("from . import conftest, test_browser", ["conftest", "test_browser"]),
        ("def f():\n    import test_browser", ["test_browser"]),
        ("from tests.support.book import ROOT, page", []),
        ("from tests.book.test_book import page", ["test_book"]),
        ("from tests.library import test_exercises", ["test_exercises"]),
        ("from tests.support import browser", []),
        ("import pytest\nfrom hypothesis import strategies as st", []),
        ("from torch.testing import assert_close", []),
    ],
)
def test_forbidden_imports_are_recognised(source, expected):
    assert forbidden_imports(source) == expected


MODULES = sorted([*TESTS.rglob("test_*.py"), *(TESTS / "support").rglob("*.py")])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_module_imports_a_test_module_or_conftest(path):
    found = forbidden_imports(path.read_text(encoding="utf-8"))
    assert found == [], f"import shared helpers from tests.support instead of {found}"


def test_conftest_holds_only_fixtures_and_hooks():
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert functions
    for function in functions:
        decorators = [ast.unparse(d) for d in function.decorator_list]
        assert function.name.startswith("pytest_") or any(
            d.startswith("pytest.fixture") for d in decorators
        ), f"conftest.py: {function.name} is not a fixture; shared helpers go in tests/support/"
    assert not [node for node in tree.body if isinstance(node, ast.ClassDef)], (
        "conftest.py: classes go in tests/support/"
    )


def test_every_test_module_lies_in_a_wing():
    assert sorted(p.parent.name for p in TESTS.rglob("test_*.py")) == sorted(
        p.parent.name for p in TESTS.rglob("test_*.py") if p.parent.name in WINGS
    )
    assert not list(TESTS.glob("test_*.py"))


@pytest.mark.parametrize(
    "path", sorted((TESTS / "library").glob("test_*.py")), ids=lambda p: p.name
)
def test_the_library_wing_reads_no_build(path):
    """No test of the library wing takes a fixture that reads what the Make targets build for
    the book wing, so that `make test-fast` needs no build."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    taken = {
        arg.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for arg in node.args.args
    }
    assert not taken & BUILT_FIXTURES, path.name
