"""NumPy, traced through its array protocols: an ndarray subclass that carries named axes.

Every ufunc (arithmetic, ``@``, ``np.exp`` …) reaches :meth:`NamedArray.__array_ufunc__` and
every NumPy function (``np.reshape``, ``np.einsum``, ``np.where`` …) reaches
:meth:`NamedArray.__array_function__`; both compute on plain arrays and wrap the result with its
names. The methods that NumPy would run without either (``.reshape``, ``.T``, ``.sum``,
indexing) are sent through the functions. NumPy itself is not changed.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .axes import PRIMES
from .record import Recorder

RESHAPES = {"reshape", "ravel", "squeeze", "expand_dims", "atleast_2d", "flatten"}
TRANSPOSES = {"transpose", "swapaxes", "moveaxis", "permute_dims", "matrix_transpose", "rollaxis"}
REDUCTIONS = ops.REDUCTIONS | {"nanmax", "median", "average"}
REDUCING_UFUNCS = {
    "add": "sum",
    "maximum": "max",
    "minimum": "min",
    "multiply": "prod",
    "logaddexp": "logsumexp",
}
KEEPS = {
    "copy",
    "ascontiguousarray",
    "asanyarray",
    "array",
    "tril",
    "triu",
    "nan_to_num",
    "clip",
    "round",
    "around",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "sort",
    "flip",
    "cumsum",
    "cumprod",
    "negative",
    "positive",
    "broadcast_to",
}
SCALING = {"multiply": "multiply", "divide": "divide", "true_divide": "divide"}


class NamedArray(np.ndarray):
    """An array with the named axes of one trace (``_axes``) and the step that made it."""

    _axes: tuple | None = None
    _tracer: NumpyTracer | None = None
    _step: int = 0

    def __array_finalize__(self, obj):
        self._tracer = getattr(obj, "_tracer", None)
        self._axes, self._step = None, 0

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        tracer = _tracer_of(inputs)
        if out is not None:
            kwargs["out"] = tuple(plain(o) for o in out)
        result = getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return tracer.ufunc(ufunc, method, inputs, kwargs, result)

    def __array_function__(self, func, types, args, kwargs):
        tracer = _tracer_of(args) or self._tracer
        result = func(*_plain_all(args), **_plain_all(kwargs))
        return tracer.function(func, args, kwargs, result)

    # methods NumPy runs on the array itself, sent through the traced functions
    def reshape(self, *shape, order="C"):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def swapaxes(self, a, b):
        return np.swapaxes(self, a, b)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def ravel(self, order="C"):
        return np.ravel(self, order)

    def flatten(self, order="C"):
        return np.ravel(self, order).copy()

    @property
    def T(self):
        return np.transpose(self)

    @property
    def mT(self):
        return np.swapaxes(self, -1, -2)

    def dot(self, other):
        return np.dot(self, other)

    def __getitem__(self, key):
        return self._tracer.index(self, key)

    def __setitem__(self, key, value):
        plain(self)[_plain_all(key)] = plain(value)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def astype(self, dtype, *args, **kwargs):
        return self._tracer.keep(self, plain(self).astype(dtype, *args, **kwargs))

    def copy(self, order="C"):
        return self._tracer.keep(self, plain(self).copy(order))


def _through(function):
    """The method that calls NumPy's ``function`` on the array (so it is traced)."""

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    return method


for _name in REDUCTIONS & set(dir(np.ndarray)) | {"clip", "round", "cumsum"}:
    setattr(NamedArray, _name, _through(getattr(np, _name)))


def plain(x):
    return x.view(np.ndarray) if isinstance(x, NamedArray) else x


def _plain_all(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_plain_all(item) for item in x)
    if isinstance(x, dict):
        return {key: _plain_all(value) for key, value in x.items()}
    return plain(x)


def _tracer_of(values):
    for value in values:
        if isinstance(value, NamedArray) and value._tracer is not None:
            return value._tracer
        if isinstance(value, (list, tuple)):
            found = _tracer_of(value)
            if found:
                return found
    return None


def _arrays(values) -> list:
    found = []
    for value in values:
        if isinstance(value, (list, tuple)):
            found += _arrays(value)
        elif isinstance(value, np.ndarray) and value.ndim:
            found.append(value)
    return found


class NumpyTracer:
    """Names the results of NumPy's operations and records them."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.names = recorder.names

    def wrap(self, array, axes: tuple, step: int = 0):
        named = np.asarray(array).view(NamedArray)
        named._tracer, named._axes, named._step = self, axes, step
        return named

    def axes(self, array) -> tuple:
        if isinstance(array, NamedArray) and array._axes is not None:
            if tuple(a.size for a in array._axes) == array.shape:
                return array._axes
        return self.names.guess(np.shape(array))

    def _done(self, kind, op, arrays, result, out, flags):
        if not isinstance(result, np.ndarray) or result.ndim == 0:
            return result
        step = self.recorder.record(kind, op, [self.axes(a) for a in arrays], out, flags)
        return self.wrap(result, out, step)

    def keep(self, source, result):
        """A result that holds what ``source`` held (a copy, another dtype): same names, no step."""
        wrapped = self.wrap(result, ops.named(self.names, self.axes(source), result.shape))
        wrapped._step = source._step if isinstance(source, NamedArray) else 0
        return wrapped

    def index(self, array, key):
        result = plain(array)[_plain_all(key)]
        if not isinstance(result, np.ndarray) or result.ndim == 0:
            return result
        if isinstance(key, np.ndarray) or (isinstance(key, tuple) and _arrays(key)):
            out, flags = self.names.guess(result.shape), []
        else:
            out, flags = ops.index(self.names, self.axes(array), key, result.shape)
        return self._done("indexing", "[]", [array], result, out, flags)

    def ufunc(self, ufunc, method, inputs, kwargs, result):
        if isinstance(result, tuple) or not isinstance(result, np.ndarray) or result.ndim == 0:
            return result
        arrays = [x for x in inputs if isinstance(x, np.ndarray) and x.ndim]
        name = ufunc.__name__
        if method == "reduce":
            axis = kwargs.get("axis", 0)
            kept = self._kept(axis, len(self.axes(inputs[0])))
            out, flags = ops.reduce(self.axes(inputs[0]), kept, kwargs.get("keepdims", False))
            return self._done(
                "reduction", REDUCING_UFUNCS.get(name, name), arrays, result, out, flags
            )
        if method != "__call__":
            return self.wrap(result, self.names.guess(result.shape))
        if name == "matmul":
            a, b = (self.axes(x) for x in inputs[:2])
            out, flags = ops.matmul(self.names, a, b, result.shape)
            return self._done("matmul", "@", arrays, result, out, flags)
        divides = SCALING.get(name) == "divide"
        scalars = [
            (float(x), divides)
            for i, x in enumerate(inputs)
            if np.ndim(x) == 0 and _is_number(x) and not (divides and i == 0)  # not c / x
        ]
        masks = [i for i, x in enumerate(arrays) if x.dtype == bool]
        out, flags = ops.elementwise(
            self.names,
            [self.axes(x) for x in arrays],
            result.shape,
            op=SCALING.get(name, name),
            scalars=scalars if len(inputs) == 2 else (),
            masks=masks if name != "logical_not" and len(arrays) > 1 else (),
        )
        return self._done("elementwise", name, arrays, result, out, flags)

    def function(self, func, args, kwargs, result):
        name = func.__name__
        arrays = list(_arrays(args) + _arrays(kwargs.values()))
        if isinstance(result, (list, tuple)):
            return type(result)(
                self.wrap(r, self.names.guess(r.shape)) if isinstance(r, np.ndarray) else r
                for r in result
            )
        if not isinstance(result, np.ndarray) or result.ndim == 0 or not arrays:
            return result
        first = self.axes(arrays[0])
        if name in RESHAPES:
            out, flags = ops.reshape(self.names, first, result.shape)
            return self._done("reshape", name, arrays[:1], result, out, flags)
        if name in TRANSPOSES:
            order = _probe(func, len(first), args[1:], kwargs)
            out, flags = ops.permute(first, order)
            return self._done("transpose", name, arrays[:1], result, out, flags)
        if name in REDUCTIONS:
            axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
            kept = self._kept(axis, len(first))
            out, flags = ops.reduce(first, kept, bool(kwargs.get("keepdims", False)))
            return self._done("reduction", name, arrays[:1], result, out, flags)
        if name == "einsum":
            out, flags = ops.einsum(
                self.names, args[0], [self.axes(a) for a in args[1:]], result.shape
            )
            return self._done("einsum", f"einsum {args[0]}", arrays, result, out, flags)
        if name == "dot":
            out, flags = ops.matmul(self.names, first, self.axes(arrays[1]), result.shape)
            return self._done("matmul", "dot", arrays, result, out, flags)
        if name == "where" and len(args) == 3:
            operands = [self.axes(x) if np.ndim(x) else () for x in args]
            out, flags = ops.elementwise(self.names, operands, result.shape, masks=[0])
            return self._done("masking", "where", arrays, result, out, flags)
        if name in ("concatenate", "stack", "concat"):
            axis = kwargs.get("axis", args[1] if len(args) > 1 else 0)
            operands = [self.axes(x) for x in args[0]]
            out, flags = ops.concatenate(
                self.names, operands, axis, result.shape, stacked=name == "stack"
            )
            return self._done("concatenation", name, arrays, result, out, flags)
        if name in KEEPS or result.shape == arrays[0].shape:
            return self.keep(arrays[0], result)
        return self._done("other", name, arrays, result, self.names.guess(result.shape), [])

    @staticmethod
    def _kept(axis, ndim: int) -> list:
        if axis is None:
            return []
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        reduced = {a % ndim for a in axes}
        return [i for i in range(ndim) if i not in reduced]


def _is_number(x) -> bool:
    return (isinstance(x, (int, float, np.number)) and not isinstance(x, bool)) or (
        isinstance(x, np.ndarray) and x.dtype.kind in "fi"
    )


def _probe(func, ndim: int, rest, kwargs) -> list:
    """Where each axis went: ``func`` run on an empty array whose sizes are distinct."""
    sizes = PRIMES[:ndim]
    moved = func(np.broadcast_to(np.int8(0), sizes), *rest, **kwargs).shape
    return [sizes.index(size) for size in moved]
