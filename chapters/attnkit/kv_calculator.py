"""The key-value cache calculator: the cache's size, what a decoding step reads, what fits.

Chapter 7's formula for the cache of grouped-query attention (``g`` key-value heads; ``g = h``
is multi-head attention) is :func:`kv_cache_bytes`::

    cache = 2 · layers · g · d_k · n · b · (bytes per number)

:func:`decoding_budget` adds what a decoding step reads besides the cache (every weight once,
shared by the batch) and the largest batch whose caches fit in a memory beside the weights;
:func:`describe` writes each of its numbers as the calculator shows it. All three work on
Python's integers, exactly.

:class:`KVCacheCalculator` is the interactive calculator (an anywidget). Its front end
(``kv_calculator.js``) computes the same numbers in the browser, with JavaScript's exact
integers (``BigInt``), and writes them in the same words, so the calculator works on the static
web page, where no kernel runs. In a live kernel the inputs a reader changes are written back to
the widget's traits, and :meth:`KVCacheCalculator.budget` computes what it shows.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets as t

from .rules import check_kv_heads, positive_int

__all__ = [
    "INPUTS",
    "PRESETS",
    "kv_cache_bytes",
    "decoding_budget",
    "format_bytes",
    "describe",
    "KVCacheCalculator",
    "InvalidCalculatorInput",
]

HERE = Path(__file__).resolve().parent

# The calculator's inputs, in the order it shows them, each with its label.
INPUTS = {
    "layers": "layers",
    "query_heads": "query heads h",
    "kv_heads": "key-value heads g",
    "head_size": "head size d_k",
    "length": "length n (tokens)",
    "batch": "batch b (sequences)",
    "bytes_per_number": "bytes per number",
    "parameters": "parameters (weights)",
    "memory_gib": "memory (GiB)",
}

# Models whose shapes chapter 7 uses, each with its context length, which choosing it sets
# (the menu then still names the model for any shorter or longer length). 16-bit numbers are the
# calculator's default. The parameter counts follow from each model's shape (the chapter computes
# them).
PRESETS = {
    "GPT-2 small": dict(
        layers=12, query_heads=12, kv_heads=12, head_size=64, length=1024, parameters=124_439_808
    ),
    "Llama 3.1 8B": dict(
        layers=32,
        query_heads=32,
        kv_heads=8,
        head_size=128,
        length=131_072,
        parameters=8_030_261_248,
    ),
}

GIB = 2**30
UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def _checked(sizes: dict) -> dict:
    """Each size as an ``int`` if all are positive integers that JavaScript holds exactly and the
    heads divide, else ValueError."""
    checked = {
        name: check_safe_integer(positive_int(value, name), name) for name, value in sizes.items()
    }
    if "query_heads" in checked:
        check_kv_heads(checked["query_heads"], checked["kv_heads"])
    return checked


def kv_cache_bytes(layers, kv_heads, head_size, length, batch=1, bytes_per_number=2) -> int:
    """The key-value cache of ``batch`` sequences of ``length`` tokens, in bytes: a key and a
    value of ``head_size`` numbers for every key-value head, layer and token."""
    s = _checked(
        dict(
            layers=layers,
            kv_heads=kv_heads,
            head_size=head_size,
            length=length,
            batch=batch,
            bytes_per_number=bytes_per_number,
        )
    )
    return (
        2
        * s["layers"]
        * s["kv_heads"]
        * s["head_size"]
        * s["length"]
        * s["batch"]
        * s["bytes_per_number"]
    )


def decoding_budget(
    *,
    layers,
    query_heads,
    kv_heads,
    head_size,
    length,
    batch,
    bytes_per_number,
    parameters,
    memory_gib,
) -> dict:
    """What one decoding step of a batch reads, and what fits in a memory, all in bytes.

    Returns a dict of integers: ``cache_per_token`` (one token of one sequence, all layers),
    ``cache_per_sequence`` (``length`` tokens), ``cache`` (the batch), ``weights`` (every
    parameter in ``bytes_per_number`` bytes, read once per step and shared by the batch),
    ``step`` (``weights + cache``: the bytes a step reads), ``multi_head_cache`` (the batch's
    cache with ``g = h``, no sharing), ``memory`` (``memory_gib`` GiB) and ``largest_batch``
    (how many sequences of ``length`` tokens have room for their caches beside the weights;
    0 if not one).
    """
    s = _checked(
        dict(
            layers=layers,
            query_heads=query_heads,
            kv_heads=kv_heads,
            head_size=head_size,
            length=length,
            batch=batch,
            bytes_per_number=bytes_per_number,
            parameters=parameters,
            memory_gib=memory_gib,
        )
    )
    per_token = kv_cache_bytes(
        s["layers"], s["kv_heads"], s["head_size"], 1, 1, s["bytes_per_number"]
    )
    per_sequence = per_token * s["length"]
    cache = per_sequence * s["batch"]
    weights = s["parameters"] * s["bytes_per_number"]
    memory = s["memory_gib"] * GIB
    return dict(
        cache_per_token=per_token,
        cache_per_sequence=per_sequence,
        cache=cache,
        weights=weights,
        step=weights + cache,
        multi_head_cache=cache // s["kv_heads"] * s["query_heads"],
        memory=memory,
        largest_batch=max(memory - weights, 0) // per_sequence,
    )


def _rounded(numerator: int, denominator: int, digits: int) -> str:
    """``numerator / denominator`` to ``digits`` decimals, halves rounded up, from integers only
    (as kv_calculator.js rounds ``BigInt``s), so that both write the same digits."""
    scaled = (2 * numerator * 10**digits + denominator) // (2 * denominator)
    whole, fraction = divmod(scaled, 10**digits)
    return f"{whole:,}.{fraction:0{digits}d}" if digits else f"{whole:,}"


def format_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit it reaches, to two decimals, and exactly:
    ``format_bytes(301989888) == "288.00 MiB (301,989,888 bytes)"``."""
    if n < 1024:
        return f"{n:,} bytes"
    power = 1
    while power < len(UNITS) and n >= 1024 ** (power + 1):
        power += 1
    return f"{_rounded(n, 1024**power, 2)} {UNITS[power - 1]} ({n:,} bytes)"


def describe(budget: dict) -> dict:
    """The text of each output of the calculator for a :func:`decoding_budget`, as shown."""
    b = budget
    if b["memory"] < b["weights"]:
        largest = "none: the weights alone do not fit"
    elif b["largest_batch"] == 0:
        largest = "none: one sequence's cache does not fit beside the weights"
    else:
        largest = f"{b['largest_batch']:,} sequence{'s' if b['largest_batch'] > 1 else ''}"
    return {
        "cache_per_token": format_bytes(b["cache_per_token"]),
        "cache_per_sequence": format_bytes(b["cache_per_sequence"]),
        "cache": format_bytes(b["cache"]),
        "weights": format_bytes(b["weights"]),
        "step": format_bytes(b["step"]),
        "cache_share": f"{_rounded(100 * b['cache'], b['step'], 1)} %",
        "multi_head_cache": format_bytes(b["multi_head_cache"]),
        "largest_batch": largest,
    }


class InvalidCalculatorInput(t.TraitError, ValueError):
    """An input the calculator cannot compute with: a ``ValueError``, and traitlets'
    ``TraitError`` so that a batch of changes it ends (a message from the front end) is undone."""


class KVCacheCalculator(anywidget.AnyWidget):
    """The key-value cache calculator, computed in the browser (works with or without a kernel).

    ``KVCacheCalculator("GPT-2 small", batch=8)`` starts from a model of :data:`PRESETS`;
    any input of :data:`INPUTS` can be given or changed (``calculator.batch = 16``). Every
    assignment is checked (positive integers, ``kv_heads`` dividing ``query_heads``); one that
    raises ``ValueError`` leaves the calculator as it was. :meth:`budget` and :meth:`text`
    compute what the front end shows.
    """

    _esm = HERE / "kv_calculator.js"
    _css = HERE / "kv_calculator.css"

    layers = t.Int(12).tag(sync=True)
    query_heads = t.Int(12).tag(sync=True)
    kv_heads = t.Int(12).tag(sync=True)
    head_size = t.Int(64).tag(sync=True)
    length = t.Int(1024).tag(sync=True)
    batch = t.Int(1).tag(sync=True)
    bytes_per_number = t.Int(2).tag(sync=True)
    parameters = t.Int(124_439_808).tag(sync=True)
    memory_gib = t.Int(80).tag(sync=True)
    presets = t.Dict().tag(sync=True)  # the menu of models: name -> inputs it sets

    def __init__(self, preset: str | None = "GPT-2 small", **inputs):
        unknown = set(inputs) - set(INPUTS)
        if unknown:
            raise ValueError(f"unknown inputs {sorted(unknown)}; choose from {list(INPUTS)}")
        if preset is not None and preset not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)} or None, got {preset!r}")
        values = {name: getattr(type(self), name).default_value for name in INPUTS}
        values |= PRESETS.get(preset, {}) | inputs
        checked = _checked(values)
        # every trait in one go: the front end's first message carries the full state
        super().__init__(**checked, presets={name: dict(p) for name, p in PRESETS.items()})

    def inputs(self) -> dict:
        return {name: getattr(self, name) for name in INPUTS}

    @t.validate(*INPUTS)
    def _valid_inputs(self, proposal):
        """Every input assigned, from Python or from the front end, keeps the calculator's
        numbers defined (checked together when several change at once)."""
        try:
            _checked(self.inputs() | {proposal.trait.name: proposal.value})
        except ValueError as error:
            raise InvalidCalculatorInput(str(error)) from None
        return proposal.value

    def budget(self) -> dict:
        """:func:`decoding_budget` of the current inputs: the numbers the calculator shows."""
        return decoding_budget(**self.inputs())

    def text(self) -> dict:
        """:func:`describe` of :meth:`budget`: the outputs as the calculator writes them."""
        return describe(self.budget())


# --- input rules only this module applies


SAFE_INTEGER = 2**53 - 1  # the largest integer JavaScript's numbers hold exactly


def check_safe_integer(value: int, name: str) -> int:
    """``value`` if a JavaScript number holds it exactly (at most 2**53 - 1, as a widget's
    front end receives it), else ValueError."""
    if value > SAFE_INTEGER:
        raise ValueError(f"{name} must be at most {SAFE_INTEGER:,}, got {value:,}")
    return value
