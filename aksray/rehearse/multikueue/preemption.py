"""Two priorities across workers: a job of higher priority that the manager admits at once (its
quota, the sum of the workers', has room) but that fits in no worker without preempting there.

Kueue's default dispatcher copies that job to every worker, and without
`MultiKueueOrchestratedPreemption` each worker would preempt its running job for a copy that
runs in one of them (Kueue KEP-8303). With it on (every Kueue of the stack, manifests/
helm_values.py), the manager creates the copies behind a preemption gate and opens one worker's
at a time: only one worker evicts its job.

Played with the stack's own jobs, as `pulumi config set --path` sets them:
1. the `regional` job of a worker, sized to fill that worker's GPUs, at `train`;
2. the smaller dispatched job at `train`: it goes to the other worker (the first is full);
3. the job that fills a worker, at `build-preemptible`: the manager has room for it (the
   regional job is not on the manager), neither worker has.
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


def regional_filler(
    workloads: Mapping[str, Any], regional: Mapping[str, str], gpus: int
) -> tuple[str, str, dict[str, Any]] | None:
    """A `regional` job of the stack, its worker, and its keys to fill `gpus` GPUs there."""
    for name in sorted(regional):
        sized = sized_to_fill(name, workloads.get(name) or {}, gpus)
        if sized is not None:
            return name, regional[name], sized
    return None


def preempting_workers(ctx: MultiKueueContext, victims: tuple[str, ...], since: float) -> set[str]:
    """Workers whose Kueue evicted one of `victims` after `since` (fleet time)."""
    return {
        worker
        for worker in ctx.rig.workers
        for event in ctx.fleet.observers[worker].events
        if event.t >= since and event.workload in victims and event.what in EVICTIONS
    }


def _runs(ctx: MultiKueueContext, worker: str, workload: str, step: str) -> bool:
    held = ctx.fleet.wait_until(
        f"{workload} to run in {worker}",
        lambda f: (
            running_in(f, worker, workload)
            and (workload not in ctx.jobs or where(f, workload) == worker)
        ),
        STEP_TIMEOUT_S,
    )
    ctx.expect(f"{step}: {workload} (train) runs in {worker}", held, f"not running in {worker}")
    return held


def higher_priority(ctx: MultiKueueContext, first: str, second: str) -> None:
    fleet = ctx.fleet
    found = regional_filler(ctx.stack_workloads, ctx.regional, ctx.worker_gpus)
    aggressor = sized_to_fill(first, ctx.stack_workloads.get(first) or {}, ctx.worker_gpus)
    if found is None or aggressor is None:
        ctx.notes.append(
            "preemption across workers not played: the stack has no regional RayJob of one GPU "
            f"per worker to fill its worker's {ctx.worker_gpus} GPUs"
        )
        return
    regional, pinned, sized = found
    other = next(name for name in ctx.rig.workers if name != pinned)
    ctx.run_times[regional] = ctx.run_times[second] = LONG_RUN_S
    ctx.set_run(regional, RUN, changes={**sized, "priority": "train"})
    ctx.up(ctx.submitted, f"fill {pinned}")
    if not _runs(ctx, pinned, regional, "fill"):
        return
    ctx.set_run(second, RUN, changes={"priority": "train"})
    ctx.up(ctx.submitted, f"fill {other}")
    if not _runs(ctx, other, second, "fill"):
        return
    since = time.monotonic() - fleet.started
    ctx.run_times[first] = SHORT_RUN_S
    ctx.set_run(first, RUN, changes={**aggressor, "priority": HIGHER})
    ctx.up(ctx.submitted, "higher priority")
    fleet.note(fleet.manager, first, "submitted", f"at {HIGHER}: it fits in no worker as is")
    ran = fleet.wait_until(
        f"{first} to run in a worker",
        lambda f: (w := where(f, first)) is not None and running_in(f, w, first),
        STEP_TIMEOUT_S,
    )
    fleet.wait_until("a second worker to preempt", lambda f: False, SETTLE_S)
    preempted = preempting_workers(ctx, (regional, second), since)
    went = where(fleet, first)
    ctx.expect(
        f"{first} at {HIGHER} runs in the worker that preempted for it",
        ran and went in preempted,
        f"{first} in {went}; workers that preempted: {sorted(preempted) or 'none'}",
    )
    ctx.expect(
        f"only one worker preempts for {first} (MultiKueueOrchestratedPreemption)",
        len(preempted) == 1,
        f"workers that evicted {regional} or {second}: {sorted(preempted) or 'none'}",
    )
