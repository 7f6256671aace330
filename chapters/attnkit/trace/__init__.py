"""What a function does to every named axis, step by step, and where it went wrong.

``attnkit.trace(fn, "B T d_model", 3)`` runs ``fn`` on an example whose axes are named (each
named axis a distinct prime size, :data:`~.axes.SIZES`; ``d_model`` is ``H·d_k``) and records
every array operation it performs: its kind, the named axes going in and coming out, and the
line of ``fn``'s code. It flags axes mixed by a reshape, a softmax along another axis than the
keys', a scale by the square root of another width than ``d_k``, a mask that varies along the
queries instead of the keys, a product that pairs two different axes, and (with ``expect=``) a
result whose axes are not the ones asked for. ``str()`` of the trace is its table; in Jupyter it
is drawn. NumPy is traced through its array protocols, PyTorch through a function mode; neither
is changed.

``diagnose(fn, args, expect=...)`` returns the flags alone, for a check to quote.
"""

from __future__ import annotations

import sys
import types

import numpy as np

from .axes import SIZES, Names
from .flags import ADVICE, Flag
from .numpy_array import NamedArray, NumpyTracer, plain
from .record import Recorder
from .result import Trace

__all__ = ["trace", "diagnose", "example", "SIZES", "Trace", "Flag", "ADVICE"]

DTYPES = {"bool", "float32", "float64", "int64"}


def example(spec: str, *, torch: bool = False, sizes: dict | None = None, seed: int = 0):
    """A random array whose axes are named by ``spec`` (``"B T d_model"``, ``"bool B T'"``:
    a leading dtype, ``float64`` by default), each named axis of its trace size."""
    dtype, axes = _parsed(Names(sizes), spec)
    return _made(tuple(a.size for a in axes), dtype, torch, seed)


def trace(
    fn, *args, torch: bool = False, expect: str | None = None, sizes: dict | None = None, **kwargs
) -> Trace:
    """Run ``fn(*args, **kwargs)`` and record what it does to every axis.

    An argument that is a string of axis names becomes an example array with those axes (a
    NumPy array, or a tensor with ``torch=True``); an array argument is named by its sizes.
    ``expect`` (axis names) is the result's contract. ``sizes`` changes or adds atomic sizes
    (each must differ from every other), or, given a tuple of names, a composite axis
    (``{"g": 29, "r": 31, "h": ("g", "r")}``: ``h`` heads in ``g`` groups of ``r``). Returns a :class:`Trace` whose ``result`` holds the
    function's result as plain arrays."""
    names = Names(sizes)
    libraries = [np]
    if torch or "torch" in sys.modules:
        import torch as torch_module

        libraries.append(torch_module)
    recorder = Recorder(names, tuple(libraries))
    numpy_tracer = NumpyTracer(recorder)
    torch_tracer = None
    if len(libraries) > 1:
        from .torch_mode import TorchTracer

        torch_tracer = TorchTracer(recorder)

    def prepared(value, seed):
        if not isinstance(value, str):
            return _named_input(value, numpy_tracer, torch_tracer)
        dtype, axes = _parsed(names, value)
        made = _made(tuple(a.size for a in axes), dtype, torch, seed)
        if torch:
            return torch_tracer.name(made, axes)
        return numpy_tracer.wrap(made, axes)

    call_args = [prepared(value, seed) for seed, value in enumerate(args)]
    call_kwargs = {key: prepared(value, 100 + i) for i, (key, value) in enumerate(kwargs.items())}
    result = _run(recorder, torch_tracer, fn, call_args, call_kwargs)
    output, step = _output(result, numpy_tracer, torch_tracer)
    if expect is not None and output is not None:
        wanted = names.parse(expect)
        if len(wanted) != len(output) or not all(a.same_as(b) for a, b in zip(output, wanted)):
            from .axes import shown

            recorder.flag_last(
                Flag("contract", {"got": shown(output), "want": shown(wanted)}), step
            )
    return Trace(
        getattr(fn, "__qualname__", type(fn).__name__),
        recorder.steps,
        recorder.flags,
        _unwrapped(result),
        output,
    )


def diagnose(
    fn, args, *, expect: str | None = None, torch: bool = False, sizes: dict | None = None
) -> list[Flag]:
    """The flags of ``trace(fn, *args)``: empty when nothing went wrong. Each flag has its
    ``kind``, ``line`` and ``advice()`` in the checks' language."""
    return trace(fn, *args, torch=torch, expect=expect, sizes=sizes).flags


def _run(recorder, torch_tracer, fn, args, kwargs):
    recorder.stop = _run.__code__
    if torch_tracer is None:
        return fn(*args, **kwargs)
    with torch_tracer:
        return fn(*args, **kwargs)


def _parsed(names: Names, spec: str):
    words = spec.split()
    dtype = words.pop(0) if words and words[0] in DTYPES else "float64"
    return dtype, names.parse(" ".join(words))


def _made(shape: tuple, dtype: str, torch: bool, seed: int):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        array = rng.random(shape) < 0.7
        if array.ndim:
            array[..., 0] = True  # every row keeps a key
    else:
        array = rng.standard_normal(shape).astype(dtype)
    if torch:
        import torch as torch_module

        return torch_module.from_numpy(array)
    return array


def _named_input(value, numpy_tracer, torch_tracer):
    if isinstance(value, np.ndarray) and not isinstance(value, NamedArray) and value.ndim:
        return numpy_tracer.wrap(value, numpy_tracer.names.guess(value.shape))
    if torch_tracer is not None:
        import torch as torch_module

        if isinstance(value, torch_module.Tensor) and value.dim():
            return torch_tracer.name(value, torch_tracer.names.guess(tuple(value.shape)))
    return value


def _output(result, numpy_tracer, torch_tracer):
    """The axes of the (first) array the function returned, and the step that made it."""
    if isinstance(result, (tuple, list)) and result:
        result = result[0]
    if isinstance(result, NamedArray):
        return numpy_tracer.axes(result), result._step
    if isinstance(result, np.ndarray):
        return numpy_tracer.names.guess(result.shape), 0
    if torch_tracer is not None:
        import torch as torch_module

        if isinstance(result, torch_module.Tensor):
            return torch_tracer.axes(result), torch_tracer.step_of(result)
    return None, 0


def _unwrapped(result):
    if isinstance(result, tuple):
        return tuple(_unwrapped(r) for r in result)
    if isinstance(result, list):
        return [_unwrapped(r) for r in result]
    return plain(result)


class _CallableModule(types.ModuleType):
    """``attnkit.trace`` is this module and, called, :func:`trace`."""

    def __call__(self, fn, *args, **kwargs) -> Trace:
        return trace(fn, *args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
