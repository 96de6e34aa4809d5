"""Gang admission: a workload's gang must fit one flavor of its team's ClusterQueue at once; an
elastic workload's minimum is that gang, and its maximum should fit too."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings, amount, gpu_flavor, pod_words, quota_path
from aksray.plan.model.plan import Plan, PodSetPlan, WorkloadPlan
from catalog.pools import CPU_POOL_NAME
from catalog.quantities import GPU_RESOURCE
from scheduling.admission import labels_allow
from scheduling.amounts import READING_ORDER
from scheduling.workers import fits_share, per_gpu
from settings.model import workload_path
from settings.workloads import SCALE_KEYS


def check_gang_admission(plan: Plan, out: Findings) -> None:
    """A gang that no flavor of its team's ClusterQueue can ever hold, even borrowing."""
    for workload in plan.workloads:
        if workload.inadmissible is None or oversized_workers(plan, workload):
            continue  # oversized workers: check_gpu_share names the key that fixes it
        failing = next(
            p for p in workload.pod_sets if p.pod_set.name == workload.inadmissible.pod_set
        )
        path, message = _why_inadmissible(plan, workload, failing)
        out.error(path, message)


def _why_inadmissible(plan: Plan, workload: WorkloadPlan, failing: PodSetPlan) -> tuple[str, str]:
    """(config path, message) for the pod set that finds no flavor: no flavor of its nodes, a
    resource no flavor holds enough of, or no flavor with all of them at once."""
    settings = plan.settings
    team = workload.team
    queue = plan.registered.queues[team.name]
    flavors = [
        f.name
        for f in queue.flavors
        if labels_allow(f.name, failing.pod_set.node_selector, plan.registered.flavor_labels)
    ]
    pods, need_verb = pod_words(failing)
    select_verb, fit_verb = ("selects", "fits") if need_verb == "needs" else ("select", "fit")
    head = f"{workload.spec.name} can never be admitted: its gang is all-or-nothing and its {pods}"
    if not flavors:
        selector = ", ".join(f"{k}={v}" for k, v in failing.pod_set.node_selector.items())
        return (
            quota_path(settings, team, None, "cpu"),
            f"{head} {select_verb} the nodes {selector}, but team {team.name}'s ClusterQueue "
            "has no flavor of those nodes: add that pool's flavor to the team's quota",
        )
    for resource in READING_ORDER:
        found = _short_resource(plan, workload, failing, flavors, resource)
        if found is not None:
            path, detail = found
            return path, f"{head} {need_verb} {detail}"
    return (
        quota_path(settings, team, None, "cpu"),
        f"{head} {fit_verb} no single flavor of team {team.name}'s ClusterQueue with all their "
        f"resources at once ({workload.inadmissible}): raise the team's quota",
    )


def _short_resource(
    plan: Plan, workload: WorkloadPlan, failing: PodSetPlan, flavors: list[str], resource: str
) -> tuple[str, str] | None:
    """(config path, what is short and the fix) when no flavor the pods may use holds what
    they need of `resource` at once, counting what the team may borrow; None otherwise."""
    settings = plan.settings
    team = workload.team
    wanted = failing.pod_set.total.get(resource, 0)
    if not wanted:
        return None
    if failing.pod_set.gpus:
        # GPU workers only ever get a flavor with GPUs: the cpu flavor's memory is no offer.
        with_gpus = [f for f in flavors if workload.headroom.get((f, GPU_RESOURCE), 0) > 0]
        flavors = with_gpus or flavors
    offers = {f: workload.headroom.get((f, resource), 0) for f in flavors}
    best_flavor = max(offers, key=lambda f: offers[f])
    best = offers[best_flavor]
    if wanted <= best:
        return None
    nominal = plan.registered.queues[team.name].nominal(best_flavor)[resource]
    detail = (
        f"{amount(resource, wanted)} at once, but team {team.name}'s ClusterQueue "
        f"gives at most {amount(resource, best)} in any flavor they may use "
        f"({best_flavor}: quota {amount(resource, nominal)} + borrowable "
        f"{amount(resource, best - nominal)}, the lesser of its borrowingLimit and what "
        "its cohort can lend)"
    )
    per_pod = failing.pod_set.requests.get(resource, 0)
    fitting = best // per_pod if per_pod else 0
    count_key = _count_key(workload)
    if failing.pod_set.gpus and count_key is not None and fitting >= 1:
        return (
            f"{workload_path(workload.spec.name)}.{count_key}",
            f"{detail}: lower {count_key} to {fitting} or raise "
            f"{quota_path(settings, team, best_flavor, resource)}",
        )
    flavor = best_flavor if resource != GPU_RESOURCE else gpu_flavor(team, settings)
    return (
        quota_path(settings, team, flavor, resource),
        f"{detail}: raise the team's quota (or its borrowingLimit and its cohort's lendable quota)",
    )


def _count_key(workload: WorkloadPlan) -> str | None:
    """The key that sets how many GPU workers the gang has: `workers`, or the minimum of an
    elastic payload (`minWorkers` / `minReplicas`)."""
    if "workers" in workload.spec.options:
        return "workers"
    return next((low for low, _ in SCALE_KEYS if low in workload.spec.options), None)


def oversized_workers(plan: Plan, workload: WorkloadPlan) -> bool:
    """Its GPU workers ask more per GPU than a GPU's share of every GPU pool of its team."""
    if workload.spec.gpu_group is None:
        return False
    asked = per_gpu(workload.spec, workload.workload)
    pools = [f.name for f in plan.registered.queues[workload.team.name].flavors]
    gpu_pools = [f for f in pools if f != CPU_POOL_NAME]
    cluster = plan.settings.cluster
    return bool(gpu_pools) and not any(
        fits_share(asked, cluster.pool(f).vm_size) for f in gpu_pools
    )


def check_maximum_admissible(plan: Plan, out: Findings) -> None:
    """An elastic workload whose maximum Kueue can never admit at once, even borrowing: the Ray
    autoscaler could ask for GPU workers that wait forever (their pods gated, unscheduled)."""
    for workload in plan.workloads:
        most = workload.max_admissible_workers
        if most is None:
            continue
        settings = workload.workload
        low_key, high_key = next(k for k in SCALE_KEYS if k[0] in workload.spec.options)
        out.warning(
            f"{workload_path(settings.name)}.{high_key}",
            f"{settings.name} may scale to {settings.max_workers} GPU workers "
            f"({workload.max_gpus} GPUs), but team {workload.team.name}'s ClusterQueue can "
            f"admit at most {most} of them at once (its quota plus what it may borrow): the "
            f"workers above {most} would never start. Lower {high_key} to {most}, or raise the "
            f"team's quota ({low_key} {settings.min_workers} is admissible)",
        )
