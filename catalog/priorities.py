"""Workload priority classes shared by both schedulers.

KAI Scheduler's chart installs these PriorityClasses when `defaultPriorityClasses.enabled` is on
(values from its `templates/priorityclasses/*.yaml` at v0.17.0). Kueue gets
WorkloadPriorityClasses with the same names and values so both schedulers order work alike.
"""

from __future__ import annotations

from typing import Final

PRIORITY_CLASSES: Final[dict[str, int]] = {
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}

# KAI treats priority >= 100 as non-preemptible: such a workload only ever runs inside its
# queue's deserved quota (it is never scheduled over quota, so it can never be reclaimed).
NON_PREEMPTIBLE_MIN_PRIORITY: Final[int] = 100


def is_non_preemptible(priority_class: str) -> bool:
    return PRIORITY_CLASSES[priority_class] >= NON_PREEMPTIBLE_MIN_PRIORITY
