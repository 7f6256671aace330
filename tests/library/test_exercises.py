"""The exercise checks' harness, and the package's layout: one module of checks per chapter."""

import ast
import functools
import importlib
import pkgutil
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import attnkit.exercises
from assignments.exercises import notebook_cells
from attnkit.exercises.calling import LAYOUTS, PYTORCH, Outcome, Remote, invoke, laid_out
from attnkit.exercises.harness import (
    CheckFailed,
    CheckFailedWarning,
    CheckResult,
    Failed,
    Raised,
    as_array,
    call,
    check,
    close,
    dtypes,
    keeps_dtype,
    ndarray,
    near,
    random,
    shown,
)
from booktools import toc
from tests.support.book import ROOT

# --- comparing: the tolerance follows the answer's dtype ---------------------------------------


def test_a_float32_answer_gets_float32_rounding_room():
    expected = np.array([0.1, 0.2, 0.7])
    assert close((expected + 1e-5).astype(np.float32), expected)  # within sqrt(eps) ~ 3e-4
    assert not close((expected + 1e-3).astype(np.float32), expected)


def test_a_float64_answer_must_be_right_to_about_eight_digits():
    expected = np.array([0.1, 0.2, 0.7])
    assert close(expected + 1e-10, expected)
    assert not close(expected + 1e-6, expected)
    assert not close(expected.astype(np.float16), expected)  # any other dtype: float64's room


def test_near_says_which_entries_are_off():
    assert near(np.array([1.0, 2.0, 3.0]), [1.0, 2.5, 3.0]).tolist() == [True, False, True]


def test_answers_become_float32_or_float64_arrays():
    assert as_array(np.ones(2, dtype=np.float32), "the result").dtype == np.float32
    assert as_array(np.array([1, 2]), "the result").dtype == np.float64
    assert as_array(np.ones(2, dtype=np.float16), "the result").dtype == np.float64
    with pytest.raises(Failed, match="the result should be a NumPy array, got a str"):
        as_array("not an array", "the result")
    with pytest.raises(Failed, match="z_hat should be a NumPy array, got a dict"):
        as_array({}, "z_hat")
    with pytest.raises(Failed, match="should hold numbers, got an array of dtype <U1"):
        as_array(np.array(["a"]), "the result")


@pytest.mark.parametrize(
    "answer, named",
    [
        ([[1.0, 2.0]], r"got a list \(np\.array\(\.\.\.\) makes one\)"),
        ((1.0, 2.0), "got a tuple"),
        (np.float64(1.0), r"got a NumPy scalar \(float64\)"),
        (np.ma.masked_array([1.0]), "got an array of type MaskedArray"),
    ],
)
def test_only_a_plain_numpy_array_is_an_array(answer, named):
    with pytest.raises(Failed, match=named):
        ndarray(answer, "the result")
    assert ndarray(np.ones(1), "the result").dtype == np.float64


def test_a_tensor_is_not_taken_for_an_array():
    torch = pytest.importorskip("torch")
    with pytest.raises(Failed, match="got a torch tensor; this exercise works in NumPy"):
        as_array(torch.ones(2), "the weights")


def test_numbers_are_shown_with_the_digits_that_tell_them_apart():
    assert shown(0.5, 0.25) == ("0.5", "0.25")
    assert shown(1.0, 1.000001) == ("1.0", "1.000001")
    assert shown([1.0, 2.0], 2.0) == ("[1.0, 2.0]", "[2.0, 2.0]")  # broadcast to one shape


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


def test_tensors_are_passed_as_clones_and_a_change_in_place_is_reported():
    torch = pytest.importorskip("torch")
    keep = torch.ones(2, 3, dtype=torch.bool)
    seen = []
    call(lambda t: seen.append(t), keep)
    assert seen[0] is not keep and torch.equal(seen[0], keep)
    with pytest.raises(Failed, match="changed its input array in place"):
        call(lambda t: t.logical_not_(), keep)
    assert keep.all()  # the check's own tensor is untouched


def test_an_exception_names_itself_and_the_argument_shapes():
    def unfinished(z, H, h):
        raise NotImplementedError("replace this line with your code")

    with pytest.raises(Raised) as raised:
        call(unfinished, np.zeros(3), np.zeros((4, 3)), 2)
    assert str(raised.value) == (
        "your function raised NotImplementedError: replace this line "
        "with your code (it was called with arguments of shape (3,), (4, 3))"
    )
    assert raised.value.error == "NotImplementedError: replace this line with your code"


def test_a_stub_raises_and_is_quoted_in_the_students_language(monkeypatch):
    """The Japanese edition's notebooks and pages write the stub's line in Japanese; a verdict
    quotes the stub as a message, so that the book's Japanese pages, whose cells ran in English,
    quote it in Japanese too (attnkit.exercises.stub)."""
    from attnkit.exercises import stub
    from attnkit.exercises.attention import check_softmax
    from attnkit.exercises.wording import written_in

    japanese = stub.stub_line("ja")
    assert japanese == 'raise NotImplementedError("この行をあなたのコードに置き換えてください")'
    source = f"def f(x):\n    {stub.stub_line('en')}\n\ncheck(f)"
    assert stub.in_language(source, "ja") == source.replace(stub.stub_line("en"), japanese)

    def unfinished(x):
        raise NotImplementedError(stub.STUB)

    result = check_softmax(unfinished)
    assert "raised NotImplementedError: replace this line with your code" in result.message
    quoted = "NotImplementedError: この行をあなたのコードに置き換えてください を送出しました"
    assert quoted in written_in(result._parts, "ja")
    # a check that words the error its own way quotes the stub as a message too
    from attnkit.exercises.tiny_transformer import check_diagonal_mass

    def unfinished_mass(weights, offset):
        raise NotImplementedError(stub.STUB)

    mass = check_diagonal_mass(unfinished_mass)
    assert "raised NotImplementedError: replace this line with your code" in mass.message
    own_words = written_in(mass._parts, "ja")
    assert f"NotImplementedError: {stub.words('ja')}" in own_words and stub.STUB not in own_words
    # the Japanese notebook's stub, in a Japanese kernel, and another error, quoted as raised
    monkeypatch.setenv("ATTNKIT_LANGUAGE", "ja")
    namespace = {}
    exec(stub.in_language(f"def unfinished(x):\n    {stub.stub_line('en')}", "ja"), namespace)
    assert quoted in check_softmax(namespace["unfinished"]).message
    assert stub.quoted("ValueError: replace this line with your code") == (
        "ValueError: replace this line with your code"
    )


def test_an_exception_can_be_described_by_the_sizes_and_followed_by_a_hint():
    with pytest.raises(
        Raised,
        match=r"^your function raised ZeroDivisionError: division by zero "
        r"\(it was called with n = 5, d = 3\)\. Odd d\?$",
    ):
        call(lambda n, d: n / 0, 5, 3, called_with="n = 5, d = 3", hint=". Odd d?")


# --- forbidden helpers, memory, the student's function elsewhere ------------------------------


def test_a_forbidden_helper_is_a_tripwire_wherever_the_function_finds_it():
    import attnkit.core
    from attnkit.core import causal_mask as imported_under_another_name

    names = ("attnkit.core.causal_mask",)
    by_module = lambda n: attnkit.core.causal_mask(n)  # noqa: E731
    by_global = lambda n: imported_under_another_name(n)  # noqa: E731

    def by_closure():
        helper = attnkit.core.causal_mask
        return lambda n: helper(n)

    def by_default(n, helper=attnkit.core.causal_mask):
        return helper(n)

    def swallowing(n):
        try:
            return attnkit.core.causal_mask(n)
        except Exception:  # the tripwire is no Exception: it still stops the function
            return np.tril(np.ones((n, n), dtype=bool))

    for fn in (
        by_module,
        by_global,
        by_closure(),
        by_default,
        swallowing,
        attnkit.core.causal_mask,
        functools.partial(attnkit.core.causal_mask),
    ):
        outcome = invoke(fn, (3,), names)
        assert outcome.forbidden == names and outcome.result is None
    assert np.array_equal(by_global(2), np.tril(np.ones((2, 2), dtype=bool)))  # all put back
    assert by_default.__defaults__[0] is attnkit.core.causal_mask
    own = lambda n: np.tril(np.ones((n, n), dtype=bool))  # noqa: E731
    assert invoke(own, (3,), names).forbidden == ()


def test_a_module_imported_during_the_call_keeps_no_tripwire(monkeypatch):
    """A module first imported while the function runs copies the tripwire (``from .core import
    causal_mask``); the helper is put back there too when the call ends."""
    import attnkit
    import attnkit.core

    monkeypatch.delitem(sys.modules, "attnkit.transformer_numpy", raising=False)
    monkeypatch.delattr(attnkit, "transformer_numpy", raising=False)

    def imports_then_calls(n):
        module = importlib.import_module("attnkit.transformer_numpy")
        return module.causal_mask(n)

    outcome = invoke(imports_then_calls, (3,), ("attnkit.core.causal_mask",))
    assert outcome.forbidden == ("attnkit.core.causal_mask",)
    assert sys.modules["attnkit.transformer_numpy"].causal_mask is attnkit.core.causal_mask


def test_a_check_says_plainly_that_the_answer_used_a_forbidden_helper():
    @check(forbids=("attnkit.core.softmax",))
    def check_uses_softmax(fn):
        call(fn, np.zeros(3))
        return "correct"

    from attnkit.core import softmax

    assert check_uses_softmax.forbids == ("attnkit.core.softmax",)
    result = check_uses_softmax(lambda x: softmax(x))
    assert not result.passed
    assert "your function uses `attnkit.core.softmax`" in result.message
    assert check_uses_softmax(lambda x: x).passed


def test_the_peak_memory_of_a_call_is_measured():
    _, small = call(lambda x: x * 2, np.zeros(10), measure=True)
    _, large = call(lambda x: np.concatenate([x] * 100), np.zeros(10_000), measure=True)
    assert small < 10_000 and 8_000_000 <= large < 9_000_000


def test_a_remote_function_is_called_through_its_transport():
    class Echo(Remote):
        def __init__(self):
            self.calls = []

        def invoke(self, args, forbidden, measure, layout, twice):
            self.calls.append((args, forbidden, measure))
            return Outcome(result=args[0] + 1, args=args)

    remote = Echo()
    assert call(remote, np.zeros(2)).tolist() == [1.0, 1.0]
    raising = Echo()
    raising.invoke = lambda *a: Outcome(error="ValueError: no", args=a[0])
    with pytest.raises(Raised, match="raised ValueError: no"):
        call(raising, np.zeros(2))
    changed = Echo()
    changed.invoke = lambda args, *a: Outcome(result=1, args=(args[0] + 1,))
    with pytest.raises(Failed, match="changed its input array in place"):
        call(changed, np.zeros(2))


def test_a_check_draws_fresh_inputs_unless_seeded_and_tries_the_dtypes_asked_for():
    seen = []

    @check
    def check_records(fn):
        seen.append((random().normal(), dtypes()))
        return "correct"

    check_records(None, seed=3), check_records(None, seed=3), check_records(None)
    assert seen[0] == seen[1] and seen[2][0] != seen[0][0]
    assert seen[0][1] == (np.float64, np.float32)
    check_records(None, dtypes=(np.float32,))
    assert seen[-1][1] == (np.float32,)
    with pytest.raises(ValueError, match="dtypes must be some of float64 and float32"):
        check_records(None, dtypes=(np.float16,))


# --- a check's body becomes a CheckResult -------------------------------------------------------


@check
def check_positive(fn):
    """Check ``fn()``: a positive number."""
    if call(fn) <= 0:
        raise Failed("not positive")
    return "correct: positive"


def test_a_returned_confirmation_passes_and_a_failure_fails():
    passed, failed = check_positive(lambda: 1), check_positive(lambda: -1)
    assert passed.passed and passed.message == "correct: positive"
    assert not failed.passed and failed.message == "not positive"


def test_only_a_passed_check_is_true():
    assert check_positive(lambda: 1)
    failed = check_positive(lambda: -1)
    assert not failed
    with pytest.raises(AssertionError):
        assert check_positive(lambda: -1)
    assert failed.message  # read: it does not warn when it goes


def test_a_verdict_is_marked_in_text_and_in_a_notebook():
    passed, failed = check_positive(lambda: 1), check_positive(lambda: -1)
    assert repr(passed) == str(passed) == "✓ correct: positive"
    assert repr(failed) == str(failed) == "✗ failed: not positive"
    assert "✓</strong> correct: positive" in passed._repr_html_()
    assert "✗ failed:</strong> not positive" in failed._repr_html_()
    assert "rgb(46, 125, 50)" in passed._repr_html_()  # green
    assert "rgb(198, 40, 40)" in failed._repr_html_()  # red


def test_a_message_is_escaped_in_html():
    failed = CheckResult(False, "a <b> & c")
    assert "a &lt;b&gt; &amp; c" in failed._repr_html_()


def test_assert_passed_raises_with_the_message_only_for_a_failure():
    assert check_positive(lambda: 1).assert_passed() is None
    with pytest.raises(CheckFailed, match=r"^✗ failed: not positive$") as raised:
        check_positive(lambda: -1).assert_passed()
    assert isinstance(raised.value, AssertionError)


def test_a_failed_result_thrown_away_unread_warns_where_it_was_made():
    with pytest.warns(CheckFailedWarning, match=r"✗ failed: not positive") as warned:
        check_positive(lambda: -1)  # a bare call in a script: nothing shown
    assert warned[0].filename == __file__  # the warning points at the call
    with pytest.warns(CheckFailedWarning, match="not positive"):
        assert not check_positive(lambda: -1)  # true or false says nothing of why


@pytest.mark.parametrize("read", [repr, str, lambda r: r._repr_html_(), lambda r: r.message])
def test_a_failed_result_that_was_read_or_a_passed_one_goes_quietly(read):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(check_positive(lambda: -1))
        check_positive(lambda: 1)
        with pytest.raises(CheckFailed):
            check_positive(lambda: -1).assert_passed()


def test_a_result_cannot_be_changed():
    result = check_positive(lambda: 1)
    with pytest.raises(AttributeError):
        result.passed = False
    with pytest.raises(AttributeError):
        result.message = "changed"


def test_the_student_s_exception_is_reported_not_raised():
    result = check_positive(lambda: 1 / 0)
    assert not result.passed and "raised ZeroDivisionError" in result.message


def test_a_bug_in_the_check_itself_is_not_blamed_on_the_student():
    with pytest.raises(TypeError):
        check_positive(lambda: "a string")  # the check compares it with 0 outside call()


def test_a_check_keeps_its_name_and_docstring():
    assert check_positive.__name__ == "check_positive"
    assert check_positive.__doc__ == "Check ``fn()``: a positive number."


def test_keeps_dtype_names_both_dtypes_and_the_float64_scalar_trap():
    keeps_dtype(np.ones(2, dtype=np.float32), np.float32, "the result")
    with pytest.raises(
        Failed,
        match=r"for float32 inputs you returned the weights in "
        r"float64.*np\.sqrt",
    ):
        keeps_dtype(np.ones(2), np.float32, "the weights")


# --- the package: one module of checks per chapter, in the book's order --------------------------


# What every check is built on; the other modules hold the checks of one chapter each.
BUILT_ON = {"harness", "calling", "pytorch_watch", "inputs", "wording", "tracing", "stub"}


def chapter_modules():
    """The modules of attnkit.exercises that hold a chapter's checks, by name."""
    return sorted(
        m.name for m in pkgutil.iter_modules(attnkit.exercises.__path__) if m.name not in BUILT_ON
    )


def book_chapters():
    """The chapters' slugs in the order of _toc.yml."""
    return [Path(name).name for name in toc.pages() if name.startswith("chapters/")]


@pytest.mark.parametrize("module", chapter_modules())
def test_each_module_of_checks_has_its_chapter_and_its_tests(module):
    slug = module.replace("_", "-")
    assert slug in book_chapters()
    assert (ROOT / "tests" / "library" / f"test_{module}.py").exists()
    checks = importlib.import_module(f"attnkit.exercises.{module}")
    assert checks.__all__ and all(name.startswith("check_") for name in checks.__all__)
    for name in checks.__all__:
        assert getattr(attnkit.exercises, name, None) is getattr(checks, name)


def test_the_package_exports_every_check_and_lists_its_modules_in_the_book_s_order():
    checks = {
        name
        for module in chapter_modules()
        for name in importlib.import_module(f"attnkit.exercises.{module}").__all__
    }
    assert set(attnkit.exercises.__all__) == checks | {
        "CheckResult",
        "CheckFailed",
        "CheckFailedWarning",
    }
    listed = re.findall(r"^- ``(\w+)``", attnkit.exercises.__doc__, re.M)
    in_book_order = [
        slug.replace("-", "_")
        for slug in book_chapters()
        if slug.replace("-", "_") in chapter_modules()
    ]
    assert listed == in_book_order


@pytest.mark.parametrize("slug", book_chapters())
def test_a_chapter_imports_its_checks_from_its_own_module(slug):
    text = (ROOT / "chapters" / f"{slug}.md").read_text()
    for module in re.findall(r"^from attnkit\.exercises(\.\w+)? import", text, re.M):
        assert module == "." + slug.replace("-", "_")


# --- every check in the book: unfinished stubs fail quietly, the chapters' solutions pass ---

ALL_CHECKS = [name for name in attnkit.exercises.__all__ if name.startswith("check_")]


def unfinished(*args):
    raise NotImplementedError("replace this line with your code")


@pytest.mark.parametrize("stub", [unfinished, lambda *args: None], ids=["raises", "returns None"])
@pytest.mark.parametrize("name", ALL_CHECKS)
def test_a_check_of_an_unfinished_stub_fails_without_raising(name, stub):
    result = getattr(attnkit.exercises, name)(stub)
    assert not result and result.message


def exercise_cells(slug):
    """The chapter's imports, and its exercise cells: (source, in a solution?) pairs."""
    imports, cells, in_solution = [], [], False
    for cell in notebook_cells((ROOT / "chapters" / f"{slug}.md").read_text(encoding="utf-8")):
        if cell.cell_type == "markdown":
            # the last marker decides: a cell may close one solution and open the next
            start, end = (cell.source.rfind(f"{{solution-{m}}}") for m in ("start", "end"))
            in_solution = start > end if max(start, end) >= 0 else in_solution
            continue
        tree = ast.parse(cell.source)
        imports += [
            ast.unparse(node)
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
        ]
        if re.search(r"^check_\w+\(\w+\)$", cell.source, re.M):
            cells.append((cell.source, in_solution))
    return "\n".join(imports), cells


def run_exercise_cell(imports, source):
    """Run a cell whose last line is ``check_x(fn)``; return that line's CheckResult."""
    *body, last = source.rstrip().splitlines()
    namespace = {}
    exec(imports, namespace)
    exec("\n".join(body), namespace)
    return eval(last, namespace)


EXERCISE_CELLS = [
    (slug, source, in_solution)
    for slug in book_chapters()
    for source, in_solution in exercise_cells(slug)[1]
]


def check_called(source):
    return re.search(r"^(check_\w+)\(", source, re.M).group(1)


def test_every_check_has_one_stub_and_one_solution_in_the_book():
    cells = sorted((check_called(source), in_solution) for _, source, in_solution in EXERCISE_CELLS)
    assert cells == sorted(
        (name, in_solution) for name in ALL_CHECKS for in_solution in (False, True)
    )


@pytest.mark.parametrize(
    "slug, source, in_solution",
    EXERCISE_CELLS,
    ids=[
        f"{check_called(source)}-{'solution' if in_solution else 'stub'}"
        for _, source, in_solution in EXERCISE_CELLS
    ],
)
def test_the_chapters_solutions_pass_and_their_stubs_fail_quietly(slug, source, in_solution):
    imports, _ = exercise_cells(slug)
    result = run_exercise_cell(imports, source)
    assert isinstance(result, CheckResult)
    assert result.passed == in_solution, result.message
    if not in_solution:
        assert "raised NotImplementedError" in result.message


def test_a_check_in_one_thread_is_not_thrown_by_torch_half_imported_in_another(monkeypatch):
    """The grader checks notebooks in threads: while one imports torch, sys.modules holds a
    module that has no Tensor yet, and another's check must not stop on it."""
    import sys
    import types

    from attnkit.exercises import harness

    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # half made
    assert harness._copy(np.ones(2)).tolist() == [1.0, 1.0]
    assert harness._copy("text") == "text"


# --- every layout a caller may pass, and results kept between calls ---------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 1)])
def test_an_array_laid_out_anyhow_keeps_its_shape_dtype_and_values(layout, shape):
    array = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    out = laid_out(array, layout)
    assert out.shape == array.shape and out.dtype == array.dtype
    assert np.array_equal(out, array)
    if layout == "strided":
        assert np.isnan(out.base).sum() == array.size
        assert not out.flags.c_contiguous or shape[-1] == 1
    if layout in ("Fortran", "swapped") and len(shape) >= 2 and min(shape) > 1:
        assert not out.flags.c_contiguous


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_tensor_laid_out_anyhow_keeps_its_values(layout):
    torch = pytest.importorskip("torch")
    tensor = torch.arange(24.0).reshape(2, 3, 4)
    out = laid_out(tensor, layout)
    assert torch.equal(out, tensor)
    assert out.is_contiguous() == (layout == "C")


def test_a_check_tries_every_layout_in_turn_and_c_order_when_it_measures_memory():
    seen = []

    def records(x):
        seen.append((x.flags.c_contiguous, x.flags.f_contiguous, x.base is not None))
        return x * 2

    @check
    def check_layouts(fn):
        for _ in range(2 * len(LAYOUTS)):
            call(fn, np.ones((3, 4)))
        call(fn, np.ones((3, 4)), measure=True)
        return "ok"

    assert check_layouts(records).passed
    assert len(set(seen[: len(LAYOUTS)])) == len(LAYOUTS)  # each layout is another kind
    assert seen[: len(LAYOUTS)] == seen[len(LAYOUTS) : -1]
    assert seen[-1][:2] == (True, False)


def test_an_answer_right_for_c_order_only_is_caught():
    def memory_order(x):
        return np.ravel(x, order="K").reshape(x.shape) * 2

    @check
    def check_doubles(fn):
        for _ in range(len(LAYOUTS)):
            x = np.arange(12.0).reshape(3, 4)
            if not np.array_equal(call(fn, x), 2 * x):
                raise Failed("wrong")
        return "ok"

    assert check_doubles(lambda x: 2 * x).passed
    result = check_doubles(memory_order)
    assert not result.passed and result.message == "wrong"


def test_a_result_kept_between_calls_is_reported_and_a_fresh_one_is_not():
    kept = np.zeros(3)

    @check
    def check_fresh(fn):
        call(fn, 3, fresh_result=True)
        return "ok"

    assert check_fresh(lambda n: np.zeros(n)).passed
    assert check_fresh(lambda n: (np.zeros(n), np.ones(n))).passed
    for aliased in (lambda n: kept, lambda n: kept[:n], lambda n: (np.ones(n), kept)):
        result = check_fresh(aliased)
        assert not result.passed and "Return a new array on every call" in result.message
    assert invoke(lambda n: kept, (3,), twice=True).shared
    assert not invoke(lambda n: kept.copy(), (3,), twice=True).shared


IMPORTS_TORCH_INSIDE = """
import sys
import numpy as np
from attnkit.exercises.attention_at_scale import check_online_softmax_attention

def online(Q, K, V, block_size, causal):
    import torch  # first imported here, during the call
    import torch.nn.functional as F
    q, k, v = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal).numpy()

assert "torch" not in sys.modules
print(check_online_softmax_attention(online).message)
"""


def test_a_numpy_only_exercise_meets_pytorch_forbidden_even_when_first_imported_inside():
    import subprocess

    run = subprocess.run(
        [sys.executable, "-c", IMPORTS_TORCH_INSIDE],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "this exercise is NumPy only" in run.stdout


def _pytorch_outcome(fn, measure=False):
    return invoke(fn, (np.ones((4, 3)),), forbidden=(PYTORCH,), measure=measure)


def test_a_numpy_only_exercise_notices_pytorch_however_it_is_reached():
    torch = pytest.importorskip("torch")
    made_before = torch.ones(3)
    ways = {
        "torch.zeros and a copy": lambda a: torch.zeros(a.shape).copy_(torch.ones(a.shape)),
        "torch.tensor of lists": lambda a: torch.tensor(a.tolist()).numpy(),
        "a tensor made before the call": lambda a: (made_before * 2).numpy(),
        "overrides disabled": lambda a: _with(torch._C.DisableTorchFunction(), torch.ones, 2),
        "the watch taken off the stack": lambda a: _pop_dispatch_modes(torch),
    }
    for way, fn in ways.items():
        assert PYTORCH in _pytorch_outcome(fn).forbidden, way
    assert PYTORCH not in _pytorch_outcome(lambda a: a @ a.T).forbidden
    assert torch.utils._python_dispatch._get_current_dispatch_mode_stack() == []


def _with(context, fn, *args):
    with context:
        return fn(*args)


def _pop_dispatch_modes(torch):
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    while _get_current_dispatch_mode_stack():
        _get_current_dispatch_mode_stack()[-1].__exit__(None, None, None)


def test_a_memory_rule_counts_pytorch_tensors_while_they_live():
    torch = pytest.importorskip("torch")
    size = 1 << 20  # float64 entries: 8 MiB, far above what NumPy's part of the call holds

    def held(a):
        big = torch.ones(size, dtype=torch.float64)
        return float(big.sum())

    peak = invoke(held, (np.ones(3),), measure=True).peak_bytes
    assert 8 * size <= peak < 8 * size + (1 << 20)
    freed = invoke(
        lambda a: [float(torch.ones(1000).sum()) for _ in range(50)], (np.ones(3),), measure=True
    ).peak_bytes
    assert freed < 50 * 4000  # each tensor freed before the next: not the sum of all
