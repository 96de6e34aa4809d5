"""Kubernetes resources and quantities: their names, and how amounts are written and read.

Parsing takes Kubernetes' own quantity grammar (k8s.io/apimachinery `pkg/api/resource/quantity.go`):
a signed decimal number (`16`, `1.5`, `.5`, `5.`) and at most one suffix, binary (Ki, Mi, Gi, Ti,
Pi, Ei), decimal (n, u, m, k, M, G, T, P, E) or a decimal exponent (`1e11`, `100e9`, `5E-3`), the
form the API server writes back a quantity given as `1e11`. Amounts are exact (no floats): CPU in
whole millicores, memory in whole bytes; a negative amount is refused, as the API server refuses a
negative request. Formatting writes the shortest exact form (cores or millicores, a binary suffix).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
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
_FRACTIONS: Final[dict[str, int]] = {"n": -9, "u": -6, "m": -3}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|(?P<exponent>[eE][+-]?[0-9]+))?"
)
# Exponents beyond this are far outside any amount a node or a quota holds (either way).
_MAX_EXPONENT: Final = 40


class QuantityError(ValueError):
    """A value is not a Kubernetes quantity of the expected kind."""


def _parse(value: object) -> Decimal:
    """The amount a quantity stands for, exact (its suffix or exponent applied)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise QuantityError(f"expected a quantity such as 16, 500m or 64Gi, got {value!r}")
    text = repr(value) if isinstance(value, float) else str(value)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{text!r} is not a Kubernetes quantity (write e.g. 16, 500m, 64Gi, 64G or 1e11)"
        )
    suffix = match.group("suffix") or ""
    exponent = int(suffix[1:]) if match.group("exponent") else _FRACTIONS.get(suffix, 0)
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError(f"{text!r} is out of range (exponent {exponent})")
    with localcontext(prec=100):
        number = Decimal(match.group("number")).scaleb(exponent)
        if match.group("exponent") is None:
            number *= _BINARY.get(suffix) or _DECIMAL.get(suffix, 1)
    if match.group("sign") == "-" and number:
        raise QuantityError(f"{text!r} is negative; an amount is 0 or more")
    return number


def quantity_value(value: object) -> Decimal:
    """A quantity's exact value, whatever its form (`1e11` and `100e9` are equal)."""
    return _parse(value)


def parse_cpu_millis(value: object) -> int:
    """CPU quantity to whole millicores (`16` -> 16000, `500m` -> 500, `1e1` -> 10000)."""
    with localcontext(prec=100):
        millis = _parse(value) * 1000
    if millis != millis.to_integral_value():
        raise QuantityError(f"{value!r} is finer than one millicore")
    return int(millis)


def parse_memory_bytes(value: object) -> int:
    """Memory quantity to bytes (`64Gi` -> 68719476736, `1e11` -> 10**11). Bare numbers are
    bytes."""
    total = _parse(value)
    if total != total.to_integral_value():
        raise QuantityError(
            f"{value!r} is not a whole number of bytes; write e.g. 64Gi, 512Mi or 1e11"
        )
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
