"""What PyTorch did during a student's call: which operations it ran, and its memory at most.

A NumPy-only exercise cannot rely on tripwires on PyTorch's functions alone: PyTorch has far
more ways in (``torch.zeros`` and a copy, ``torch.tensor(list)``, a method of a tensor made
elsewhere) than a list can name. :func:`watching` puts a dispatch mode on PyTorch's stack
for the call instead. Every PyTorch operation, however it was reached, passes through that
stack below the Python API (so ``torch._C.DisableTorchFunction`` does not hide one), and the
mode records it and counts the bytes of every tensor it creates while the tensor lives:
tracemalloc sees NumPy's arrays, not PyTorch's. A function that takes the mode off the stack,
or that imports PyTorch itself during the call (before which no mode could be put there), is
reported as having used PyTorch.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Watch", "watching"]


@dataclass
class Watch:
    """What PyTorch did during the call: ``used`` is True when it ran any operation (or was
    imported, or its watch was removed), ``peak_bytes`` the most its tensors held at once."""

    used: bool = False
    peak_bytes: int = 0
    live: dict = field(default_factory=dict)  # storage address -> [bytes, tensors alive]
    held: int = 0

    def created(self, tensor) -> None:
        """Count ``tensor``'s storage until the last tensor seen on it dies."""
        storage = tensor.untyped_storage()
        address, size = storage.data_ptr(), storage.nbytes()
        if not size:
            return
        entry = self.live.get(address)
        if entry is None:
            entry = self.live[address] = [size, 0]
            self.held += size
            self.peak_bytes = max(self.peak_bytes, self.held)
        entry[1] += 1
        weakref.finalize(tensor, self._released, address)

    def _released(self, address) -> None:
        entry = self.live.get(address)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            self.held -= entry[0]
            del self.live[address]


def _mode(watch: Watch):
    """A dispatch mode that reports every operation, and every tensor it returns, to ``watch``."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class PyTorchWatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            watch.used = True
            result = func(*args, **(kwargs or {}))
            for leaf in tree_leaves(result):
                if isinstance(leaf, torch.Tensor):
                    watch.created(leaf)
            return result

    return PyTorchWatch()


@contextmanager
def watching() -> Iterator[Watch]:
    """Watch PyTorch while the block runs; the :class:`Watch` is complete when the block ends."""
    watch = Watch()
    torch = sys.modules.get("torch")
    if getattr(torch, "Tensor", None) is None:  # not imported, or half made in another thread
        imported = torch is not None
        yield watch
        watch.used = not imported and "torch" in sys.modules  # imported during the call
        return
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    mode = _mode(watch)
    mode.__enter__()
    try:
        yield watch
    finally:
        stack = _get_current_dispatch_mode_stack()
        if stack and stack[-1] is mode:
            mode.__exit__(None, None, None)
        else:  # the function took the watch off PyTorch's stack, or put another on it
            watch.used = True
            while any(m is mode for m in _get_current_dispatch_mode_stack()):
                _get_current_dispatch_mode_stack()[-1].__exit__(None, None, None)
