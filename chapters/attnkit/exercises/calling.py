"""Running a student's function for a check: here, or wherever a grader runs the student's code.

A check never calls the student's function itself: :func:`harness.call` asks for an
:class:`Outcome` of the call, which says what the function returned or raised, which helpers
it called that the exercise forbids, what it left of its arguments, and, when asked, the peak
memory it allocated and whether it hands two callers the same array. :func:`invoke` runs the
function in this process, its array arguments laid out in memory as the check asks
(:func:`laid_out`: a stated shape is any array of that shape, views included), with each
forbidden helper swapped for a tripwire (:func:`forbidding`), PyTorch watched where the
exercise is NumPy only, and its memory traced (tracemalloc, which NumPy reports its arrays to,
and PyTorch's tensors counted by :mod:`pytorch_watch`). A grader passes a :class:`Remote` in place of the function: the
call then runs in the process that holds the student's code, which calls :func:`invoke`
there, and only plain data comes back, so the check itself runs where the student's code
cannot reach it.
"""

from __future__ import annotations

import functools
import importlib
import sys
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .pytorch_watch import watching

__all__ = ["LAYOUTS", "PYTORCH", "Outcome", "Remote", "invoke", "forbidding", "laid_out"]

# How an array argument may lie in memory: in C order, in Fortran order, every other element
# of a larger array, its last two axes swapped in memory (a transposed view). Not reversed
# (negative strides): torch.from_numpy refuses them, and a caller's view rarely has them.
LAYOUTS = ("C", "Fortran", "strided", "swapped")

# Forbidden as a helper's name, it forbids every PyTorch operation during the call, however
# it is reached (:mod:`pytorch_watch`): an exercise that asks for NumPy only.
PYTORCH = "torch"


@dataclass(frozen=True)
class Outcome:
    """What one call of a student's function did."""

    result: object = None
    error: str | None = None  # "TypeError: ..." when the function raised
    forbidden: tuple[str, ...] = ()  # the forbidden helpers it called, by dotted name
    peak_bytes: int | None = None  # the memory it allocated at most, when measured
    args: tuple = ()  # its arguments as the call left them
    shared: bool = False  # did a second call return an array that shares the first's memory?


class Remote:
    """A student's function that lives in another process; a grader provides the transport.

    :meth:`invoke` runs ``function(*args)`` there, through :func:`invoke`, and returns its
    :class:`Outcome` built from plain data only (arrays, tensors, numbers, strings, tuples).
    """

    def invoke(
        self,
        args: tuple,
        forbidden: tuple[str, ...],
        measure: bool,
        layout: str = "C",
        twice: bool = False,
    ) -> Outcome:
        raise NotImplementedError

    def trace(self, check: str, forbidden: tuple[str, ...]) -> dict | None:
        """What :func:`tracing.traced` returns for the function there, as plain data; None
        where the transport carries no trace."""
        return None


class ForbiddenHelper(BaseException):
    """Raised by a tripwire. Not an ``Exception``: the student's ``except Exception`` lets it by."""


def _resolve(dotted: str):
    """The object a dotted name such as ``attnkit.core.softmax`` names, or None.

    attnkit's own modules are imported first, so that a function that imports one while it
    runs still finds the tripwire. Other modules are searched only when already imported:
    importing PyTorch or SciPy to forbid one of their functions would cost seconds.
    """
    parts = dotted.split(".")
    if parts[0] == "attnkit":
        for cut in range(len(parts) - 1, 0, -1):
            try:
                importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        obj = module
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _owner_and_attribute(dotted: str):
    """(the object holding the attribute, its name) for ``dotted``, or None."""
    owner_name, _, attribute = dotted.rpartition(".")
    owner = sys.modules.get(owner_name) or _resolve(owner_name)
    return (owner, attribute) if owner is not None else None


def _unwrapped(fn):
    """``fn`` without ``functools.partial`` and ``functools.wraps`` layers."""
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            break
    return fn


@contextmanager
def forbidding(names: tuple[str, ...], fn=None) -> Iterator[list[str]]:
    """While the block runs, every forbidden helper in ``names`` is a tripwire.

    The tripwire replaces the helper wherever a function finds it: as an attribute of every
    module of attnkit and of the helper's own module, in ``fn``'s globals (a notebook's
    namespace), closure and default arguments. Calling it records the name in the list this
    yields and raises :class:`ForbiddenHelper`. Where ``fn`` is a forbidden helper itself
    (``my_softmax = softmax``), the list starts with its name. Everything is put back afterwards.
    """
    used: list[str] = []
    helpers = {}  # id -> (dotted name, object)
    for name in names:
        obj = _resolve(name)
        if obj is not None:
            helpers[id(obj)] = (name, obj)
    if not helpers:
        yield used
        return
    helpers_by_name = dict(helpers.values())
    for candidate in (fn, _unwrapped(fn)):
        found = helpers.get(id(candidate))
        if found is not None and found[1] is candidate:
            used.append(found[0])
            break

    wires = {}  # id of a tripwire -> the helper it stands for

    def tripwire(name):
        def forbidden(*args, **kwargs):
            used.append(name)
            raise ForbiddenHelper(name)

        wires[id(forbidden)] = (forbidden, helpers_by_name[name])
        return forbidden

    def replacement(value):
        found = helpers.get(id(value))
        return tripwire(found[0]) if found is not None and found[1] is value else None

    undo = []  # (setter, original) pairs, undone in reverse

    def swap_in(mapping, key):
        new = replacement(mapping.get(key))
        if new is not None:
            undo.append((functools.partial(mapping.__setitem__, key), mapping[key]))
            mapping[key] = new

    for name, _ in helpers.values():
        place = _owner_and_attribute(name)
        if place is not None and not isinstance(place[0], type(sys)):
            owner, attribute = place  # a method of a class, such as torch.Tensor.softmax
            undo.append((functools.partial(setattr, owner, attribute), getattr(owner, attribute)))
            setattr(owner, attribute, tripwire(name))
    owners = {name.rpartition(".")[0] for name, _ in helpers.values()}
    searched = _modules_to_search(owners)
    for module in searched:
        namespace = vars(module)
        for key in [k for k, v in namespace.items() if id(v) in helpers]:
            swap_in(namespace, key)
    target = _unwrapped(fn)
    namespace = getattr(target, "__globals__", None)
    if isinstance(namespace, dict):
        for key in [k for k, v in namespace.items() if id(v) in helpers]:
            swap_in(namespace, key)
    for cell in getattr(target, "__closure__", None) or ():
        try:
            new = replacement(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
        if new is not None:
            undo.append((functools.partial(setattr, cell, "cell_contents"), cell.cell_contents))
            cell.cell_contents = new
    for attribute in ("__defaults__", "__kwdefaults__"):
        defaults = getattr(target, attribute, None)
        if defaults and any(replacement(v) for v in _values(defaults)):
            undo.append((functools.partial(setattr, target, attribute), defaults))
            setattr(target, attribute, _replaced(defaults, replacement))
    try:
        yield used
    finally:
        for setter, original in reversed(undo):
            setter(original)
        _restore_in_new_modules(wires, owners, searched)


@functools.cache
def _attnkit_module_names() -> tuple[str, ...]:
    """The dotted name of every module of attnkit, read from its package's files: looking
    these up in ``sys.modules`` is quick, where going through all of it (thousands of modules
    once PyTorch is imported) took a millisecond, twice a call, half a check's time."""
    import attnkit

    names = []
    for folder in map(Path, attnkit.__path__):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            names.append(".".join(("attnkit", *parts[: -1 if parts[-1] == "__init__" else None])))
    return tuple(names)


def _modules_to_search(owners: set[str]) -> list:
    """attnkit's modules, and the modules that hold a forbidden helper, as imported now."""
    names = dict.fromkeys((*_attnkit_module_names(), *sorted(owners)))
    return [module for module in map(sys.modules.get, names) if module is not None]


def _restore_in_new_modules(wires: dict, owners: set[str], searched: list) -> None:
    """Put the helper back wherever a module imported during the call copied its tripwire
    (``from .modules import X`` while X was one): the tripwire must not outlive the call. The
    modules searched before the call were put back by the undo list (going through all of
    them again, NumPy's and PyTorch's namespaces among them, cost a check a third of its time)."""
    searched_before = {id(module) for module in searched}
    for module in _modules_to_search(owners):
        if id(module) in searched_before:
            continue
        namespace = vars(module)
        for key, value in list(namespace.items()):
            found = wires.get(id(value))
            if found is not None and found[0] is value:
                namespace[key] = found[1]


def _values(defaults):
    return defaults.values() if isinstance(defaults, dict) else defaults


def _replaced(defaults, replacement):
    if isinstance(defaults, dict):
        return {k: replacement(v) or v for k, v in defaults.items()}
    return tuple(replacement(v) or v for v in defaults)


def _torch():
    return sys.modules.get("torch")


def _is_tensor(value) -> bool:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def laid_out(value, layout: str):
    """``value``, an array or tensor, with the same shape, dtype and values, laid out in memory
    as ``layout`` (one of :data:`LAYOUTS`) says; anything else as it is. A strided view's gaps
    hold NaN (or zeros), so that an answer that reads the memory behind a view reads nonsense."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if _is_tensor(value):
        return _tensor_laid_out(value, layout)
    if not isinstance(value, np.ndarray) or value.ndim == 0 or value.size == 0:
        return value
    if layout == "Fortran":
        return np.asfortranarray(value)
    if layout == "strided":
        gap = np.nan if value.dtype.kind in "fc" else 0
        wider = np.full((*value.shape[:-1], 2 * value.shape[-1]), gap, dtype=value.dtype)
        wider[..., ::2] = value
        return wider[..., ::2]
    if layout == "swapped" and value.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(value, -1, -2)).swapaxes(-1, -2)
    return np.ascontiguousarray(value)


def _tensor_laid_out(value, layout: str):
    """:func:`laid_out` for a torch tensor."""
    if value.ndim == 0 or value.numel() == 0:
        return value
    if layout == "Fortran":
        axes = tuple(reversed(range(value.ndim)))
        return value.permute(axes).contiguous().permute(axes)
    if layout == "strided":
        gap = float("nan") if value.is_floating_point() else 0
        wider = value.new_full((*value.shape[:-1], 2 * value.shape[-1]), gap)
        wider[..., ::2] = value
        return wider[..., ::2]
    if layout == "swapped" and value.ndim >= 2:
        return value.transpose(-1, -2).contiguous().transpose(-1, -2)
    return value.contiguous()


def _arrays(value) -> list:
    """The arrays and tensors in ``value`` (it, or a tuple or list of them)."""
    if isinstance(value, (tuple, list)):
        return [a for part in value for a in _arrays(part)]
    return [value] if isinstance(value, np.ndarray) or _is_tensor(value) else []


def _share_memory(first, second) -> bool:
    """Does an array of the result ``second`` share memory with one of ``first``?"""
    for a in _arrays(first):
        for b in _arrays(second):
            if type(a) is not type(b):
                continue
            if isinstance(a, np.ndarray):
                if np.may_share_memory(a, b):
                    return True
            elif a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr():
                return True
    return False


def invoke(
    fn,
    args: tuple,
    forbidden: tuple[str, ...] = (),
    measure: bool = False,
    layout: str = "C",
    twice: bool = False,
) -> Outcome:
    """Call ``fn(*args)`` in this process, the helpers named in ``forbidden`` unavailable and
    each array argument laid out as ``layout`` says (:func:`laid_out`).

    With ``measure``, ``peak_bytes`` is the most memory the call held at once beyond what
    was allocated before it, as tracemalloc counts it (NumPy's arrays included), plus the most
    PyTorch's tensors held (:mod:`pytorch_watch`). Where ``forbidden`` holds
    :data:`PYTORCH`, any PyTorch operation during the call is reported as a forbidden helper. With
    ``twice``, the function is called again on copies of the arguments, and ``shared`` says
    whether the two results share memory: an array kept between calls (a cache), which a
    caller that changes its copy changes for every other caller.
    """
    again = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)
    if twice and any(_is_tensor(a) for a in args):
        again = tuple(a.clone() if _is_tensor(a) else a for a in again)
    args = tuple(laid_out(a, layout) for a in args)
    result, error, peak, shared = None, None, None, False
    watch_pytorch = PYTORCH in forbidden or measure
    with forbidding(forbidden, fn) as used:
        if used:  # the function is a forbidden helper itself: nothing to run
            return Outcome(forbidden=tuple(used), args=args)
        with watching() if watch_pytorch else nullcontext() as pytorch:
            result, error, peak, shared = _run(fn, args, again, measure, twice, used)
        if pytorch is not None and pytorch.used and PYTORCH in forbidden:
            used.append(PYTORCH)
        if measure and pytorch is not None:
            peak += pytorch.peak_bytes  # PyTorch's tensors, which tracemalloc does not see
    return Outcome(result, error, tuple(dict.fromkeys(used)), peak, args, shared)


def _run(fn, args: tuple, again: tuple, measure: bool, twice: bool, used: list):
    """``fn(*args)``, and ``fn(*again)`` if ``twice``: (result, error, peak bytes, shared)."""
    result, error, peak, shared = None, None, None, False
    tracing = tracemalloc.is_tracing()
    if measure:
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
    try:
        result = fn(*args)
    except ForbiddenHelper:
        pass  # recorded in used
    except Exception as exc:  # any error in student code becomes a message
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if measure:
            peak = max(0, tracemalloc.get_traced_memory()[1] - before)
            if not tracing:
                tracemalloc.stop()
    if twice and error is None and not used:
        try:
            shared = _share_memory(result, fn(*again))
        except ForbiddenHelper:
            pass  # recorded in used
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc} (when called a second time)"
    return result, error, peak, shared
