"""Amounts of schedulable resources: one immutable type keyed by Kubernetes resource name.

Every amount is an integer in its resource's canonical unit (catalog/quantities.py
RESOURCE_TABLE: CPU in millicores, memory in bytes, GPUs whole), kept in the table's order, so
two amounts compare, add and print the same way wherever they come from: a quota, a node's
allocatable, a pod's requests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from catalog.quantities import GPU_RESOURCE, RESOURCE_KINDS, RESOURCES, UNLIMITED, format_memory


class Amounts(Mapping[str, int]):
    """An amount of every resource of the table (absent ones are 0). Immutable and hashable."""

    __slots__ = ("_values",)
    _values: tuple[int, ...]

    def __init__(self, values: Mapping[str, int] | None = None, /) -> None:
        given = dict(values or {})
        unknown = sorted(set(given) - set(RESOURCES))
        if unknown:
            raise KeyError(f"not a resource of the table: {', '.join(unknown)}")
        object.__setattr__(self, "_values", tuple(int(given.get(r, 0)) for r in RESOURCES))

    @classmethod
    def of(cls, **by_key: int) -> Amounts:
        """By the stack file's keys: `Amounts.of(gpu=1, cpu=12000, memory=96 * 2**30)`."""
        names = {kind.key: name for name, kind in RESOURCE_KINDS.items()}
        return cls({names[key]: value for key, value in by_key.items()})

    @classmethod
    def parse(cls, quantities: Mapping[str, object]) -> Amounts:
        """From Kubernetes quantities keyed by resource name (`{"cpu": "12", "memory": "96Gi"}`)."""
        return cls({name: RESOURCE_KINDS[name].parse(value) for name, value in quantities.items()})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Amounts are immutable")

    def __getitem__(self, resource: str) -> int:
        return self._values[RESOURCES.index(resource)]

    def get(self, resource: str, default: int = 0) -> int:  # type: ignore[override]
        return self[resource] if resource in RESOURCES else default

    def __iter__(self) -> Iterator[str]:
        return iter(RESOURCES)

    def __len__(self) -> int:
        return len(RESOURCES)

    def __hash__(self) -> int:
        return hash(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Amounts):
            return self._values == other._values
        return NotImplemented

    def __repr__(self) -> str:
        return f"Amounts({self.nonzero()!r})"

    def __add__(self, other: Amounts) -> Amounts:
        return Amounts({r: self[r] + other[r] for r in RESOURCES})

    def __sub__(self, other: Amounts) -> Amounts:
        return Amounts({r: self[r] - other[r] for r in RESOURCES})

    def times(self, factor: int) -> Amounts:
        return Amounts({r: self[r] * factor for r in RESOURCES})

    def floor_div(self, divisor: int) -> Amounts:
        return Amounts({r: self[r] // divisor for r in RESOURCES})

    def at_most(self, other: Amounts) -> Amounts:
        """The lesser of the two, resource by resource."""
        return Amounts({r: min(self[r], other[r]) for r in RESOURCES})

    def at_least(self, other: Amounts) -> Amounts:
        """The greater of the two, resource by resource."""
        return Amounts({r: max(self[r], other[r]) for r in RESOURCES})

    def fits_in(self, other: Amounts) -> bool:
        return all(self[r] <= other[r] for r in RESOURCES)

    def copies_in(self, other: Amounts) -> int:
        """How many of these fit in `other` at once, counting only what this amount asks for."""
        fits = [other[r] // self[r] for r in RESOURCES if self[r] > 0]
        return min(fits) if fits else 0

    def nonzero(self) -> dict[str, int]:
        """Resource name -> amount, the resources asked for only (Kueue's pod-set totals)."""
        return {r: v for r, v in zip(RESOURCES, self._values, strict=True) if v > 0}

    def quantities(self) -> dict[str, str | int]:
        """Every resource as the Kubernetes quantity objects carry (`12`, `96Gi`, 1)."""
        return {r: RESOURCE_KINDS[r].format(self[r]) for r in RESOURCES}

    def describe(self) -> str:
        """As a person reads it: GPUs, CPU, memory, leaving out what is zero."""
        return describe_amounts(self)


def describe_amount(resource: str, value: int) -> str:
    """One amount as a person reads it: `4 GPUs`, `12 CPU`, `96Gi`, `unlimited`."""
    if value == UNLIMITED:
        return "unlimited"
    if resource == GPU_RESOURCE:
        return f"{value} GPU" if value == 1 else f"{value} GPUs"
    if resource == "cpu":
        return f"{value / 1000:g} CPU"
    if RESOURCE_KINDS[resource].unit != "bytes":  # another count: `2 <key>`
        return f"{value} {RESOURCE_KINDS[resource].key}"
    text = format_memory(value)
    return text if text.endswith(("Gi", "Ti", "Pi", "Ei")) else f"{value / 1024**3:.1f}Gi"


# How people read a set of amounts: the GPUs first, the resource the platform is about.
READING_ORDER = (GPU_RESOURCE, *(r for r in RESOURCES if r != GPU_RESOURCE))


def describe_amounts(values: Mapping[str, int]) -> str:
    """GPUs, then the others in the table's order, leaving out what is zero."""
    return ", ".join(describe_amount(r, values[r]) for r in READING_ORDER if values.get(r))
