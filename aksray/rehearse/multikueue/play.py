"""The MultiKueue scenario in order (aksray/rehearse/multikueue/scenario.py says what each step
shows): dispatch, the manager's reach on each worker, overflow, a worker lost and back, and two
priorities across workers."""

from __future__ import annotations

from aksray.rehearse.multikueue.preemption import higher_priority
from aksray.rehearse.multikueue.reach import reach
from aksray.rehearse.multikueue.scenario import (
    MultiKueueContext,
    dispatch,
    overflow,
    pick_jobs,
    worker_back,
    worker_lost,
)
from aksray.rehearse.multikueue.stack import MANAGER


def manager_reach(ctx: MultiKueueContext, job: str) -> None:
    """On each worker, what the manager's own credential may and may not do (reach.py)."""
    for worker in ctx.rig.workers:
        for name, held, detail in reach(ctx.rig.manager.kube, worker, ctx.jobs[job]):
            ctx.expect(name, held, detail)
            ctx.fleet.note(MANAGER, worker, "manager's credential", f"{name}: {held}")


def play(ctx: MultiKueueContext) -> None:
    first, second = pick_jobs(ctx.jobs, ctx.worker_gpus)
    worker = ""

    def step_a() -> None:
        nonlocal worker
        worker = dispatch(ctx, first)

    ctx.timed("dispatch", step_a)
    ctx.timed("manager's reach", lambda: manager_reach(ctx, first))
    ctx.timed("overflow", lambda: overflow(ctx, first, second, worker))
    ctx.timed("worker lost", lambda: worker_lost(ctx, first, worker))
    ctx.timed("worker back", lambda: worker_back(ctx, first, worker))
    ctx.timed("two priorities", lambda: higher_priority(ctx, first, second))
