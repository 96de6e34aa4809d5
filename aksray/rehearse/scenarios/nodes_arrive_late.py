"""nodes-arrive-late: GPU pools start empty and their nodes arrive one by one, as the autoscaler
brings them."""

from __future__ import annotations

from aksray.rehearse.scenarios.context import (
    NODES_LATE_S,
    SHORT_RUN_S,
    Context,
    first_gpu_team,
    training_that_fits,
)
from aksray.rehearse.scenarios.sizing import (
    TRAINING,
)
from aksray.rehearse.scenarios.workload_state import (
    finished,
)
from workloads.catalog import WORKLOADS


def play(ctx: Context) -> None:
    """GPU pools start empty and their nodes arrive one by one, as the autoscaler brings them."""
    for pool in ctx.settings.cluster.gpu_pools:
        ctx.set_nodes(pool.name, 0)
    section = {}
    for name in WORKLOADS:
        entry = dict(ctx.stack_workloads.get(name) or {})
        if entry.get("enabled") is True and WORKLOADS[name].kind == "RayJob":
            entry["run"] = "rehearse-1"
            ctx.set_run_time(name, SHORT_RUN_S)
        section[name] = entry
    jobs = [n for n, e in section.items() if e.get("run")]
    if not jobs:  # a stack that enables no job: its first GPU team trains
        section[TRAINING] = training_that_fits(ctx, first_gpu_team(ctx))
        ctx.set_run_time(TRAINING, SHORT_RUN_S)
        jobs = [TRAINING]
    ctx.apply(section, "submit")
    ctx.observer.hold(NODES_LATE_S)
    for pool in ctx.settings.cluster.gpu_pools:
        for count in range(1, pool.max_count + 1):
            ctx.set_nodes(pool.name, count)
            ctx.observer.hold(0.5)
    ctx.wait("every started job to finish", lambda s: all(finished(n)(s) for n in jobs), 420)
    evicted = [e.line() for e in ctx.observer.events if e.what == "evicted"]
    ctx.expect("nothing admitted is evicted while nodes come", not evicted, "; ".join(evicted))
    for name in jobs:
        ctx.expect(
            f"{name} finished",
            bool(ctx.observer.last and finished(name)(ctx.observer.last)),
            "not finished",
        )
