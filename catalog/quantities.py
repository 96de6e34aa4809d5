"""Kubernetes resources and quantities: their names, and how amounts are written and read.

Parsing and formatting cover only the forms a quota needs: plain integers, decimal SI suffixes
(k, M, G, T, P, E), binary suffixes (Ki, Mi, Gi, Ti, Pi, Ei) and the milli suffix `m` for CPU.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

# A quota amount written as `unlimited` in the stack file (KAI's own spelling of unlimited).
UNLIMITED: Final = -1

GPU_RESOURCE: Final = "nvidia.com/gpu"

_BINARY: Final[dict[str, int]] = {
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "Pi": 1024**5,
    "Ei": 1024**6,
}
_DECIMAL: Final[dict[str, int]] = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
_QUANTITY = re.compile(
    r"^(?P<number>[0-9]+(\.[0-9]+)?)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?\Z"
)


class QuantityError(ValueError):
    """A value is not a Kubernetes quantity of the expected kind."""


def _parse(value: object) -> tuple[Decimal, str]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise QuantityError(f"expected a quantity such as 16, 500m or 64Gi, got {value!r}")
    text = str(value)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{text!r} is not a Kubernetes quantity (write e.g. 16, 500m, 64Gi or 64G)"
        )
    try:
        number = Decimal(match.group("number"))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise QuantityError(f"{text!r} is not a number") from exc
    return number, match.group("suffix") or ""


def parse_cpu_millis(value: object) -> int:
    """CPU quantity to whole millicores (`16` -> 16000, `500m` -> 500)."""
    number, suffix = _parse(value)
    if suffix == "m":
        millis = number
    elif suffix == "":
        millis = number * 1000
    else:
        raise QuantityError(f"CPU is counted in cores or millicores (16 or 500m), not {suffix!r}")
    if millis != millis.to_integral_value():
        raise QuantityError(f"{value!r} is finer than one millicore")
    return int(millis)


def parse_memory_bytes(value: object) -> int:
    """Memory quantity to bytes (`64Gi` -> 68719476736). Bare numbers are bytes."""
    number, suffix = _parse(value)
    if suffix == "m":
        raise QuantityError("memory does not take the milli suffix `m`; write e.g. 64Gi or 512Mi")
    factor = _BINARY.get(suffix) or _DECIMAL[suffix]
    total = number * factor
    if total != total.to_integral_value():
        raise QuantityError(f"{value!r} is not a whole number of bytes")
    return int(total)


def format_cpu(millis: int) -> str:
    """Millicores to the shortest exact quantity (`16000` -> "16", `1500` -> "1500m")."""
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(num_bytes: int) -> str:
    """Bytes to the largest exact binary quantity (`68719476736` -> "64Gi")."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        factor = _BINARY[suffix]
        if num_bytes >= factor and num_bytes % factor == 0:
            return f"{num_bytes // factor}{suffix}"
    return str(num_bytes)


def parse_count(value: object) -> int:
    """A whole count of an extended resource (`nvidia.com/gpu`): `4` -> 4."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise QuantityError(f"expected a whole number, got {value!r}")
    text = str(value)
    if not text.isdigit():
        raise QuantityError(f"{text!r} is not a whole number")
    return int(text)


def format_count(count: int) -> int:
    """A count as Kubernetes objects carry it: a plain integer."""
    return count


@dataclass(frozen=True)
class ResourceKind:
    """One schedulable resource: how Kubernetes names it, how the stack file, the plan and KAI
    key it, its canonical unit, and how its quantities are read and written."""

    name: str  # the Kubernetes resource name
    key: str  # the stack file's, the plan summary's and KAI's key
    unit: str  # the canonical integer unit every amount is counted in
    parse: Callable[[object], int]
    format: Callable[[int], str | int]
    maximum: int  # a sanity bound in canonical units: a quota past it is a typo, not a plan
    hint: str  # how to write an amount, for error messages


# THE resource table. Its order is the one order amounts are kept and every ClusterQueue flavor
# lists them in (Kueue's coveredResources). A new quota resource is a new row here.
RESOURCE_TABLE: Final = (
    ResourceKind(
        "cpu", "cpu", "millicores", parse_cpu_millis, format_cpu, 10_000_000 * 1000,
        "write cores or millicores, e.g. 16 or 500m",
    ),
    ResourceKind(
        "memory", "memory", "bytes", parse_memory_bytes, format_memory, 2**60,
        "write e.g. 64Gi or 512Mi",
    ),
    ResourceKind(
        GPU_RESOURCE, "gpu", "GPUs", parse_count, format_count, 100_000,
        "write a whole number of GPUs",
    ),
)  # fmt: skip
RESOURCE_KINDS: Final[dict[str, ResourceKind]] = {kind.name: kind for kind in RESOURCE_TABLE}
# The resources every flavor covers, in the table's order.
RESOURCES: Final = tuple(kind.name for kind in RESOURCE_TABLE)
# Kubernetes resource name -> the key the stack file, the plan summary and KAI's queues use.
RESOURCE_KEYS: Final[dict[str, str]] = {kind.name: kind.key for kind in RESOURCE_TABLE}
