"""The MultiKueue scenario in order: dispatch, the manager's reach on each worker, overflow, a
worker lost and back (scenario.py), two priorities across workers (preemption.py), and a
manager's job created before its queue's AdmissionCheck (probes.py)."""

from __future__ import annotations

from aksray.rehearse.multikueue.preemption import higher_priority
from aksray.rehearse.multikueue.probes import KUEUE_API, created_before_the_check
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
from manifests.ray_pods import TEAM_LABEL
from scheduling.queues import multikueue_check


def manager_reach(ctx: MultiKueueContext, job: str) -> None:
    """On each worker, what the manager's own credential may and may not do (reach.py)."""
    for worker in ctx.rig.workers:
        for name, held, detail in reach(ctx.rig.manager.kube, worker, ctx.jobs[job]):
            ctx.expect(name, held, detail)
            ctx.fleet.note(MANAGER, worker, "manager's credential", f"{name}: {held}")


def before_the_check(ctx: MultiKueueContext, job: str) -> None:
    """The order a first `pulumi up` on AKS can take, reproduced with objects of its own: the
    manager's job created before Kueue knows its queue's AdmissionCheck (probes.py)."""
    team = str(ctx.jobs[job]["metadata"]["labels"][TEAM_LABEL])
    manager = ctx.rig.manager.kube
    found = created_before_the_check(
        manager,
        {name: member.kube for name, member in ctx.rig.workers.items()},
        queue=manager.get(f"{KUEUE_API}/clusterqueues/{team}"),
        config=multikueue_check(team),
        job=ctx.jobs[job],
    )
    unmarked, marked = found["unmarked"], found["marked"]
    ctx.fleet.note(MANAGER, job, "created before its check", f"{found}")
    ctx.expect(
        "a manager RayJob without spec.managedBy created before its queue's AdmissionCheck is "
        "rejected by MultiKueue (the job the program built before)",
        unmarked.check == "Rejected" and "managedBy" in unmarked.message,
        f"its check is {unmarked.check!r}: {unmarked.message}",
    )
    ctx.expect(
        "the same RayJob as the program builds it (spec.managedBy) is dispatched whatever the "
        "order",
        marked.sent and marked.check != "Rejected",
        f"its check is {marked.check!r}: {marked.message}; a copy in a worker: {marked.sent}",
    )


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
    ctx.timed("created before the check", lambda: before_the_check(ctx, second))
