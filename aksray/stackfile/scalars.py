"""What a YAML scalar of a stack file becomes by the time the Pulumi CLI hands it to the program.

The CLI (3.260) reads a stack file with Go's gopkg.in/yaml.v3 into plain Go values, writes that
back as YAML, reads it again into its config values, and passes each one to the program as text:
a scalar as its own text, a map or list as JSON (encoding/json). Three consequences matter here:

- numbers are read as Go reads them: a leading `0` is octal (`010` is 8), `0x`, `0o` and `0b`
  prefixes work in either case, `_` may separate digits anywhere, and what does not fit a 64-bit
  integer, or is written with a point or exponent, is a 64-bit float;
- a float travels as Go writes it: a whole number below 1e21 loses its point (`5.0` arrives as
  `5`, `1e6` as `1000000`); infinity and NaN cannot be written as JSON, and the CLI refuses them;
- an unquoted timestamp arrives as Go prints a time (`2026-12-01 00:00:00 +0000 UTC`).

Nothing here is Go's code: these are the rules, written for the values a stack file holds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

NULLS: Final = frozenset({"", "~", "null", "Null", "NULL"})
BOOLS: Final = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_SPECIAL_FLOATS: Final = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
UINT64_MAX: Final = 2**64 - 1
# Go's JSON writes a float in exponent form from here on (and below 1e-6).
_GO_JSON_EXPONENT_FROM: Final = 1e21
# Text a plain scalar must look like to be read as a float (YAML 1.2's core schema).
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_POINT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_INTEGER = re.compile(
    r"(?P<sign>[-+]?)(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)"
    r"|0(?P<legacy_oct>[0-7]*)|(?P<dec>[1-9][0-9]*))"
)
# The timestamps Go's YAML recognises: a date, optionally with a time (`T` or `t` and a zone,
# or a space and no zone).
_TIMESTAMP = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})"
    r"(?:(?:[Tt](?P<zoned>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)"
    r"(?P<zone>Z|[-+][0-9]{2}:[0-9]{2}))"
    r"|(?: (?P<plain>[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)))?"
)


class ScalarError(ValueError):
    """A scalar the Pulumi CLI refuses to read; the message says why and what to write."""


@dataclass(frozen=True)
class Timestamp:
    """An unquoted date or time: the program receives `text`, as Go prints the time."""

    text: str


def plain_scalar(text: str) -> object:
    """An unquoted, untagged scalar: None, a bool, an int, a float, a `Timestamp` or text."""
    if text in NULLS:
        return None
    if text in BOOLS:
        return BOOLS[text]
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    first = text[0]
    if first == ".":
        return _point_float(text)
    if first in "+-" or first.isdigit():
        stamp = timestamp(text)
        if stamp is not None:
            return stamp
        number = number_of(text)
        return text if number is None else number
    return text


def _point_float(text: str) -> object:
    if not _POINT_FLOAT.fullmatch(text):
        return text
    value = float(text)
    return text if math.isinf(value) else value


def number_of(text: str) -> int | float | None:
    """`text` as a number the way Go's YAML reads one (None when it is not one)."""
    plain = text.replace("_", "")
    integer = _integer(plain)
    if integer is not None:
        if INT64_MIN <= integer <= INT64_MAX:
            return integer
        if 0 <= integer <= UINT64_MAX and plain[0] not in "+-":  # unsigned: no sign allowed
            return integer
    if _FLOAT.fullmatch(plain):
        value = float(plain)  # Go refuses what overflows; Python gives infinity
        if not math.isinf(value):
            return value
    return None


_BASES: Final = {"hex": 16, "oct": 8, "bin": 2, "legacy_oct": 8, "dec": 10}


def _integer(plain: str) -> int | None:
    if plain.isdigit() and (plain[0] != "0" or len(plain) == 1) and len(plain) < 20:
        return int(plain)  # the common case: a plain decimal
    match = _INTEGER.fullmatch(plain)
    if match is None or match.lastgroup is None:
        return None
    digits = match[match.lastgroup].lstrip("0") or "0"
    if len(digits) > 64:  # far beyond 64 bits in any base: not an integer Go keeps
        return None
    value = int(digits, _BASES[match.lastgroup])
    return -value if match["sign"] == "-" else value


def timestamp(text: str) -> Timestamp | None:
    """An unquoted timestamp, printed as Go prints a `time.Time` (None when it is not one)."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    clock = match["zoned"] or match["plain"] or "0:0:0"
    hours, minutes, seconds = clock.split(":")
    whole, _, fraction = seconds.partition(".")
    try:
        moment = datetime(
            int(match["year"]),
            int(match["month"]),
            int(match["day"]),
            int(hours),
            int(minutes),
            int(whole),
        )
    except ValueError:
        return None  # not a real date or time: Go keeps the text
    if len(hours) > 2 or len(minutes) > 2:
        return None
    nanos = (fraction + "000000000")[:9].rstrip("0")
    shown = moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{nanos}" if nanos else "")
    zone = match["zone"]
    if zone is None or zone == "Z" or zone in ("+00:00", "-00:00"):
        return Timestamp(f"{shown} +0000 UTC")
    offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    sign = zone[0]
    if offset == timedelta(0):
        return Timestamp(f"{shown} +0000 UTC")
    numeric = f"{sign}{zone[1:3]}{zone[4:6]}"
    return Timestamp(f"{shown} {numeric} {numeric}")


def as_passed(value: float) -> int | float:
    """A float as the program receives it: Go's JSON writes a whole number below 1e21 without
    a point, so the program reads an int (`5.0` -> 5); anything else stays a float."""
    if math.isnan(value) or math.isinf(value):
        raise ScalarError(
            "infinity and NaN cannot be passed to a program (the Pulumi CLI refuses the stack "
            "file); write a number"
        )
    if value.is_integer() and abs(value) < _GO_JSON_EXPONENT_FROM:
        return int(Decimal(repr(value)))
    return value


def number_text(value: int | float) -> str:
    """A number as the CLI passes a top-level setting: Go's JSON text of it."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < _GO_JSON_EXPONENT_FROM:
        return str(int(Decimal(repr(value))))
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= _GO_JSON_EXPONENT_FROM):
        mantissa, _, exponent = f"{value!r}".lower().partition("e")
        if not exponent:
            mantissa, _, exponent = f"{value:e}".partition("e")
        power = int(exponent)
        return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power)}"
    return format(Decimal(repr(value)), "f")
