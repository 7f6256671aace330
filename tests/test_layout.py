"""How the tests are laid out: every test module stands alone.

pytest may import test modules in any order, alone or together, and finds fixtures by name; a
test module that imports another one (or conftest.py) runs that module's tests twice or depends
on how it was started. Shared helpers live in ``tests.support``; conftest.py holds fixtures and hooks only.
"""

import ast

import pytest

from tests.support.book import ROOT

TESTS = ROOT / "tests"


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
        ("from tests.support import browser", []),
        ("import pytest\nfrom hypothesis import strategies as st", []),
        ("from torch.testing import assert_close", []),
    ],
)
def test_forbidden_imports_are_recognised(source, expected):
    assert forbidden_imports(source) == expected


MODULES = sorted([*TESTS.glob("test_*.py"), *(TESTS / "support").glob("*.py")])


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
