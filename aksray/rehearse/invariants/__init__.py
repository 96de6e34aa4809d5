"""What must hold on every sample of a rehearsal, one invariant per module.

A module is named after its invariant (dashes as underscores) and defines `watch()`: a fresh
check for one scenario, called with every sample and the invariant's verdict
(aksray/rehearse/record.py `SampleCheck`). Adding an invariant is one new module and its name
in `SAMPLED`. `ray-token-required` is acted out, not sampled: the run adds it wherever a rig
stands in for the Ray dashboard (ray_token_required.py).
"""

from __future__ import annotations

import importlib
from typing import Any, Final

# Checked on every sample, and reported, in this order.
SAMPLED: Final = (
    "pods-only-when-admitted",
    "pods-on-flavor-nodes",
    "admitted-within-quota",
    "endpoint-never-evicted",
    "evictions-explained",
    "destroy-leaves-nothing",
    "gang-all-or-nothing",
)


def module_name(invariant: str) -> str:
    return f"{__name__}.{invariant.replace('-', '_')}"


def watch(invariant: str) -> Any:
    """A fresh check of `invariant` (its module's `watch()`)."""
    return importlib.import_module(module_name(invariant)).watch()
