"""The messages between the grader and a student's notebook process: plain data, no pickle.

A value crosses as JSON plus raw buffers: numbers, strings, None, tuples and lists of them,
NumPy arrays and scalars, torch tensors and dtypes. Anything else crosses only as the name of
its type (:class:`Opaque`), so an object from the student's process can never run code in the
grader's: the grader rebuilds every array from bytes, in a dtype it allows, with the shape the
bytes can hold. A frame is an 8-byte length and a JSON header, then each buffer with its
length; :func:`receive` refuses frames larger than :data:`MAX_BYTES`.
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import sys
import time

import numpy as np

MAX_BYTES = 1 << 28  # a frame's size at most: arrays of a check's inputs are far smaller
MAX_ITEMS = 10_000  # values in one message at most (nested tuples and lists included)
ARRAY_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
}  # fmt: skip
TENSOR_DTYPES = ARRAY_DTYPES - {"uint16", "uint32", "uint64", "complex64", "complex128"}
_LENGTH = struct.Struct("<Q")
_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,59}$")


class WireError(Exception):
    """A message that is not one this protocol sends."""


class Opaque:
    """An object that crossed only as its type's name; its class bears that name."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} from the student's notebook>"


def _opaque(name: str) -> Opaque:
    name = name if isinstance(name, str) and _TYPE_NAME.match(name) else "object"
    return type(name, (Opaque,), {})()


def _torch():
    """torch where a check has imported it; None while another grading thread is still importing
    it (sys.modules then holds it half made, and no tensor can exist yet)."""
    torch = sys.modules.get("torch")
    importing = getattr(getattr(torch, "__spec__", None), "_initializing", False)
    return None if importing else torch


def encode(value, buffers: list[bytes], budget: list[int]):
    """``value`` as JSON-able data; its arrays' bytes go to ``buffers``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError(f"more than {MAX_ITEMS} values in one message")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return {"int": str(value)}
    if type(value) is float:
        return {"float": value.hex()}
    if type(value) in (tuple, list):
        return {type(value).__name__: [encode(v, buffers, budget) for v in value]}
    if type(value) is np.ndarray and value.dtype.name in ARRAY_DTYPES:
        buffers.append(np.ascontiguousarray(value).tobytes())
        return {"ndarray": value.dtype.name, "shape": list(value.shape), "at": len(buffers) - 1}
    if isinstance(value, np.generic) and type(value).__name__ in ARRAY_DTYPES | {"bool_"}:
        buffers.append(value.tobytes())
        return {"scalar": np.dtype(type(value)).name, "at": len(buffers) - 1}
    torch = _torch()
    if torch is not None and type(value) is torch.Tensor:
        name = str(value.dtype).removeprefix("torch.")
        if name in TENSOR_DTYPES and value.layout == torch.strided:
            array = value.detach().cpu().contiguous().numpy()
            buffers.append(array.tobytes())
            return {"tensor": name, "shape": list(array.shape), "at": len(buffers) - 1}
    if torch is not None and isinstance(value, torch.dtype):
        return {"torch_dtype": str(value).removeprefix("torch.")}
    return {"opaque": type(value).__name__}


def decode(data, buffers: list[bytes]):
    """The value ``data`` describes, rebuilt from plain bytes."""
    if data is None or isinstance(data, (bool, str)):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 2, 3):
        raise WireError(f"not a value: {str(data)[:80]}")
    if "int" in data:
        return int(data["int"])
    if "float" in data:
        return float.fromhex(data["float"])
    if "tuple" in data or "list" in data:
        kind = "tuple" if "tuple" in data else "list"
        if not isinstance(data[kind], list):
            raise WireError(f"a {kind} that holds no list")
        items = [decode(item, buffers) for item in data[kind]]
        return tuple(items) if kind == "tuple" else items
    if "opaque" in data:
        return _opaque(data["opaque"])
    if "torch_dtype" in data:
        import torch

        name = data["torch_dtype"]
        if name not in TENSOR_DTYPES:
            raise WireError(f"no torch dtype {name!r}")
        return getattr(torch, name)
    if "scalar" in data:
        return _array(data["scalar"], [], _buffer(data, buffers), ARRAY_DTYPES)[()]
    if "ndarray" in data:
        return _array(data["ndarray"], data.get("shape"), _buffer(data, buffers), ARRAY_DTYPES)
    if "tensor" in data:
        import torch

        array = _array(data["tensor"], data.get("shape"), _buffer(data, buffers), TENSOR_DTYPES)
        return torch.from_numpy(array)
    raise WireError(f"not a value: {str(data)[:80]}")


def _buffer(data: dict, buffers: list[bytes]) -> bytes:
    at = data.get("at")
    if type(at) is not int or not 0 <= at < len(buffers):
        raise WireError("an array whose bytes are missing")
    return buffers[at]


def _array(dtype: str, shape, raw: bytes, allowed: set[str]) -> np.ndarray:
    if dtype not in allowed:
        raise WireError(f"no array of dtype {dtype!r}")
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError(f"not a shape: {str(shape)[:80]}")
    itemsize = np.dtype(dtype).itemsize
    if int(np.prod(shape, dtype=np.int64)) * itemsize != len(raw):
        raise WireError(f"{len(raw)} bytes cannot hold an array of shape {shape} and {dtype}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def send(fd: int, message: dict) -> None:
    """Write ``message`` (a dict whose values :func:`encode` takes) to the file descriptor."""
    buffers: list[bytes] = []
    header = json.dumps(
        {key: encode(value, buffers, [MAX_ITEMS]) for key, value in message.items()}
    ).encode()
    parts = [_LENGTH.pack(len(header)), header, _LENGTH.pack(len(buffers))]
    for buffer in buffers:
        parts += [_LENGTH.pack(len(buffer)), buffer]
    _write_all(fd, b"".join(parts))


def receive(read) -> dict:
    """The next message, read with ``read(n)`` (which returns exactly n bytes or raises)."""
    total = [0]

    def chunk() -> bytes:
        (size,) = _LENGTH.unpack(read(_LENGTH.size))
        total[0] += size
        if total[0] > MAX_BYTES:
            raise WireError(f"a message larger than {MAX_BYTES} bytes")
        return read(size)

    try:
        header = json.loads(chunk())
    except ValueError as error:
        raise WireError(f"a header that is not JSON ({error})") from None
    (count,) = _LENGTH.unpack(read(_LENGTH.size))
    if not isinstance(header, dict) or count > MAX_ITEMS:
        raise WireError("a message that is not a mapping")
    buffers = [chunk() for _ in range(count)]
    return {key: decode(value, buffers) for key, value in header.items()}


def reader(fd: int, deadline: float | None = None):
    """``read(n)`` for :func:`receive`: exactly ``n`` bytes from ``fd``. EOFError at its end,
    TimeoutError once ``time.monotonic()`` passes ``deadline``."""

    def read(n: int) -> bytes:
        parts, left = [], n
        while left:
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                    raise TimeoutError("no answer in time")
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                raise EOFError("the other process closed the channel")
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    return read


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
