"""Named axes: what each axis of a traced array holds, and how names follow an operation.

Every atomic name (``B``, ``T``, ``d_k`` …) is given a distinct prime size, so that a size says
which axes an axis is made of: a reshape of ``(T, d_model)`` into ``(H, T, d_k)`` cannot be read
as a split of ``d_model = H·d_k`` and is seen to mix ``T`` with ``H``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

# the book's names for its axes, each a distinct prime, so that no two products coincide
SIZES = {"B": 2, "H": 3, "T": 5, "d_k": 7, "S": 11, "d_v": 13, "n": 17, "m": 19, "d": 23}
# axes that are a product of others, in row-major order: d_model is h heads of d_k columns
COMPOSITES = {"d_model": ("H", "d_k")}
# names of token axes: a product of two of them over a feature axis is a table of scores
TOKENS = {"T", "S", "n", "m", "L", "N"}
KEY_MARK = "'"  # "T'": the keys' copy of T, where queries and keys are the same tokens
# sizes of a probe, an empty array whose axes can be told apart: where an operation put them
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*'?$")


@dataclass(frozen=True)
class Axis:
    """One axis: the name it is shown by, its size, the atomic names it is the product of (in
    row-major order; empty when unknown), its role in a table of scores (``query``, ``key`` or
    empty), the feature axis a key axis was contracted over, and whether a reshape mixed it."""

    name: str
    size: int
    factors: tuple = ()
    role: str = ""
    over: Axis | None = None
    mixed: bool = False

    @property
    def base(self) -> str:
        """The name without the keys' mark: ``T'`` and ``T`` are the same tokens."""
        return self.name.removesuffix(KEY_MARK)

    def shown(self) -> str:
        return f"{self.name}?" if self.mixed else self.name

    def same_as(self, other: Axis) -> bool:
        """Whether the two axes hold the same thing (a merged ``H·d_k`` is ``d_model``)."""
        if self.mixed or other.mixed:
            return False
        if not self.factors or not other.factors:  # an axis of no known name: by its size
            return self.size == other.size
        return self.factors == other.factors


def shown(axes) -> str:
    """``(B, T, d_model)``."""
    return "(" + ", ".join(axis.shown() for axis in axes) + ")"


class Names:
    """The sizes of one trace: every atomic and composite name, and the axis each size names."""

    def __init__(self, sizes: dict | None = None):
        # a name given a tuple of names is a composite of its own (h: g groups of r heads)
        own = {name: tuple(v) for name, v in (sizes or {}).items() if isinstance(v, (tuple, list))}
        atomic = {**SIZES, **{n: v for n, v in (sizes or {}).items() if n not in own}}
        for name, size in atomic.items():
            if not NAME.match(name) or name.endswith(KEY_MARK):
                raise ValueError(f"axis name {name!r} is not a Python identifier")
            if not isinstance(size, int) or size < 2:
                raise ValueError(f"size of {name!r} must be an int of at least 2, not {size!r}")
        composites = {**COMPOSITES, **own}
        self.composites = {name: parts for name, parts in composites.items() if name not in atomic}
        for name, parts in own.items():
            if not NAME.match(name) or not set(parts) <= set(atomic):
                raise ValueError(f"composite axis {name!r} must be made of atomic names: {parts}")
        self.sizes = dict(atomic)
        for name, parts in self.composites.items():
            self.sizes[name] = math.prod(atomic[part] for part in parts)
        if len(set(self.sizes.values())) < len(self.sizes):
            raise ValueError(f"every axis needs a size of its own: {self.sizes}")
        self.used: dict[int, Axis] = {}  # the sizes of the names this trace has used

    def axis(self, name: str) -> Axis:
        """The axis that ``name`` (``T``, ``T'``, ``d_model``) stands for."""
        base = name.removesuffix(KEY_MARK)
        if base not in self.sizes:
            raise ValueError(f"unknown axis name {name!r}; known: {sorted(self.sizes)}")
        factors = self.composites.get(base, (base,))
        axis = Axis(name, self.sizes[base], factors, "key" if name != base else "")
        self.used.setdefault(axis.size, replace(axis, name=base, role=""))
        for part in factors:
            self.used.setdefault(self.sizes[part], Axis(part, self.sizes[part], (part,)))
        return axis

    def parse(self, spec: str) -> tuple:
        return tuple(self.axis(name) for name in spec.split())

    def by_size(self, size: int) -> Axis:
        """An axis known only by its size: named by the name of that size this trace uses."""
        if size == 1:
            return Axis("1", 1)
        if size in self.used:
            return self.used[size]
        for name, known in self.sizes.items():
            if known == size:
                return self.axis(name)
        return Axis(str(size), size)

    def guess(self, shape) -> tuple:
        return tuple(self.by_size(size) for size in shape)

    def merged(self, parts: list) -> Axis:
        """The axis that ``parts``, adjacent in row-major order, are merged into."""
        if len(parts) == 1:
            return parts[0]
        size = math.prod(part.size for part in parts)
        if not all(part.factors for part in parts):
            return self.by_size(size)  # a part of no known name: the whole is unknown too
        factors = tuple(f for part in parts for f in part.factors)
        for name, composite in self.composites.items():
            if composite == factors:
                return Axis(name, size, factors)
        return Axis("·".join(part.shown() for part in parts), size, factors)

    def atoms(self, axis: Axis) -> list:
        """The atomic axes ``axis`` is the product of, outermost first."""
        if len(axis.factors) > 1 and not axis.mixed:
            return [Axis(f, self.sizes[f], (f,)) for f in axis.factors]
        return [axis]


def broadcast(names: Names, operands: list, shape: tuple) -> tuple:
    """The axes of an elementwise result of ``shape``: each taken from an operand that is not
    broadcast along it (a role, where one operand has it, is kept)."""
    axes = []
    for position in range(1, len(shape) + 1):
        size = shape[-position]
        found = [a[-position] for a in operands if len(a) >= position and a[-position].size == size]
        found.sort(key=lambda axis: (not axis.role, axis.mixed))
        axes.append(found[0] if found else names.by_size(size))
    return tuple(reversed(axes))


def reshaped(names: Names, axes: tuple, shape: tuple) -> tuple[tuple, list]:
    """The axes of ``axes`` reshaped to ``shape``, and the groups of input axes it mixed (each
    a list of axes: merged though not adjacent, or split in another order than they were made)."""
    owned = [(atom, axis) for axis in axes if axis.size != 1 for atom in names.atoms(axis)]
    atoms = [atom for atom, _owner in owned]
    sources = {id(atom): owner for atom, owner in owned}
    wanted = [size for size in shape if size != 1]
    out: list = []
    mixed: list = []
    i = j = 0
    while j < len(wanted):
        # the output axes and atoms whose products first coincide: one group
        group_atoms, group_sizes = [atoms[i]], [wanted[j]]
        i, j = i + 1, j + 1
        while math.prod(a.size for a in group_atoms) != math.prod(group_sizes):
            if math.prod(a.size for a in group_atoms) < math.prod(group_sizes):
                group_atoms.append(atoms[i])
                i += 1
            else:
                group_sizes.append(wanted[j])
                j += 1
        out.extend(_grouped(names, group_atoms, group_sizes, sources, mixed))
    result, found = [], iter(out)
    for size in shape:
        result.append(Axis("1", 1) if size == 1 else next(found))
    return tuple(result), mixed


def _grouped(names: Names, atoms: list, sizes: list, sources: dict, mixed: list) -> list:
    """One group of a reshape: atoms merged into or split out of consecutive output axes, with
    the atoms that cannot be (the middle, between what matches from each end) mixed."""
    front, start = [], 0
    for size in sizes:
        end, product = start, 1
        while end < len(atoms) and product < size:
            product *= atoms[end].size
            end += 1
        if product != size:
            break
        front.append(_whole(names, atoms[start:end], sources))
        start = end
    if len(front) == len(sizes):
        return front
    back, stop = [], len(atoms)
    for size in reversed(sizes[len(front) :]):
        begin, product = stop, 1
        while begin > start and product < size:
            begin -= 1
            product *= atoms[begin].size
        if product != size:
            break
        back.insert(0, _whole(names, atoms[begin:stop], sources))
        stop = begin
    middle = sizes[len(front) : len(sizes) - len(back)]
    if not all(atom.factors for atom in atoms[start:stop]):
        # an axis of no known name may be a product of anything: nothing to judge
        return front + [names.by_size(size) for size in middle] + back
    mixed.append(atoms[start:stop])
    guesses = [replace(names.by_size(size), mixed=True, role="") for size in middle]
    return front + guesses + back


def _whole(names: Names, atoms: list, sources: dict) -> Axis:
    """The output axis made of these consecutive atoms: the input axis itself when they are
    all of one input axis, else their merge."""
    owners = {id(sources.get(id(atom), atom)) for atom in atoms}
    owner = sources.get(id(atoms[0]), atoms[0])
    if len(owners) == 1 and len(names.atoms(owner)) == len(atoms):
        return owner
    return names.merged(atoms)
