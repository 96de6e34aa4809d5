"""endpoint-scales: the endpoint grows from its minimum to what its team's quota holds and back,
each step admitted by Kueue as a workload slice, and a step past the quota waits.

The Ray autoscaler runs inside the head, which the rig does not run (no Ray): the scenario does
to the RayCluster what it does. A scale-up raises the worker group's `replicas`; a scale-down
lowers it and names the pods to remove in `scaleStrategy.workersToDelete` (with in-tree
autoscaling on, KubeRay deletes only those). Kueue then sees the cluster's new size: a bigger
workload slice to admit against the team's quota (the old slice `Finished`,
`WorkloadSliceReplaced`), or a smaller count recorded in place. Every pod carries Kueue's
elastic-job scheduling gate, which Kueue lifts only for pods the admitted slice holds: at no
sample may more GPU workers be bound than the admitted slice counts (beyond a short grace while
KubeRay deletes a removed pod).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aksray.live.kube import Kube, KubeError
from aksray.rehearse import objects as o
from aksray.rehearse.invariants.pods_only_when_admitted import EVICTION_GRACE_S
from aksray.rehearse.record import Sample
from aksray.rehearse.scenarios.context import Context, all_off, job
from aksray.rehearse.scenarios.sizing import (
    ENDPOINT,
    NotApplicableError,
    admissible_gpus,
    gpu_flavors,
    pool_gpus,
)
from aksray.rehearse.scenarios.workload_state import bound_pods, workloads_of
from manifests.ray_pods import ELASTIC_JOB_GATE

if TYPE_CHECKING:
    from settings.model import Settings

GROUP: Final = "gpu"  # the endpoint's GPU worker group (workloads/llm_serve/spec.py)
SCALE_WAIT_S: Final = 180.0
BEYOND_HOLD_S: Final = 30.0  # long enough for Kueue to have admitted the step if it could


# -- what a sample says about the endpoint's slices and workers --------------------------------
def _count(workload: Mapping[str, Any], group: str) -> int | None:
    """The group's pod count in a Workload: what Kueue counts if admitted, else its spec."""
    admitted = o.admission(workload)
    if admitted is not None and group in admitted.counts:
        return admitted.counts[group]
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        if pod_set.get("name") == group:
            return int(pod_set.get("count", 1))
    return None


def _newest(workloads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return max(
        workloads,
        key=lambda w: (w["metadata"].get("creationTimestamp", ""), w["metadata"]["name"]),
    )


def admitted_workers(sample: Sample, name: str, group: str) -> int | None:
    """The GPU workers the active (admitted, not finished) slice holds; None: none admitted."""
    active = [w for w in workloads_of(sample, name) if o.is_admitted(w)]
    return _count(_newest(active), group) if active else None


def replaced_slices(sample: Sample, name: str) -> int:
    return sum(
        1
        for w in workloads_of(sample, name)
        if o.conditions(w).get("Finished", {}).get("reason") == "WorkloadSliceReplaced"
    )


def pending_slices(sample: Sample, name: str) -> int:
    return sum(
        1
        for w in workloads_of(sample, name)
        if not o.condition_true(w, "QuotaReserved") and not o.condition_true(w, "Finished")
    )


def _group_pods(sample: Sample, name: str, group: str) -> list[dict[str, Any]]:
    return [
        p
        for p in sample.pods
        if (p["metadata"].get("labels") or {}).get("aksray.io/workload") == name
        and o.pod_set_of(p) == group
        and not o.is_terminating(p)
    ]


def bound_workers(sample: Sample, name: str, group: str) -> int:
    return sum(1 for p in bound_pods(sample, name) if o.pod_set_of(p) == group)


def is_gated(pod: Mapping[str, Any]) -> bool:
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return any(g.get("name") == ELASTIC_JOB_GATE for g in gates)


def gated_workers(sample: Sample, name: str, group: str) -> int:
    return sum(1 for p in _group_pods(sample, name, group) if is_gated(p))


@dataclass
class GateWatch:
    """Bound GPU workers never exceed what the admitted slice holds for longer than the grace
    KubeRay needs to delete a removed pod."""

    name: str
    group: str
    since: float | None = None
    breach: str | None = None

    def observe(self, sample: Sample) -> None:
        bound = bound_workers(sample, self.name, self.group)
        admitted = admitted_workers(sample, self.name, self.group) or 0
        if bound <= admitted:
            self.since = None
            return
        self.since = sample.t if self.since is None else self.since
        if sample.t - self.since > EVICTION_GRACE_S and self.breach is None:
            self.breach = (
                f"t=+{sample.t:.1f}s {bound} {self.group} workers bound while Kueue admits "
                f"{admitted}, for {sample.t - self.since:.0f}s"
            )


# -- what the Ray autoscaler writes -----------------------------------------------------------
def autoscaler_patch(
    cluster: Mapping[str, Any], group: str, replicas: int, pods: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A merge patch of the RayCluster: `replicas` of `group`, and the pods to remove when it
    shrinks; guarded by the cluster's resourceVersion (the whole list is replaced)."""
    groups = [dict(g) for g in cluster["spec"]["workerGroupSpecs"]]
    index = next((i for i, g in enumerate(groups) if g.get("groupName") == group), None)
    if index is None:
        raise ValueError(f"the RayCluster has no worker group {group!r}")
    mine = [p for p in pods if o.pod_set_of(p) == group and not o.is_terminating(p)]
    excess = max(0, len(mine) - replicas)
    # Pods that never started go first (the autoscaler drops pending nodes first), then the
    # newest running ones by name.
    by_name = sorted(mine, key=lambda p: p["metadata"]["name"], reverse=True)
    unstarted = sorted(
        (p for p in mine if not (p.get("spec") or {}).get("nodeName")),
        key=lambda p: p["metadata"]["name"],
    )
    started = [p for p in by_name if (p.get("spec") or {}).get("nodeName")]
    remove = [p["metadata"]["name"] for p in [*unstarted, *started][:excess]]
    groups[index] |= {"replicas": replicas, "scaleStrategy": {"workersToDelete": remove}}
    return {
        "metadata": {"resourceVersion": cluster["metadata"]["resourceVersion"]},
        "spec": {"workerGroupSpecs": groups},
    }


def ray_cluster_of(
    kube: Kube, namespaces: Sequence[str], workload: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The workload's running RayCluster (a RayService's active one) and its pods."""
    for ns in namespaces:
        owners = {
            (kind, obj["metadata"]["name"]): obj
            for kind, plural in (("RayJob", "rayjobs"), ("RayService", "rayservices"))
            for obj in kube.items(f"/apis/ray.io/v1/namespaces/{ns}/{plural}")
        }
        for cluster in kube.items(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters"):
            ref = o.owner(cluster)
            owner = owners.get(ref) if ref else None
            if owner is None or o.workload_label(owner) != workload:
                continue
            active = ((owner.get("status") or {}).get("activeServiceStatus") or {}).get(
                "rayClusterName"
            )
            name = cluster["metadata"]["name"]
            if active and active != name:
                continue
            pods = kube.items(f"/api/v1/namespaces/{ns}/pods", f"ray.io/cluster={name}")
            return cluster, pods
    raise RuntimeError(f"{workload} has no running Ray cluster to scale")


def scale_ray_cluster(
    kube: Kube, namespaces: Sequence[str], workload: str, group: str, replicas: int
) -> str:
    """Patch the workload's RayCluster as the Ray autoscaler would; what it did, for the
    timeline. A write that lost a race with a controller is read again and retried."""
    for attempt in range(5):
        cluster, pods = ray_cluster_of(kube, namespaces, workload)
        patch = autoscaler_patch(cluster, group, replicas, pods)
        meta = cluster["metadata"]
        path = f"/apis/ray.io/v1/namespaces/{meta['namespace']}/rayclusters/{meta['name']}"
        try:
            kube.merge_patch(path, patch)
        except KubeError as error:
            if error.status != 409 or attempt == 4:
                raise
            continue
        (changed,) = [g for g in patch["spec"]["workerGroupSpecs"] if g["groupName"] == group]
        removed = changed["scaleStrategy"]["workersToDelete"]
        removing = f", removing {', '.join(removed)}" if removed else ""
        return f"{group} replicas {replicas}{removing}"
    raise AssertionError("unreachable")


# -- what the stack allows --------------------------------------------------------------------
@dataclass(frozen=True)
class ScalePlan:
    team: str
    flavor: str
    minimum: int  # the endpoint's minReplicas
    fits: int  # GPU workers the team may be admitted in `flavor`: quota + borrowable, in the pool
    beyond: bool  # the pool has GPUs past that: a step past it must stay gated

    def section_entry(self) -> dict[str, Any]:
        """The endpoint's stack entry for the scenario: its bounds open to the step past the
        quota where the pool can show it, else to what the quota holds."""
        return {
            "enabled": True,
            "team": self.team,
            "priority": "inference",
            "minReplicas": self.minimum,
            "maxReplicas": self.fits + 1 if self.beyond else self.fits,
        }


def scale_plan(settings: Settings, stack: Mapping[str, Mapping[str, Any]]) -> ScalePlan:
    entry = stack.get(ENDPOINT) or {}
    named = entry.get("team")
    team = (
        settings.scheduling.team(named)
        if named
        else next((t for t in settings.scheduling.teams if gpu_flavors(settings, t)), None)
    )
    if team is None or not gpu_flavors(settings, team):
        raise NotApplicableError("no team with GPU quota runs the endpoint")
    flavor = gpu_flavors(settings, team)[0]
    minimum = int(entry.get("minReplicas", 1))
    pool = pool_gpus(settings, flavor)
    fits = admissible_gpus(settings, team, flavor)  # quota + what it may borrow
    if fits <= minimum:
        raise NotApplicableError(
            f"team {team.name} holds no GPU above the endpoint's minimum ({minimum}) on {flavor}"
        )
    return ScalePlan(team.name, flavor, minimum, fits, beyond=pool > fits)


# -- the scenario -----------------------------------------------------------------------------
def play(ctx: Context) -> None:
    """The endpoint at its minimum, scaled up to what its quota holds, a step past the quota
    (where the pool has the GPUs), and back down: every step Kueue's."""
    plan = scale_plan(ctx.settings, ctx.stack_workloads)
    if ctx.scale_workers is None:
        raise NotApplicableError("this target cannot change a RayCluster's workers")
    scale = ctx.scale_workers
    watch = GateWatch(ENDPOINT, GROUP)
    ctx.observer.after_sample.append(watch.observe)
    section = all_off(ctx.stack_workloads)
    section[ENDPOINT] = job(ctx.stack_workloads, ENDPOINT, **plan.section_entry())
    ctx.apply(section, "endpoint")

    def at(workers: int) -> Any:
        return lambda s: (
            admitted_workers(s, ENDPOINT, GROUP) == workers
            and bound_workers(s, ENDPOINT, GROUP) == workers
        )

    got = ctx.wait(f"{ENDPOINT} at its minimum ({plan.minimum})", at(plan.minimum))
    ctx.expect("the endpoint runs at its minimum", got, f"{ENDPOINT} never ran")
    if not got:
        return
    scale(ENDPOINT, GROUP, plan.fits)
    up = ctx.wait(f"{ENDPOINT} scaled to {plan.fits}", at(plan.fits), SCALE_WAIT_S)
    last = ctx.observer.last
    ctx.expect(
        f"a scale-up to {plan.fits} is admitted as a new slice",
        up and last is not None and replaced_slices(last, ENDPOINT) >= 1,
        f"admitted {last and admitted_workers(last, ENDPOINT, GROUP)}, "
        f"replaced slices {last and replaced_slices(last, ENDPOINT)}",
    )
    if plan.beyond:
        _step_past_the_quota(ctx, plan)
    scale(ENDPOINT, GROUP, plan.minimum)
    down = ctx.wait(f"{ENDPOINT} back at {plan.minimum}", at(plan.minimum), SCALE_WAIT_S)
    ctx.expect("a scale-down frees the quota above the minimum", down, "never scaled down")
    ctx.expect(
        "no GPU worker runs beyond what Kueue admitted", watch.breach is None, watch.breach or ""
    )


def _step_past_the_quota(ctx: Context, plan: ScalePlan) -> None:
    """One worker more than the team's quota holds, on a pool that has the GPU: it must wait,
    gated, and nothing is evicted for it."""
    assert ctx.scale_workers is not None
    ctx.scale_workers(ENDPOINT, GROUP, plan.fits + 1)
    seen = ctx.wait(
        f"a {ENDPOINT} worker past team {plan.team}'s quota to wait",
        lambda s: gated_workers(s, ENDPOINT, GROUP) >= 1 and pending_slices(s, ENDPOINT) >= 1,
        60,
    )
    ctx.observer.hold(BEYOND_HOLD_S)
    last = ctx.observer.last
    held = last is not None and bound_workers(last, ENDPOINT, GROUP) == plan.fits
    ctx.expect(
        "a scale-up past the quota waits, gated, without evicting anything",
        seen and held and not [e for e in ctx.observer.events if e.what == "evicted"],
        f"gated/pending seen {seen}, bound {last and bound_workers(last, ENDPOINT, GROUP)}",
    )
    ctx.scale_workers(ENDPOINT, GROUP, plan.fits)
    ctx.wait(f"{ENDPOINT} back at {plan.fits}", lambda s: gated_workers(s, ENDPOINT, GROUP) == 0)
