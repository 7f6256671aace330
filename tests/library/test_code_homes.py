"""One home for each kind of code, each module imported by one name.

``_ext/`` holds the Sphinx extensions alone, which the build (and the tests, through pytest.ini)
finds by their own names; the book's libraries and scripts live in the package ``booktools``,
installed editable beside attnkit and imported as ``booktools.x`` by the extensions, the grader,
the tests and the benchmarks. Each test names the file and line that breaks its rule."""

import ast
import functools
import subprocess

import pytest
import tomllib

from tests.support.book import ROOT


def files(*patterns):
    """The repository's files (tracked, or new and not ignored) that match ``patterns``, as git
    grep would search them."""
    command = ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"]
    names = subprocess.run([*command, *patterns], capture_output=True, text=True, check=True)
    return sorted(ROOT / name for name in set(names.stdout.split()) if (ROOT / name).is_file())


EXTENSIONS = files("_ext/")
EXTENSION_NAMES = {path.stem for path in EXTENSIONS if path.suffix == ".py"}
PYTHON_FILES = files("*.py")


@functools.cache
def tree(path):
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported(path):
    """(line, module name) of each import of ``path``: ``import a.b`` and ``from a.b import c``
    give a.b; relative imports are left out."""
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.lineno, node.module


def where(path, line):
    return f"{path.relative_to(ROOT)}:{line}"


def test_ext_holds_only_sphinx_extensions():
    """A file of _ext/ is a Python module with ``def setup(app)``: a library or a script goes
    into booktools."""
    offenders = [
        path.name
        for path in EXTENSIONS
        if path.suffix != ".py"
        or not any(
            isinstance(node, ast.FunctionDef) and node.name == "setup" for node in tree(path).body
        )
    ]
    assert not offenders, (
        f"_ext/ holds what is no Sphinx extension (move it to booktools/): {offenders}"
    )


def test_nothing_imports_ext_as_a_package():
    """``_ext.x`` would load the extension ``x`` a second time, under a second name."""
    offenders = [
        where(path, line)
        for path in PYTHON_FILES
        for line, name in imported(path)
        if name == "_ext" or name.startswith("_ext.")
    ]
    assert not offenders, (
        f"imports of _ext.* (import booktools.x, or the extension by its name): {offenders}"
    )


def test_no_code_changes_the_import_path():
    """No module reaches another by putting its folder on sys.path: pytest.ini, the book's
    configuration and a test's Sphinx build (PYTHONPATH) name the folders."""
    offenders = [
        where(path, node.lineno)
        for path in PYTHON_FILES
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ]
    assert not offenders, f"sys.path changed in code: {offenders}"


def test_no_module_of_the_book_is_loaded_from_its_file():
    """A module loaded by its path (importlib's spec_from_file_location) gets a name besides the
    one its imports give it. Only the figures' scripts, which are no modules of a package, are
    run so (tests/library/test_figures.py)."""
    offenders = [
        where(path, node.lineno)
        for path in PYTHON_FILES
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Attribute)
        and node.attr == "spec_from_file_location"
        and path != ROOT / "tests" / "library" / "test_figures.py"
    ]
    assert not offenders, f"modules loaded from their files: {offenders}"


@pytest.mark.parametrize("folder", ["booktools", "assignments"])
def test_the_tools_and_the_grader_stand_without_the_extensions(folder):
    """The book's tools and the grader import no Sphinx extension: an extension depends on them,
    never the other way round."""
    offenders = [
        f"{where(path, line)} imports {name}"
        for path in sorted((ROOT / folder).glob("*.py"))
        for line, name in imported(path)
        if name.split(".")[0] in EXTENSION_NAMES
    ]
    assert not offenders, f"{folder}/ reaches into _ext/: {offenders}"


def test_booktools_is_its_own_package_and_attnkit_ships_without_it():
    attnkit = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    tools = tomllib.loads((ROOT / "booktools" / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = attnkit["tool"]["setuptools"]["packages"]
    assert not [p for p in shipped if p.startswith("booktools")], (
        f"attnkit's pyproject.toml ships booktools: {shipped}"
    )
    assert tools["tool"]["setuptools"]["packages"] == ["booktools"]
    import booktools

    assert booktools.__file__ == str(ROOT / "booktools" / "__init__.py"), (
        f"booktools is imported from {booktools.__file__}, not this checkout (make book installs it)"
    )


def test_one_reader_of_the_table_of_contents_and_one_local_server():
    """_toc.yml is read by booktools/toc.py alone (sphinx-external-toc's parser), and a folder
    is served over HTTP by booktools/local_server.py alone."""
    offenders = []
    for path in PYTHON_FILES:
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(tree(path)) if "_toc.yml" in text else ():
            if isinstance(node, ast.Call) and "_toc.yml" in (
                ast.get_source_segment(text, node) or ""
            ):
                called = ast.unparse(node.func)
                if called.endswith(("read_text", "safe_load", "open", "parse_toc_yaml")):
                    offenders.append(f"{where(path, node.lineno)} reads _toc.yml")
        offenders += [
            f"{where(path, line)} imports {name}"
            for line, name in imported(path)
            if name == "http.server"
        ]
    allowed = {"booktools/toc.py", "booktools/local_server.py"}
    offenders = [o for o in offenders if o.split(":")[0] not in allowed]
    assert not offenders, f"use booktools.toc or booktools.local_server: {offenders}"
