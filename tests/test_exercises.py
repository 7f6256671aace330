"""The exercise checks' harness, and the package's layout: one module of checks per chapter."""

import importlib
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

import attnkit.exercises
from attnkit.exercises.harness import (CheckResult, Failed, Raised, as_array, call, check, close,
                                       near, shown)

ROOT = Path(__file__).resolve().parent.parent


# --- comparing: the tolerance follows the answer's dtype ---------------------------------------

def test_a_float32_answer_gets_float32_rounding_room():
    expected = np.array([0.1, 0.2, 0.7])
    assert close((expected + 1e-5).astype(np.float32), expected)    # within sqrt(eps) ~ 3e-4
    assert not close((expected + 1e-3).astype(np.float32), expected)


def test_a_float64_answer_must_be_right_to_about_eight_digits():
    expected = np.array([0.1, 0.2, 0.7])
    assert close(expected + 1e-10, expected)
    assert not close(expected + 1e-6, expected)
    assert not close(expected.astype(np.float16), expected)   # any other dtype: float64's room


def test_near_says_which_entries_are_off():
    assert near(np.array([1.0, 2.0, 3.0]), [1.0, 2.5, 3.0]).tolist() == [True, False, True]


def test_answers_become_float32_or_float64_arrays():
    assert as_array(np.ones(2, dtype=np.float32), "the result").dtype == np.float32
    assert as_array([1, 2], "the result").dtype == np.float64
    assert as_array(np.ones(2, dtype=np.float16), "the result").dtype == np.float64
    with pytest.raises(Failed, match="the result should be a NumPy array, got str"):
        as_array("not an array", "the result")
    with pytest.raises(Failed, match="z_hat should be a NumPy array, got dict"):
        as_array({}, "z_hat")


def test_numbers_are_shown_with_the_digits_that_tell_them_apart():
    assert shown(0.5, 0.25) == ("0.5", "0.25")
    assert shown(1.0, 1.000001) == ("1.0", "1.000001")
    assert shown([1.0, 2.0], 2.0) == ("[1.0, 2.0]", "[2.0, 2.0]")    # broadcast to one shape


# --- calling the student's function -------------------------------------------------------------

def test_arrays_are_passed_as_copies_and_other_arguments_as_they_are():
    X, size, tensor_like = np.arange(3.0), 4, object()
    seen = []
    assert call(lambda *args: seen.extend(args) or "answer", X, size, tensor_like) == "answer"
    assert seen[0] is not X and np.array_equal(seen[0], X)
    assert seen[1] is size and seen[2] is tensor_like


def test_a_change_in_place_is_reported():
    def in_place(x):
        x += 1
        return x

    with pytest.raises(Failed, match="changed its input array in place"):
        call(in_place, np.zeros(3))


def test_an_exception_names_itself_and_the_argument_shapes():
    def unfinished(z, H, h):
        raise NotImplementedError("replace this line with your code")

    with pytest.raises(Raised) as raised:
        call(unfinished, np.zeros(3), np.zeros((4, 3)), 2)
    assert str(raised.value) == ("your function raised NotImplementedError: replace this line "
                                 "with your code (it was called with arguments of shape (3,), (4, 3))")
    assert raised.value.error == "NotImplementedError: replace this line with your code"


def test_an_exception_can_be_described_by_the_sizes_and_followed_by_a_hint():
    with pytest.raises(Raised, match=r"^your function raised ZeroDivisionError: division by zero "
                                     r"\(it was called with n = 5, d = 3\)\. Odd d\?$"):
        call(lambda n, d: n / 0, 5, 3, called_with="n = 5, d = 3", hint=". Odd d?")


# --- a check's body becomes a CheckResult -------------------------------------------------------

@check
def check_positive(fn):
    """Check ``fn()``: a positive number."""
    if call(fn) <= 0:
        raise Failed("not positive")
    return "correct: positive"


def test_a_returned_confirmation_passes_and_a_failure_fails():
    assert check_positive(lambda: 1) == CheckResult(True, "correct: positive")
    assert check_positive(lambda: -1) == CheckResult(False, "not positive")
    assert repr(check_positive(lambda: 1)) == "✓ correct: positive"
    assert repr(check_positive(lambda: -1)) == "✗ not positive"


def test_the_student_s_exception_is_reported_not_raised():
    result = check_positive(lambda: 1 / 0)
    assert not result.passed and "raised ZeroDivisionError" in result.message


def test_a_bug_in_the_check_itself_is_not_blamed_on_the_student():
    with pytest.raises(TypeError):
        check_positive(lambda: "a string")   # the check compares it with 0 outside call()


def test_a_check_keeps_its_name_and_docstring():
    assert check_positive.__name__ == "check_positive"
    assert check_positive.__doc__ == "Check ``fn()``: a positive number."


# --- the package: one module of checks per chapter, in the book's order --------------------------

def chapter_modules():
    """The modules of attnkit.exercises other than the harness, by name."""
    return sorted(m.name for m in pkgutil.iter_modules(attnkit.exercises.__path__)
                  if m.name != "harness")


def book_chapters():
    """The chapters' slugs in the order of _toc.yml."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [Path(entry["file"]).name for part in toc["parts"] for entry in part["chapters"]
            if entry["file"].startswith("chapters/")]


@pytest.mark.parametrize("module", chapter_modules())
def test_each_module_of_checks_has_its_chapter_and_its_tests(module):
    slug = module.replace("_", "-")
    assert slug in book_chapters()
    assert (ROOT / "tests" / f"test_{module}.py").exists()
    checks = importlib.import_module(f"attnkit.exercises.{module}")
    assert checks.__all__ and all(name.startswith("check_") for name in checks.__all__)
    for name in checks.__all__:
        assert getattr(attnkit.exercises, name, None) is getattr(checks, name)


def test_the_package_exports_every_check_and_lists_its_modules_in_the_book_s_order():
    checks = {name for module in chapter_modules()
              for name in importlib.import_module(f"attnkit.exercises.{module}").__all__}
    assert set(attnkit.exercises.__all__) == checks | {"CheckResult"}
    listed = re.findall(r"^- ``(\w+)``", attnkit.exercises.__doc__, re.M)
    in_book_order = [slug.replace("-", "_") for slug in book_chapters()
                     if slug.replace("-", "_") in chapter_modules()]
    assert listed == in_book_order


@pytest.mark.parametrize("slug", book_chapters())
def test_a_chapter_imports_its_checks_from_its_own_module(slug):
    text = (ROOT / "chapters" / f"{slug}.md").read_text()
    for module in re.findall(r"^from attnkit\.exercises(\.\w+)? import", text, re.M):
        assert module == "." + slug.replace("-", "_")
