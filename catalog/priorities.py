"""Workload priority classes shared by both schedulers: one table.

KAI Scheduler's chart installs these PriorityClasses when `defaultPriorityClasses.enabled` is on
(values from its `templates/priorityclasses/*.yaml` at v0.17.0). Kueue gets
WorkloadPriorityClasses with the same names and values. Kueue's value decides: admission order,
preemption inside a team (`withinClusterQueue: LowerPriority`) and the order of victims. KAI's
only orders the gangs it places (it evicts nothing; manifests/helm_values.py), in the same
order.
"""

from __future__ import annotations

from typing import Final

PRIORITY_CLASSES: Final[dict[str, int]] = {
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}
