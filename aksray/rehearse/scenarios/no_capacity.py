"""no-capacity: a GPU pool whose nodes never come (no Azure VM quota): the job must not hold
quota."""

from __future__ import annotations

from aksray.rehearse.scenarios.context import (
    Context,
    all_off,
    first_gpu_team,
    training_that_fits,
)
from aksray.rehearse.scenarios.sizing import (
    TRAINING,
    NotApplicableError,
    gpu_flavors,
)
from aksray.rehearse.scenarios.workload_state import (
    admitted,
    ever_evicted,
    requeues,
    workloads_of,
)


def play(ctx: Context) -> None:
    """A GPU pool whose nodes never come (no Azure VM quota): the job must not hold quota."""
    team = first_gpu_team(ctx)
    team_name = team.name
    if not gpu_flavors(ctx.settings, team):
        raise NotApplicableError(f"team {team_name} has no GPU quota")
    for pool in ctx.settings.cluster.gpu_pools:
        ctx.set_nodes(pool.name, 0)
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = training_that_fits(ctx, team)
    ctx.apply(section, "submit")
    ctx.wait(f"{TRAINING} to be admitted", admitted(TRAINING), 120)
    released = ctx.wait(
        f"Kueue to take {TRAINING}'s quota back",
        lambda s: bool(workloads_of(s, TRAINING)) and not admitted(TRAINING)(s),
        timeout=300,
    )
    ctx.expect(
        "a job on nodes that never come does not hold quota", released, f"{TRAINING} kept its quota"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    ctx.expect(
        "Kueue's pod-readiness timeout evicted it",
        any("PodsReadyTimeout" in e for e in evictions),
        f"evictions of {TRAINING}: {evictions or 'none'}",
    )
    requeued = ctx.wait(
        f"{TRAINING} to be requeued after its backoff and admitted again",
        lambda s: admitted(TRAINING)(s) and requeues(s, TRAINING) >= 1,
        timeout=300,
    )
    ctx.expect("it is requeued with backoff", requeued, f"{TRAINING} was not admitted again")
    ctx.notes.append(
        f"after {ctx.settings.scheduling.pods_ready.requeue_limit} requeues Kueue deactivates "
        "the job (not waited for: each attempt takes a full timeout)"
    )
