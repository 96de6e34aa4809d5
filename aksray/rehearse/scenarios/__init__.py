"""The scenarios a rehearsal plays, one per module, each over the stack's own teams, quotas and
pools.

A module is named after its scenario (dashes as underscores) and defines `play(ctx)`
(context.py: what a scenario may do). Adding a scenario is one new module and its name in
`SCENARIOS`; the command line lists the names without importing any scenario's code.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

SUBMIT_ALL: Final = "submit-all"
# Every scenario, in the order `--scenario all` plays them.
SCENARIOS: Final = (
    SUBMIT_ALL,
    "inference-preempts-training",
    "borrow-and-reclaim",
    "nodes-arrive-late",
    "no-capacity",
    "full-node-gang",
    "node-headroom",
    "gangs-compete",
    "endpoint-admitted-late",
    "endpoint-scales",
    "endpoint-reclaimed",
    "team-members",
)


def module_name(scenario: str) -> str:
    return f"{__name__}.{scenario.replace('-', '_')}"


def play(scenario: str, ctx: Any) -> None:
    """Play `scenario` (its module's `play`) with `ctx`, a scenarios.context.Context."""
    importlib.import_module(module_name(scenario)).play(ctx)
