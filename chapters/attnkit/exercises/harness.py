"""What every exercise check is built on, written once.

A check is a function ``check_<name>(fn)`` decorated with :func:`check`. Its body calls the
student's ``fn`` through :func:`call`, turns answers into arrays with :func:`as_array`, compares
them with :func:`close` (a tolerance that follows the answer's dtype), words numbers with
:func:`shown`, raises :class:`Failed` with plain advice at the first problem it finds, and
returns a confirmation when there is none. The decorator turns either outcome into a
:class:`CheckResult`.

A check draws its random inputs from :func:`random`, seeded with the check's own fixed seed
(:func:`fixed_seed`): the same answer gets the same verdict, word for word, on every run and
every machine. ``seed=`` draws other inputs, for a student who wants to explore, and for the
tests, which try every answer on many. A NumPy
check runs its inputs in each of :func:`dtypes` (float64 and float32 unless ``dtypes=`` narrows
them) and asks :func:`keeps_dtype` whether the answer kept the inputs' dtype. A check that names
helpers it ``forbids`` (the functions an exercise asks the student to write) runs the student's
function with those helpers unavailable, and says so when it reached for one.
"""

from __future__ import annotations

import contextvars
import functools
import html
import itertools
import json
import sys
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

from . import stub
from .calling import LAYOUTS, PYTORCH, Remote, invoke
from .tracing import CONTRACTS, plain_trace, traced
from .wording import Message, _, joined, written_in
from .wording import language as wording_language

# Every NumPy check runs in both: float64 first, whose tight tolerance pins the values down,
# then float32, whose answers must stay float32.
DTYPES = (np.float64, np.float32)


# What a check may forbid: every function that computes a softmax (attnkit's and other
# libraries'), and every attnkit function that computes attention whole.
SOFTMAXES = (
    "attnkit.core.softmax",
    "attnkit.core.softmax_matrix_form",
    "attnkit.core.masked_softmax",
    "scipy.special.softmax",
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.Tensor.softmax",
)
# Every attnkit function that computes attention whole
ATTENTIONS = (
    "attnkit.core.attention",
    "attnkit.core.self_attention",
    "attnkit.core.scaled_dot_product_attention",
    "attnkit.core.multi_head_attention",
    "attnkit.core.grouped_query_attention",
    "attnkit.streaming.online_softmax_attention",
)


# What an exercise that asks for NumPy only forbids: any PyTorch operation during the call,
# however it is reached (calling.PYTORCH).
NUMPY_ONLY = (PYTORCH,)


@dataclass(frozen=True)
class _Run:
    """What the check that is running was asked for."""

    rng: np.random.Generator
    dtypes: tuple
    forbidden: tuple[str, ...]
    calls: itertools.count  # the calls made so far, which choose each call's layout


_RUN = contextvars.ContextVar("attnkit_check_run", default=None)


def _current() -> _Run:
    run = _RUN.get()
    return run if run is not None else _Run(np.random.default_rng(0), DTYPES, (), itertools.count())


def random() -> np.random.Generator:
    """The running check's random generator, seeded with its fixed seed unless told another."""
    return _current().rng


def fixed_seed(name: str) -> int:
    """The seed of the check ``name`` when none is given: its own, the same on every machine."""
    return zlib.crc32(name.encode())


def dtypes() -> tuple:
    """The float dtypes the running check tries its inputs in."""
    return _current().dtypes


class CheckFailedWarning(UserWarning):
    """A failed check's result was thrown away before anyone read it."""


class CheckFailed(AssertionError):
    """Raised by :meth:`CheckResult.assert_passed`; its text is the check's verdict."""


class CheckResult:
    """A check's verdict: ``passed``, and a ``message`` that says what was checked or what to fix.

    A failure can never pass for a success. The result is true only when the check passed, so
    ``assert check_x(fn)`` stops at a failure, and ``assert_passed()`` raises with the message.
    A notebook shows the verdict marked ✓ or ✗. A script shows nothing of a bare call, so a
    failed result that is discarded before its message was read (displayed, printed, asserted
    with ``assert_passed()`` or read as ``.message``) warns with that message, a
    :class:`CheckFailedWarning` pointing at the line of the call.
    """

    __slots__ = ("_message", "_parts", "_passed", "_read", "_trace")

    def __init__(self, passed: bool, message: str, trace: dict | None = None):
        self._passed = bool(passed)
        # a rejected answer's trace (tracing.py) follows the message as a table, or is drawn
        self._trace = trace
        self._message = str(message)
        # what the message was written from, to write it in another language (wording.py)
        self._parts = message.parts() if isinstance(message, Message) else self._message
        self._read = False

    @property
    def passed(self) -> bool:
        return self._passed

    @property
    def message(self) -> str:
        self._read = True
        return self._message

    @property
    def parts(self) -> dict | str:
        """What the message was written from (``wording.Message.parts``), to write it in
        another language with ``wording.written_in``."""
        return self._parts

    @property
    def report(self) -> str:
        """The message, then the table of the answer's trace where it has one (a rejected
        answer whose axes went wrong): what a grader's report shows."""
        return self.message + _trace_text(self._trace, wording_language())

    def __bool__(self) -> bool:
        return self._passed

    def __repr__(self) -> str:
        return ("✓ " if self._passed else _("✗ failed:") + " ") + self.report

    def _repr_html_(self) -> str:
        self._read = True
        return verdict_html(self._passed, self._parts, trace=self._trace)

    def assert_passed(self) -> None:
        """Raise :class:`CheckFailed` with the message if the check failed."""
        if not self._passed:
            raise CheckFailed(repr(self))

    def __del__(self):
        if not self._passed and not getattr(self, "_read", True):
            warnings.warn(
                _(
                    "{result}\n(this failed check was never displayed; in a script, "
                    "call .assert_passed() on a check's result to stop at a failure)",
                    result=repr(self),
                ),
                CheckFailedWarning,
                stacklevel=2,
            )


# The verdict's box as a notebook shows it. It carries the message's parts, so that the book's
# Japanese edition writes in Japanese the verdicts of cells that ran in English.
VERDICT_CLASS = "attnkit-verdict"
VERDICT_ATTRIBUTE = "data-attnkit-verdict"
# the drawing of a rejected answer's trace, right after the verdict's box
TRACE_CLASS = "attnkit-verdict-trace"


def _trace_text(trace: dict | None, language: str) -> str:
    return "\n" + trace["text"].get(language, trace["text"]["en"]) if trace else ""


def verdict_html(
    passed: bool, parts: dict | str, language: str | None = None, trace: dict | None = None
) -> str:
    """A verdict, marked ✓ or ✗, in ``language`` (that of the moment if None), followed by the
    drawing of the answer's ``trace`` when it has one (:func:`tracing.traced`)."""
    colour = "46, 125, 50" if passed else "198, 40, 40"  # green, red
    language = language or wording_language()
    mark = "✓" if passed else written_in(_("✗ failed:").parts(), language)
    text = written_in(parts, language)
    verdict = {"passed": passed, "parts": parts, **({"trace": trace} if trace else {})}
    data = html.escape(json.dumps(verdict, ensure_ascii=False))
    drawing = (
        f'<section class="{TRACE_CLASS}">{trace["html"].get(language, trace["html"]["en"])}'
        "</section>"
        if trace
        else ""
    )
    return (
        f'<div class="{VERDICT_CLASS}" {VERDICT_ATTRIBUTE}="{data}" '
        f'style="border-left: 0.3em solid rgb({colour}); '
        f'background: rgba({colour}, 0.1); padding: 0.3em 0.7em">'
        f"<strong>{mark}</strong> {html.escape(text)}</div>{drawing}"
    )


class Failed(Exception):
    """Raised inside a check to stop at the first problem; its text is what the student reads."""


class Raised(Failed):
    """The student's function raised; ``error`` is what it raised, as ``"TypeError: ..."`` (a
    message where it is the stub's, :func:`stub.quoted`)."""

    def __init__(self, message: str, error: str):
        super().__init__(message)
        self.error = error


def check(body=None, *, forbids: tuple[str, ...] = ()):
    """Make ``body(fn)`` a check: its returned text passes, a :class:`Failed` it raises fails.

    Either way the check returns a :class:`CheckResult` and never raises, so an unfinished
    exercise does not stop the notebook. ``forbids`` names, by dotted path, the helpers the
    exercise asks the student not to use (``"attnkit.core.softmax"``). The check is called as
    ``check_x(fn, seed=None, dtypes=DTYPES)``: ``seed`` draws other random inputs than the
    check's own (:func:`fixed_seed`), ``dtypes`` narrows the float dtypes it tries.
    """
    if body is None:
        return functools.partial(check, forbids=tuple(forbids))

    @functools.wraps(body)
    def run(fn, *, seed: int | None = None, dtypes: tuple = DTYPES) -> CheckResult:
        chosen = tuple(np.dtype(d).type for d in dtypes)
        if not chosen or not set(chosen) <= set(DTYPES):
            raise ValueError(f"dtypes must be some of float64 and float32, got {dtypes}")
        seed = run.default_seed if seed is None else seed
        run_state = _Run(np.random.default_rng(seed), chosen, tuple(forbids), itertools.count())
        token = _RUN.set(run_state)
        try:
            message = body(fn)
        except Failed as failure:
            message = failure.args[0] if failure.args else str(failure)
            return CheckResult(False, message, trace=_trace(fn, body.__name__, tuple(forbids)))
        finally:
            _RUN.reset(token)
        return CheckResult(True, message)

    run.forbids = tuple(forbids)
    run.default_seed = fixed_seed(body.__name__)
    return run


def _trace(fn, check_name: str, forbidden: tuple[str, ...]) -> dict | None:
    """The trace of a rejected answer whose axes went wrong, as :func:`tracing.traced` gives it
    (run where the student's code is, for a :class:`Remote`), or None."""
    if check_name not in CONTRACTS:
        return None
    if isinstance(fn, Remote):
        return plain_trace(fn.trace(check_name, forbidden))
    return traced(fn, check_name, forbidden)


def _is_tensor(value) -> bool:
    """Is ``value`` a torch tensor? (torch is imported only by the checks that need it.) The
    grader runs checks in threads: while one imports torch, sys.modules holds it half made, and
    no tensor can exist yet."""
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    return tensor is not None and isinstance(value, tensor)


def _copy(value):
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    return value.clone() if _is_tensor(value) else value


def _unchanged(original, after) -> bool:
    """Did the call leave this argument as it was? (NaN and -inf count as themselves.)"""
    if isinstance(original, np.ndarray):
        return (
            isinstance(after, np.ndarray)
            and original.dtype == after.dtype
            and np.array_equal(original, after, equal_nan=original.dtype.kind in "fc")
        )
    if _is_tensor(original):
        return (
            _is_tensor(after)
            and original.dtype == after.dtype
            and original.shape == after.shape
            and bool(((original == after) | (original.isnan() & after.isnan())).all())
        )
    return True


def call(
    fn,
    *args,
    called_with: str | None = None,
    hint: str = "",
    measure: bool = False,
    fresh_result: bool = False,
):
    """The student's ``fn(*args)``, called so that nothing it does escapes the check.

    NumPy arrays and torch tensors are passed as copies and compared with the originals
    afterwards, so a function that changes its input in place is reported. Each call lays the
    copies out in memory in the next of :data:`calling.LAYOUTS` (C order, Fortran order, a
    strided view, ...), so a check that calls several times tries an answer on every layout
    a caller may pass; a measured call gets C order. With ``fresh_result``, the function is
    called a second time, and a result that shares memory with the first (a cached array) is
    reported. Any other argument
    (a size, a count, a dtype) is passed as it is. A call to a helper the check forbids is
    reported. An exception becomes a :class:`Raised` that names it and says how the function
    was called: ``called_with`` (for example ``"n = 4"``), else the shapes of the array
    arguments; ``hint`` follows that message. With ``measure``, returns ``(result, peak
    bytes)``: the most memory the call held at once. ``fn`` may be a :class:`Remote`, whose
    call runs in the process that holds the student's code.
    """
    copies = tuple(_copy(a) for a in args)
    run = _current()
    forbidden = run.forbidden
    layout = "C" if measure else LAYOUTS[next(run.calls) % len(LAYOUTS)]
    if isinstance(fn, Remote):
        outcome = fn.invoke(copies, forbidden, measure, layout, fresh_result)
    else:
        outcome = invoke(fn, copies, forbidden, measure, layout, fresh_result)
    if outcome.forbidden:
        helpers = joined(_(" and "), [f"`{name}`" for name in outcome.forbidden])
        if PYTORCH in outcome.forbidden:
            raise Failed(
                _(
                    "your function runs PyTorch: this exercise is NumPy only, and the check "
                    "notices every PyTorch operation during the call, however it is reached "
                    "(torch.zeros, torch.tensor, a tensor's method). Write the computation "
                    "with NumPy arrays"
                )
            )
        raise Failed(
            _(
                "your function uses {helpers}, which computes what this exercise asks you to "
                "write yourself: the check runs your function with it made unavailable. Write "
                "the computation in your own code",
                helpers=helpers,
            )
        )
    if outcome.error is not None:
        if called_with is None:
            shapes = ", ".join(
                str(tuple(a.shape)) for a in args if isinstance(a, np.ndarray) or _is_tensor(a)
            )
            called_with = _("arguments of shape {shapes}", shapes=shapes)
        error = stub.quoted(outcome.error)  # a message where it is the stub's, for any check
        raise Raised(
            _(
                "your function raised {error} (it was called with {called_with}){hint}",
                error=error,
                called_with=called_with,
                hint=hint,
            ),
            error,
        )
    if len(outcome.args) != len(args) or not all(
        _unchanged(original, after) for original, after in zip(args, outcome.args)
    ):
        raise Failed(
            _("your function changed its input array in place; compute a new array instead")
        )
    if outcome.shared:
        raise Failed(
            _(
                "your function returned the same array to two calls (a cached array, say): a "
                "caller that changes the array it got changes every other caller's. Return a "
                "new array on every call"
            )
        )
    return (outcome.result, outcome.peak_bytes) if measure else outcome.result


def wrong_shape(where: str, what: str, expected, got, hint: str = "") -> Failed:
    """The failure of an answer of the wrong shape, in the same words in every check: ``what``
    ("the output") should have shape ``expected`` (a shape, or its symbols and sizes), and
    ``hint``, a sentence that starts with a space, may say what the returned shape suggests."""
    return Failed(
        _(
            "{where}, {what} should have shape {expected}, you returned {got}.{hint}",
            where=where,
            what=what,
            expected=expected,
            got=tuple(got),
            hint=hint,
        )
    )


def not_finite(where: str, what: str, hint: str = "") -> Failed:
    """The failure of an answer that holds NaN or inf, in the same words in every check:
    ``where`` (the inputs, a phrase), ``what`` ("the output"), and ``hint``, sentences that
    start with a space, saying where NaN or inf comes from and how to avoid it."""
    return Failed(
        _("{where}, you returned NaN or inf in {what}.{hint}", where=where, what=what, hint=hint)
    )


def not_close(where: str, what: str, expected, got, hint: str = "") -> Failed:
    """The failure of an answer whose numbers are wrong, in the same words in every check:
    ``what`` should be ``expected``, not ``got``, each written with the digits that tell them
    apart (:func:`shown`); ``hint``, sentences that start with a space, may say what the
    numbers suggest."""
    should, returned = shown(expected, got)
    return Failed(
        _(
            "{where}, {what} should be {should}, you returned {returned}.{hint}",
            where=where,
            what=what,
            should=should,
            returned=returned,
            hint=hint,
        )
    )


def keeps_dtype(result, dtype, what: str) -> None:
    """Raise :class:`Failed` unless the answer ``result`` has the inputs' float ``dtype``."""
    got = np.asarray(result).dtype
    if got != dtype:
        raise Failed(
            _(
                "for {dtype} inputs you returned {what} in {got}: return "
                "the inputs' dtype. Arithmetic with Python numbers keeps float32 (x / 2.0, "
                "d ** 0.5, math.sqrt(d)); a float64 array or a NumPy scalar such as "
                "np.sqrt(d) turns it into float64",
                dtype=np.dtype(dtype).name,
                what=what,
                got=got,
            )
        )


def _kind(value) -> str:
    """What ``value`` is, in the words of an error message."""
    if _is_tensor(value):
        return _("a torch tensor")
    if isinstance(value, np.generic):
        return _("a NumPy scalar ({type})", type=type(value).__name__)
    if isinstance(value, np.ndarray):
        return _("an array of type {type}", type=type(value).__name__)
    return _("a {type}", type=type(value).__name__)


def ndarray(result, what: str) -> np.ndarray:
    """The answer itself if it is a plain NumPy array, else :class:`Failed` naming what it is.

    Nested lists, torch tensors, NumPy scalars and array subclasses are refused: the chapter's
    next cell uses the answer as an array, and a check compares arrays it can trust.
    """
    if type(result) is np.ndarray:
        return result
    advice = (
        _("; this exercise works in NumPy, so keep to NumPy arrays (no torch needed)")
        if _is_tensor(result)
        else _(" (np.array(...) makes one)")
        if isinstance(result, (list, tuple))
        else ""
    )
    raise Failed(
        _(
            "{what} should be a NumPy array, got {kind}{advice}",
            what=what,
            kind=_kind(result),
            advice=advice,
        )
    )


def as_array(result, what: str) -> np.ndarray:
    """The answer, a NumPy array, as float32 if it is (its tolerance is float32's), else float64."""
    arr = ndarray(result, what)
    if arr.dtype.kind not in "biuf":
        raise Failed(
            _(
                "{what} should hold numbers, got an array of dtype {dtype}",
                what=what,
                dtype=arr.dtype,
            )
        )
    return arr if arr.dtype == np.float32 else arr.astype(np.float64)


def near(got, expected) -> np.ndarray:
    """Entry by entry: is the answer within rounding error of ``expected``?

    The tolerance follows the answer's dtype: the square root of its machine epsilon
    (about 3e-4 for float32, 1.5e-8 for float64), relative and absolute, so a correct
    float32 answer passes and a float64 answer must be right to about eight digits.
    """
    got = np.asarray(got)
    tol = np.sqrt(np.finfo(got.dtype if got.dtype == np.float32 else np.float64).eps)
    return np.isclose(got, expected, rtol=tol, atol=tol)


def close(got, expected) -> bool:
    """Is every entry of the answer :func:`near` ``expected``?"""
    return bool(np.all(near(got, expected)))


def shown(expected, got) -> tuple[str, str]:
    """``expected`` and ``got`` written with as many digits as it takes to tell them apart."""
    expected, got = np.broadcast_arrays(
        np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
    )
    for digits in range(4, 18):
        pair = tuple(str(np.round(x, digits).tolist()) for x in (expected, got))
        if pair[0] != pair[1]:
            break
    return pair
