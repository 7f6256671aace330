"""PyTorch, traced through a function mode (``torch.overrides.TorchFunctionMode``).

While the mode is active every torch function and tensor method reaches
:meth:`TorchTracer.__torch_function__`, which runs it (the mode steps aside while it does) and
names its result from its operands' names. Tensors stay plain tensors; their names are kept
here, by identity, for the length of the trace.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from . import ops
from .axes import PRIMES
from .record import Recorder

RESHAPES = {
    "view",
    "reshape",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "view_as",
    "reshape_as",
    "ravel",
}
TRANSPOSES = {
    "transpose",
    "swapaxes",
    "swapdims",
    "permute",
    "movedim",
    "moveaxis",
    "t",
    "T",
    "mT",
    "adjoint",
}
REDUCTIONS = ops.REDUCTIONS | {"logsumexp", "norm"}
SOFTMAXES = {"softmax", "log_softmax", "_softmax"}
MATMULS = {"matmul", "__matmul__", "bmm", "mm", "mv", "dot"}
MASKS = {"masked_fill", "masked_fill_", "where"}
CONCATS = {"cat", "concat", "concatenate", "stack"}
SCALING = {
    "mul": "multiply",
    "__mul__": "multiply",
    "__rmul__": "multiply",
    "mul_": "multiply",
    "div": "divide",
    "__truediv__": "divide",
    "true_divide": "divide",
    "__div__": "divide",
    "div_": "divide",
    "divide": "divide",
}


class TorchTracer(TorchFunctionMode):
    """Names the results of torch's operations and records them."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder
        self.names = recorder.names
        self.known: dict[int, tuple] = {}  # id(tensor) -> (tensor, axes, step)

    def name(self, tensor, axes: tuple, step: int = 0):
        self.known[id(tensor)] = (tensor, axes, step)
        return tensor

    def axes(self, tensor) -> tuple:
        found = self.known.get(id(tensor))
        if found and found[0] is tensor:  # (reading its shape again took 30 µs in this mode)
            return found[1]
        return self.names.guess(tuple(tensor.shape))

    def step_of(self, tensor) -> int:
        found = self.known.get(id(tensor))
        return found[2] if found and found[0] is tensor else 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if isinstance(result, (tuple, list)) and result and isinstance(result[0], torch.Tensor):
            first = result[0]
        elif isinstance(result, torch.Tensor):
            first = result
        else:
            return result
        tensors = [x for x in _tensors(args) + _tensors(list(kwargs.values())) if x.dim()]
        if not tensors or first.dim() == 0:
            return result
        self._named(getattr(func, "__name__", str(func)), func, args, kwargs, tensors, first)
        return result

    def _named(self, name, func, args, kwargs, tensors, result):
        shape = tuple(result.shape)
        first = self.axes(tensors[0])
        if name in RESHAPES:
            out, flags = ops.reshape(self.names, first, shape)
            return self._done("reshape", name, tensors[:1], result, out, flags)
        if name in TRANSPOSES or (name == "__get__" and func.__self__.__name__ in TRANSPOSES):
            order = _probe(func, len(first), args[1:], kwargs)
            out, flags = ops.permute(first, order)
            op = name if name != "__get__" else func.__self__.__name__
            return self._done("transpose", op, tensors[:1], result, out, flags)
        if name in REDUCTIONS:
            moved = _probe_shape(func, len(first), args[1:], kwargs)
            kept = [PRIMES.index(size) for size in moved if size != 1]
            out, flags = ops.reduce(first, kept, keepdims=len(moved) == len(first))
            return self._done("reduction", name, tensors[:1], result, out, flags)
        if name in SOFTMAXES:
            dim = kwargs.get("dim", args[1] if len(args) > 1 else -1)
            out, flags = ops.softmax(first, dim)
            return self._done("softmax", name, tensors[:1], result, out, flags)
        if name in MATMULS:
            out, flags = ops.matmul(self.names, first, self.axes(tensors[1]), shape)
            return self._done(
                "matmul", "@" if "matmul" in name else name, tensors[:2], result, out, flags
            )
        if name == "linear":
            out, flags = ops.linear(self.names, first, self.axes(tensors[1]), shape)
            return self._done("matmul", "linear", tensors[:2], result, out, flags)
        if name == "einsum":
            operands = (
                args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
            )
            out, flags = ops.einsum(self.names, args[0], [self.axes(t) for t in operands], shape)
            return self._done("einsum", f"einsum {args[0]}", tensors, result, out, flags)
        if name in MASKS:
            operands = [
                self.axes(x) if isinstance(x, torch.Tensor) and x.dim() else () for x in args
            ]
            mask = 0 if name == "where" else 1
            out, flags = ops.elementwise(self.names, operands, shape, masks=[mask])
            return self._done("masking", name, tensors, result, out, flags)
        if name == "__getitem__":
            key = args[1]
            if isinstance(key, torch.Tensor) or (isinstance(key, tuple) and _tensors(list(key))):
                out, flags = self.names.guess(shape), []
            else:
                out, flags = ops.index(self.names, first, key, shape)
            return self._done("indexing", "[]", tensors[:1], result, out, flags)
        if name in CONCATS:
            axis = kwargs.get("dim", args[1] if len(args) > 1 else 0)
            operands = [self.axes(t) for t in args[0]]
            out, flags = ops.concatenate(self.names, operands, axis, shape, stacked=name == "stack")
            return self._done("concatenation", name, tensors, result, out, flags)
        if _broadcasts([tuple(t.shape) for t in tensors], shape) and name not in KEEPS:
            scalars = [
                (float(x), i == 1 and SCALING.get(name) == "divide" and not name.startswith("__r"))
                for i, x in enumerate(args[:2])
                if (isinstance(x, (int, float)) and not isinstance(x, bool))
                or (isinstance(x, torch.Tensor) and x.dim() == 0)
            ]
            if name == "__rtruediv__":
                scalars = []
            masks = (
                [i for i, t in enumerate(tensors) if t.dtype == torch.bool]
                if len(tensors) > 1
                else []
            )
            out, flags = ops.elementwise(
                self.names,
                [self.axes(t) for t in tensors],
                shape,
                op=SCALING.get(name, name),
                scalars=scalars,
                masks=masks,
            )
            return self._done("elementwise", name.strip("_"), tensors, result, out, flags)
        if tuple(tensors[0].shape) == shape:
            return self.name(result, first, self.step_of(tensors[0]))
        return self._done("other", name, tensors, result, self.names.guess(shape), [])

    def _done(self, kind, op, tensors, result, out, flags):
        step = self.recorder.record(kind, op, [self.axes(t) for t in tensors], out, flags)
        return self.name(result, out, step)


# operations that keep their operand's names and are not worth a row of their own
KEEPS = {
    "contiguous",
    "clone",
    "to",
    "float",
    "double",
    "half",
    "detach",
    "type_as",
    "cpu",
    "requires_grad_",
    "dropout",
    "__get__",
    "type",
    "copy_",
    "isfinite",
    "isnan",
    "isinf",
}


def _tensors(values) -> list:
    found = []
    for value in values:
        if isinstance(value, (list, tuple)):
            found += _tensors(value)
        elif isinstance(value, torch.Tensor):
            found.append(value)
    return found


def _broadcasts(shapes: list, shape: tuple) -> bool:
    """Whether ``shapes`` broadcast to ``shape`` (torch.broadcast_shapes took 0.3 ms a call)."""
    for each in shapes:
        if len(each) > len(shape):
            return False
        for size, target in zip(reversed(each), reversed(shape)):
            if size != target and size != 1:
                return False
    return True


def _probe_shape(func, ndim: int, rest, kwargs) -> tuple:
    result = func(torch.empty(PRIMES[:ndim], device="meta"), *rest, **kwargs)
    result = result[0] if isinstance(result, tuple) else result
    return tuple(result.shape)


def _probe(func, ndim: int, rest, kwargs) -> list:
    """Where each axis went (or which were kept): ``func`` run on an empty tensor of distinct
    sizes, on the meta device (no memory)."""
    sizes = PRIMES[:ndim]
    return [sizes.index(size) for size in _probe_shape(func, ndim, rest, kwargs) if size in sizes]
