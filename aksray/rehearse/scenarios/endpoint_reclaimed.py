"""endpoint-reclaimed: an endpoint running partly on GPUs borrowed from its cohort, when the
lending team needs its quota back.

The stack's own endpoint (llm-serve, at its minimum replicas) runs on more GPUs than its team's
nominal quota of its first GPU flavor; then the lending team submits the training job with one
worker per GPU of its own quota there. Kueue reclaims, and a RayService is one workload: the
whole endpoint is evicted, by `spec.rayClusterConfig.suspend`. What KubeRay does with that
suspend decides whether the GPUs come back: 1.6.1 and later apply it to the running RayCluster
in place (ray-project/kuberay#4686), 1.7.0 passes it only when it creates the cluster (#4841).
The scenario states what happens on the rig's KubeRay: the endpoint's GPU pods deleted, the
owner's job running on them, the endpoint down while it runs and running again once its team's
quota plus what the cohort lends fits it. `endpoint-never-evicted` breaks here by design: that
is what borrowing costs an endpoint (`aksray plan` warns so at the team's borrowingLimit).

Not applicable where the stack runs no endpoint, or its endpoint fits its team's own quota.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from aksray.rehearse import objects as o
from aksray.rehearse.scenarios.context import Context, all_off, job
from aksray.rehearse.scenarios.sizing import (
    ENDPOINT,
    TRAINING,
    NotApplicableError,
    admissible_gpus,
    bindable_gpus,
    gpu_flavors,
    gpu_quota,
    lendable,
)
from aksray.rehearse.scenarios.workload_state import (
    admitted,
    bound_pods,
    pod_count,
    running,
    workloads_of,
)

if TYPE_CHECKING:
    from aksray.rehearse.record import Sample
    from settings.model import Settings, TeamSettings

OWNER_RUN_S: Final = 20.0  # how long the owner's job runs before it gives the GPUs back


@dataclass(frozen=True)
class Reclaim:
    serving: TeamSettings
    owner: TeamSettings
    flavor: str
    replicas: int  # the endpoint's, one GPU each
    nominal: int  # the serving team's own GPUs of the flavor
    owner_gpus: int  # the owner's job: its own quota of the flavor


def reclaim_plan(settings: Settings, entry: dict[str, object]) -> Reclaim:
    if not entry.get("enabled"):
        raise NotApplicableError(f"the stack runs no endpoint ({ENDPOINT} is not enabled)")
    serving = settings.scheduling.team(str(entry["team"]))
    replicas = int(str(entry.get("minReplicas", 1)))
    flavor = gpu_flavors(settings, serving)[0]
    nominal = gpu_quota(settings, serving, flavor)
    if replicas <= nominal:
        raise NotApplicableError(
            f"{ENDPOINT}'s {replicas} replicas fit team {serving.name}'s own {nominal} GPUs of "
            f"{flavor}: it borrows nothing, and nothing of it can be reclaimed"
        )
    if replicas > admissible_gpus(settings, serving, flavor):
        raise NotApplicableError(f"{ENDPOINT}'s {replicas} replicas are never admitted")
    department = next(d for d in settings.scheduling.departments if serving in d.teams)
    for owner in department.teams:
        if owner is not serving and lendable(settings, owner, flavor) > 0:
            gpus = min(gpu_quota(settings, owner, flavor), bindable_gpus(settings, flavor))
            return Reclaim(serving, owner, flavor, replicas, nominal, gpus)
    raise NotApplicableError(f"no team of {serving.name}'s cohort lends GPUs of {flavor}")


def _gpu_pods(sample: Sample, name: str) -> int:
    return sum(1 for pod in bound_pods(sample, name) if o.pod_gpus(pod) > 0)


def _evicted(sample: Sample) -> bool:
    return any(o.condition_true(wl, "Evicted") for wl in workloads_of(sample, ENDPOINT))


def play(ctx: Context) -> None:
    target = reclaim_plan(ctx.settings, dict(ctx.stack_workloads.get(ENDPOINT) or {}))
    section = all_off(ctx.stack_workloads)
    section[ENDPOINT] = job(
        ctx.stack_workloads, ENDPOINT, maxReplicas=target.replicas, minReplicas=target.replicas
    )
    ctx.apply(section, "endpoint")
    endpoint_pods = 1 + target.replicas
    up = ctx.wait(f"{ENDPOINT} to run {target.replicas} replicas", running(ENDPOINT, endpoint_pods))
    borrowed = target.replicas - target.nominal
    ctx.expect(
        f"{ENDPOINT} runs {target.replicas} replicas on team {target.serving.name}'s "
        f"{target.nominal} GPUs of {target.flavor} and {borrowed} borrowed from its cohort",
        up,
        ctx.why_waiting(ENDPOINT),
    )
    if not up:
        return
    ctx.set_run_time(TRAINING, OWNER_RUN_S)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=target.owner.name, priority="train",
        workers=target.owner_gpus, run="rehearse-1",
    )  # fmt: skip
    started = time.monotonic()
    ctx.apply(section, "owner-submits")
    _reclaimed(ctx, target, started)


def _reclaimed(ctx: Context, target: Reclaim, started: float) -> None:
    evicted = ctx.wait(f"Kueue to reclaim from {ENDPOINT}", _evicted, 120)
    evicted_after = time.monotonic() - started
    freed = ctx.wait(f"{ENDPOINT}'s GPU pods to go", lambda s: _gpu_pods(s, ENDPOINT) == 0, 120)
    ctx.expect(
        "the reclaimed endpoint gives its GPUs back: KubeRay suspends its running Ray cluster "
        "in place and deletes its pods",
        evicted and freed,
        f"evicted {evicted}; GPU pods still bound: "
        f"{_gpu_pods(ctx.observer.last, ENDPOINT) if ctx.observer.last else '?'}",
    )
    pods = pod_count(ctx.settings, TRAINING, target.owner_gpus)
    owner_runs = ctx.wait(f"{TRAINING} of {target.owner.name} to run", running(TRAINING, pods))
    last = ctx.observer.last
    down = last is not None and not admitted(ENDPOINT)(last) and _gpu_pods(last, ENDPOINT) == 0
    ctx.expect(
        f"team {target.owner.name}'s job runs on the GPUs given back, while the whole endpoint "
        "is down (not only its borrowed replica)",
        owner_runs and down,
        f"{TRAINING} running {owner_runs}; endpoint down {down}; {ctx.why_waiting(TRAINING)}",
    )
    back = ctx.wait(
        f"{ENDPOINT} to run again once {TRAINING} is done",
        running(ENDPOINT, 1 + target.replicas),
        240,
    )
    ctx.expect(
        "the endpoint runs again once its quota plus what the cohort lends fits it",
        back,
        ctx.why_waiting(ENDPOINT),
    )
    ctx.notes.append(
        f"{ENDPOINT} was evicted within {evicted_after:.0f}s of team {target.owner.name}'s "
        f"`pulumi up` and ran again {time.monotonic() - started:.0f}s after it ({TRAINING} ran "
        f"{OWNER_RUN_S:.0f}s, and its Ray cluster kept its GPUs for its "
        "ttlSecondsAfterFinished)"
    )
