"""Two priorities across workers: each worker runs a job of the team at `train` that fills its
GPU quota, then a job of higher priority arrives that fits in neither without preempting.

Kueue's default dispatcher copies that job to every worker, and without
`MultiKueueOrchestratedPreemption` each worker would preempt its running job for a copy that
runs in one of them (Kueue KEP-8303). With it on (every Kueue of the stack, manifests/
helm_values.py), the manager creates the copies behind a preemption gate and opens one worker's
at a time: only one worker evicts its job.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

from aksray.rehearse.multikueue.scenario import (
    LONG_RUN_S,
    SHORT_RUN_S,
    STEP_TIMEOUT_S,
    MultiKueueContext,
    running_in,
    where,
)
from workloads.catalog import WORKLOADS

HIGHER: Final = "build-preemptible"  # above `train`, and preemptible for KAI (75)
RUN: Final = "rehearse-2"
SETTLE_S: Final = 8.0  # after the job runs: time for a second worker's preemption to show
EVICTIONS: Final = ("preempted", "evicted")


def sized_to_fill(workload: str, entry: Mapping[str, Any], gpus: int) -> dict[str, Any] | None:
    """The keys that make an enabled RayJob of the stack hold `gpus` GPUs of one GPU each per
    worker, for its whole run; None if it cannot be sized so."""
    spec = WORKLOADS[workload]
    if spec.kind != "RayJob" or entry.get("enabled") is not True:
        return None
    if [g.pod.gpus for g in spec.workers] != [1]:
        return None
    if "workers" in spec.options:
        return {"workers": gpus}
    if "minWorkers" in spec.options:
        return {"minWorkers": gpus, "maxWorkers": gpus}
    return None


def filler(
    workloads: Mapping[str, Any], taken: set[str], gpus: int
) -> tuple[str, dict[str, Any]] | None:
    """A job of the stack, not `taken`, and its keys to fill a worker's `gpus`."""
    for name in sorted(workloads):
        sized = sized_to_fill(name, workloads[name] or {}, gpus)
        if name not in taken and sized is not None:
            return name, sized
    return None


def fill_both(ctx: MultiKueueContext, first: str, other: str, sized: dict[str, Any]) -> bool:
    """`first` and `other` at `train`, each filling a worker (`other` dispatched, not pinned)."""
    for name in (first, other):
        ctx.run_times[name] = LONG_RUN_S
    ctx.set_run(first, RUN)
    ctx.set_run(other, RUN, changes={**sized, "priority": "train"}, unpin=True)
    ctx.up(ctx.submitted, "fill both workers")
    both = ctx.fleet.wait_until(
        f"{first} and {other} to run in different workers",
        lambda f: (
            (a := where(f, first)) is not None
            and (b := where(f, other)) is not None
            and a != b
            and running_in(f, a, first)
            and running_in(f, b, other)
        ),
        STEP_TIMEOUT_S,
    )
    ctx.expect(
        f"{first} and {other} (train) fill one worker each",
        both,
        f"{first} in {where(ctx.fleet, first)}, {other} in {where(ctx.fleet, other)}",
    )
    return both


def preempting_workers(ctx: MultiKueueContext, victims: tuple[str, ...], since: float) -> set[str]:
    """Workers whose Kueue evicted one of `victims` after `since` (fleet time)."""
    return {
        worker
        for worker in ctx.rig.workers
        for event in ctx.fleet.observers[worker].events
        if event.t >= since and event.workload in victims and event.what in EVICTIONS
    }


def higher_priority(ctx: MultiKueueContext, first: str, second: str) -> None:
    fleet = ctx.fleet
    found = filler(ctx.stack_workloads, {first, second}, ctx.worker_gpus)
    if found is None:
        ctx.notes.append(
            "preemption across workers not played: the stack has no third RayJob of one GPU "
            f"per worker to fill a worker's {ctx.worker_gpus} GPUs"
        )
        return
    other, sized = found
    if not fill_both(ctx, first, other, sized):
        return
    since = time.monotonic() - fleet.started
    ctx.run_times[second] = SHORT_RUN_S
    ctx.set_run(second, RUN, changes={"priority": HIGHER})
    ctx.up(ctx.submitted, "higher priority")
    fleet.note(fleet.manager, second, "submitted", f"at {HIGHER}: it fits in no worker as is")
    ran = fleet.wait_until(
        f"{second} to run in a worker",
        lambda f: (w := where(f, second)) is not None and running_in(f, w, second),
        STEP_TIMEOUT_S,
    )
    fleet.wait_until("a second worker to preempt", lambda f: False, SETTLE_S)
    preempted = preempting_workers(ctx, (first, other), since)
    went = where(fleet, second)
    ctx.expect(
        f"{second} at {HIGHER} runs in a worker that preempted for it",
        ran and went in preempted,
        f"{second} in {went}; workers that preempted: {sorted(preempted) or 'none'}",
    )
    ctx.expect(
        f"only one worker preempts for {second} (MultiKueueOrchestratedPreemption)",
        len(preempted) == 1,
        f"workers that evicted {first} or {other}: {sorted(preempted) or 'none'}",
    )
