"""Command-line value checks shared by the payload entrypoints (argparse `type=` callables)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def fraction(text: str) -> float:
    """Strictly between 0 and 1 (a learning rate, a validation share)."""
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def float_between(low: float, high: float) -> Callable[[str], float]:
    """A float in [low, high]."""

    def check(text: str) -> float:
        value = float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text}")
        return value

    return check


def path_segment(text: str) -> str:
    """One Blob path segment: a run id, an adapter name."""
    if not _SEGMENT.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"must be one path segment (letters, digits, ._-), got {text!r}"
        )
    return text
