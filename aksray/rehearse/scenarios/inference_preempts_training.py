"""inference-preempts-training: a training gang holds the endpoint's team's GPUs; the endpoint
arrives at `inference`."""

from __future__ import annotations

from aksray.rehearse.scenarios.context import (
    LONG_RUN_S,
    SHORT_RUN_S,
    Context,
    all_off,
    job,
)
from aksray.rehearse.scenarios.sizing import (
    ENDPOINT,
    TRAINING,
    NotApplicableError,
    bindable_gpus,
    gpu_flavors,
    gpu_quota,
    queues,
    require_fit,
)
from aksray.rehearse.scenarios.workload_state import (
    admitted,
    bound_pods,
    ever_evicted,
    pod_count,
    running,
)
from catalog.quantities import GPU_RESOURCE


def play(ctx: Context) -> None:
    """A training gang holds the endpoint's team's GPUs; the endpoint arrives at `inference`."""
    serve = ctx.stack_workloads.get(ENDPOINT) or {}
    team_name = serve.get("team") or (ctx.stack_workloads.get(TRAINING) or {}).get("team")
    if not team_name:
        team_name = ctx.settings.scheduling.teams[0].name
    team = ctx.settings.scheduling.team(team_name)
    flavors = gpu_flavors(ctx.settings, team)
    if not flavors:
        raise NotApplicableError(f"team {team_name} has no GPU quota")
    flavor = flavors[0]
    require_fit(ctx.settings, flavor, TRAINING)
    require_fit(ctx.settings, flavor, ENDPOINT)
    quota = gpu_quota(ctx.settings, team, flavor)
    found = queues(ctx.settings)[team_name].flavor(flavor)
    gpu = found.quota(GPU_RESOURCE) if found is not None else None
    borrow = gpu.borrowing_limit if gpu is not None else None
    workers = min(bindable_gpus(ctx.settings, flavor), quota + (borrow or 0))
    workers = min(workers, quota) if borrow is None else workers
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=team_name, priority="train",
        workers=workers, run="rehearse-1",
    )  # fmt: skip
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    ctx.apply(section, "training")
    gang = pod_count(ctx.settings, TRAINING, workers)
    if not ctx.wait(f"{TRAINING} to run ({workers} GPUs on {flavor})", running(TRAINING, gang)):
        ctx.expect(
            "training runs first",
            False,
            f"{TRAINING} never ran with {workers} workers; {ctx.why_waiting(TRAINING)}",
        )
        return
    section[ENDPOINT] = job(
        ctx.stack_workloads, ENDPOINT, enabled=True, team=team_name, priority="inference"
    )
    ctx.apply(section, "endpoint")
    endpoint_pods = pod_count(ctx.settings, ENDPOINT)
    got = ctx.wait(f"{ENDPOINT} to run", running(ENDPOINT, endpoint_pods))
    ctx.expect(
        "the endpoint gets its GPUs", got, f"{ENDPOINT} never ran; {ctx.why_waiting(ENDPOINT)}"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    free_elsewhere = len(flavors) > 1 or (borrow is not None and workers < quota + borrow)
    if evictions:
        sample = ctx.observer.last
        gone = sample is not None and not bound_pods(sample, TRAINING)
        ctx.expect(
            "training stopped as a whole by Kueue",
            gone,
            f"{TRAINING} pods still bound after eviction",
        )
        ctx.expect(
            "training evicted for priority",
            any("Preempted" in e for e in evictions),
            "; ".join(evictions),
        )
        requeued = ctx.wait(
            f"{TRAINING} to wait in its queue again", lambda s: not admitted(TRAINING)(s), 60
        )
        ctx.expect("training requeues", requeued, f"{TRAINING} still admitted")
    elif free_elsewhere:
        ctx.notes.append(
            f"{ENDPOINT} found GPUs without preempting {TRAINING}: team {team_name} has quota "
            "beyond what the training gang holds (another flavor or borrowing)"
        )
    else:
        ctx.expect("training preempted", False, f"{ENDPOINT} ran but {TRAINING} was never evicted")
    section[ENDPOINT] = job(ctx.stack_workloads, ENDPOINT, enabled=False)
    ctx.set_run_time(TRAINING, SHORT_RUN_S)
    ctx.apply(section, "endpoint-off")
    if evictions:
        back = ctx.wait(f"{TRAINING} to run again", running(TRAINING, gang), 240)
        ctx.expect(
            "training runs again once the endpoint is gone", back, f"{TRAINING} not re-admitted"
        )
