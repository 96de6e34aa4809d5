"""The planner's checks: every reason a workload could never run, found before `pulumi up`.

Each check reads the plan (aksray/model.py) and reports `Problem(path, message)`s, the same
type the settings validation reports, naming the config path a user would change. Errors fail
`aksray plan` (exit 1); warnings do not. What the settings validation already rejects (unknown
teams, priorities or flavors, limits above quotas, ...) is not checked again here: a plan only
exists for a valid configuration.

Errors:
- pool capacity: Σ team nominal quotas of a flavor exceed what its pool holds at maxCount
  (a warning instead with `scheduling.allowOvercommit: true`);
- gang admission: a workload's gang fits no flavor of its team's ClusterQueue with the team's
  nominal quota plus what it may borrow (min(borrowingLimit, what its cohort can lend));
- node fit: a pod asks for more GPUs, CPU or memory than one node of the flavor Kueue gives it
  can offer (node allocatable, manifests/capacity.py); a warning when only some of the flavors
  it may get are too small;
- KAI quota: a non-preemptible workload (priority >= 100) needs more than the KAI quota of a
  queue on its chain (leaf and department): KAI runs it only within quota;
- KAI hierarchy: child queue quotas add up to more than their parent's;
- priority classes: a workload's priority has no Kueue WorkloadPriorityClass or no KAI
  PriorityClass;
- Kueue integrations: a workload's kind is not among the frameworks Kueue's configuration
  enables;
- endpoints never evicted: a RayService that something in its team outranks, or that may run
  on borrowed quota (KubeRay 1.7 keeps a suspended RayService's cluster running).

Warnings: GPU pools that keep nodes while idle (`minCount > 0`); team quota that no enabled
workload of the stack can use.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from aksray.admission import cohort_borrowable, labels_allow
from aksray.model import Plan, PodSetPlan, WorkloadPlan
from aksray.objects import borrowing_limit, flavor_entries, kai_amount, nominal_quota, parent_queue
from catalog.pools import CPU_POOL_NAME
from catalog.priorities import NON_PREEMPTIBLE_MIN_PRIORITY, PRIORITY_CLASSES
from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS, RESOURCES, UNLIMITED, format_memory
from catalog.vm_sizes import VM_SIZES
from manifests.capacity import Amounts, effective_quota, node_allocatable, pool_capacity
from manifests.helm_values import KUEUE_FRAMEWORK_BY_KIND
from manifests.kai import KAI_RESOURCES, kai_units
from settings.errors import Problem
from settings.model import Settings, TeamSettings, workload_path

MAX_LISTED: Final = 5  # teams named in one message before "and N more"


@dataclass
class Findings:
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def error(self, path: str, message: str) -> None:
        self.errors.append(Problem(path, message))

    def warning(self, path: str, message: str) -> None:
        self.warnings.append(Problem(path, message))

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        return {
            "errors": [{"path": p.path, "message": p.message} for p in self.errors],
            "warnings": [{"path": p.path, "message": p.message} for p in self.warnings],
        }


# --------------------------------------------------------------------------------------------
# Words for amounts
# --------------------------------------------------------------------------------------------


def amount(resource: str, value: int) -> str:
    """An amount as a person reads it: `4 GPUs`, `12 CPU`, `96Gi`."""
    if value == UNLIMITED:
        return "unlimited"
    if resource == GPU_RESOURCE:
        return f"{value} GPU" if value == 1 else f"{value} GPUs"
    if resource == "cpu":
        return f"{value / 1000:g} CPU"
    text = format_memory(value)
    return text if text.endswith(("Gi", "Ti", "Pi", "Ei")) else f"{value / 1024**3:.1f}Gi"


def amounts(values: Mapping[str, int]) -> str:
    """GPUs, CPU and memory, in that order, leaving out what is zero."""
    order = (GPU_RESOURCE, "cpu", "memory")
    return ", ".join(amount(r, values[r]) for r in order if values.get(r))


def _listed(items: list[str]) -> str:
    shown = items[:MAX_LISTED]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def _quota_path(settings: Settings, team: TeamSettings, flavor: str | None, resource: str) -> str:
    base = f"{settings.scheduling.team_path(team.name)}.quota"
    if flavor is None:
        return base
    return f"{base}.{flavor}.{RESOURCE_KEYS[resource]}"


def _gpu_flavor(team: TeamSettings, settings: Settings) -> str | None:
    return next(
        (f for f in settings.cluster.flavors if f != CPU_POOL_NAME and f in team.quota), None
    )


# --------------------------------------------------------------------------------------------
# Capacity: quotas against pools, pods against nodes
# --------------------------------------------------------------------------------------------


def check_pool_capacity(plan: Plan, out: Findings) -> None:
    """Σ team nominal quotas of each flavor against its pool at maximum size."""
    settings = plan.settings
    cluster = settings.cluster
    for flavor in cluster.flavors:
        teams = [team for team in settings.scheduling.teams if flavor in team.quota]
        if not teams:
            continue
        quotas = {team.name: effective_quota(team, flavor, settings) for team in teams}
        capacity = pool_capacity(cluster, flavor)
        vm_size = cluster.pool(flavor).vm_size
        node = node_allocatable(vm_size)
        over: list[str] = []
        nodes_needed = 0
        for resource in (GPU_RESOURCE, "cpu", "memory"):
            total = sum(q.get(resource) for q in quotas.values())
            if total <= capacity.get(resource):
                continue
            holders = [
                f"{name} {amount(resource, q.get(resource))}"
                for name, q in quotas.items()
                if q.get(resource)
            ]
            over.append(
                f"{RESOURCE_KEYS[resource]} {amount(resource, total)} > "
                f"{amount(resource, capacity.get(resource))} ({_listed(holders)})"
            )
            if node.get(resource):
                nodes_needed = max(nodes_needed, math.ceil(total / node.get(resource)))
        if not over:
            continue
        max_count = cluster.pool(flavor).max_count
        path = f"{cluster.pool_path(flavor)}.maxCount"
        what = (
            f"the team quotas of flavor {flavor} add up to more than pool {flavor} holds at "
            f"maxCount {max_count} (x {vm_size}, {amounts(_node(node))} allocatable per node): "
            f"{'; '.join(over)}"
        )
        if settings.scheduling.allow_overcommit:
            out.warning(
                path,
                f"{what}; allowed by scheduling.allowOvercommit: Kueue admits on quota, so jobs "
                "it admits may stay Pending while the pool is full",
            )
        else:
            out.error(
                path,
                f"{what}; Kueue admits on quota, not on nodes, so admitted jobs would stay "
                f"Pending: raise maxCount to {nodes_needed}, lower the teams' quota.{flavor}, or "
                "set scheduling.allowOvercommit: true",
            )


def _node(node: Amounts) -> dict[str, int]:
    return {r: node.get(r) for r in RESOURCES}


def _pod_words(pod_set: PodSetPlan) -> tuple[str, str]:
    """(`head` / `3 gpu workers`, the verb that goes with it)."""
    count = pod_set.pod_set.count
    noun = "head" if pod_set.pod_set.name == "head" else f"{pod_set.pod_set.name} worker"
    if count == 1:
        return noun, "needs"
    return f"{count} {noun}s", "need"


def check_node_fit(plan: Plan, out: Findings) -> None:
    """Every pod against one node of each flavor Kueue may give it (node allocatable)."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        for pod_set in workload.pod_sets:
            too_small = [f for f in pod_set.may_use if not pod_set.fits_node(f)]
            if not too_small:
                continue
            requests = amounts(pod_set.pod_set.requests)
            fatal = pod_set.flavor in too_small or len(too_small) == len(pod_set.may_use)
            flavor = pod_set.flavor if pod_set.flavor in too_small else too_small[0]
            assert flavor is not None
            vm_size = cluster.pool(flavor).vm_size
            node = amounts(_node(node_allocatable(vm_size)))
            what = (
                f"{workload.spec.name}'s {pod_set.pod_set.name} pods request {requests} each, "
                f"but one {vm_size} node of pool {flavor} offers {node} (node allocatable: the "
                "VM minus AKS's kube-reserved CPU and memory and the eviction threshold)"
            )
            path = f"{cluster.pool_path(flavor)}.vmSize"
            if fatal:
                why = (
                    "Kueue gives the pods this flavor on an empty cluster"
                    if pod_set.flavor == flavor
                    else "no flavor the pods may get has nodes that large"
                )
                out.error(
                    path,
                    f"{what}; {why}, so the job would be admitted and its pods stay Pending: "
                    "use a larger vmSize for this pool",
                )
            else:
                out.warning(
                    path,
                    f"{what}; Kueue gives the pods this flavor when "
                    f"{', '.join(f for f in pod_set.may_use if f not in too_small)} is full, and "
                    "then they stay Pending: use a larger vmSize or take the team's quota off "
                    "this flavor",
                )


# --------------------------------------------------------------------------------------------
# Admission: Kueue (gang, quota plus borrowing) and KAI (non-preemptible within quota)
# --------------------------------------------------------------------------------------------


def check_gang_admission(plan: Plan, out: Findings) -> None:
    """A gang that no flavor of its team's ClusterQueue can ever hold, even borrowing."""
    for workload in plan.workloads:
        if workload.inadmissible is None:
            continue
        failing = next(
            p for p in workload.pod_sets if p.pod_set.name == workload.inadmissible.pod_set
        )
        path, message = _why_inadmissible(plan, workload, failing)
        out.error(path, message)


def _why_inadmissible(plan: Plan, workload: WorkloadPlan, failing: PodSetPlan) -> tuple[str, str]:
    settings = plan.settings
    team = workload.team
    queue = plan.registered.cluster_queues[team.name]
    flavors = [
        str(f["name"])
        for f in flavor_entries(queue)
        if labels_allow(
            str(f["name"]), failing.pod_set.node_selector, plan.registered.resource_flavors
        )
    ]
    need = failing.pod_set.total
    pods, need_verb = _pod_words(failing)
    select_verb, fit_verb = ("selects", "fits") if need_verb == "needs" else ("select", "fit")
    head = f"{workload.spec.name} can never be admitted: its gang is all-or-nothing and its {pods}"
    if not flavors:
        selector = ", ".join(f"{k}={v}" for k, v in failing.pod_set.node_selector.items())
        return (
            _quota_path(settings, team, None, "cpu"),
            f"{head} {select_verb} the nodes {selector}, but team {team.name}'s ClusterQueue "
            "has no flavor of those nodes: add that pool's flavor to the team's quota",
        )
    for resource in (GPU_RESOURCE, "cpu", "memory"):
        wanted = need.get(resource, 0)
        if not wanted:
            continue
        offers = {f: workload.headroom.get((f, resource), 0) for f in flavors}
        best_flavor = max(offers, key=lambda f: offers[f])
        best = offers[best_flavor]
        if wanted <= best:
            continue
        nominal = nominal_quota(queue, best_flavor, resource)
        detail = (
            f"{need_verb} {amount(resource, wanted)} at once, but team {team.name}'s ClusterQueue "
            f"gives at most {amount(resource, best)} in any flavor they may use "
            f"({best_flavor}: quota {amount(resource, nominal)} + borrowable "
            f"{amount(resource, best - nominal)}, the lesser of its borrowingLimit and what "
            "its cohort can lend)"
        )
        per_pod = failing.pod_set.requests.get(resource, 0)
        fitting = best // per_pod if per_pod else 0
        if (
            resource == GPU_RESOURCE
            and "workers" in workload.spec.options
            and failing.pod_set.name != "head"
            and fitting >= 1
        ):
            return (
                f"{workload_path(workload.spec.name)}.workers",
                f"{head} {detail}: lower workers to {fitting} or raise "
                f"{_quota_path(settings, team, best_flavor, resource)}",
            )
        flavor = best_flavor if resource != GPU_RESOURCE else _gpu_flavor(team, settings)
        return (
            _quota_path(settings, team, flavor, resource),
            f"{head} {detail}: raise the team's quota (or its borrowingLimit and its cohort's "
            "lendable quota)",
        )
    return (
        _quota_path(settings, team, None, "cpu"),
        f"{head} {fit_verb} no single flavor of team {team.name}'s ClusterQueue with all their "
        f"resources at once ({workload.inadmissible}): raise the team's quota",
    )


def _kai_chain(plan: Plan, leaf: str) -> list[tuple[str, Mapping[str, Any]]]:
    chain: list[tuple[str, Mapping[str, Any]]] = []
    name: str | None = leaf
    while name is not None and name in plan.registered.kai_queues and len(chain) < 16:
        queue = plan.registered.kai_queues[name]
        chain.append((name, queue))
        name = parent_queue(queue)
    return chain


def check_kai_quota(plan: Plan, out: Findings) -> None:
    """Non-preemptible workloads run only within quota, at every level of their queue chain."""
    settings = plan.settings
    for workload in plan.workloads:
        priority = workload.workload.priority
        if PRIORITY_CLASSES[priority] < NON_PREEMPTIBLE_MIN_PRIORITY:
            continue
        team = workload.team
        for level, (name, queue) in enumerate(_kai_chain(plan, team.name)):
            short = []
            for resource in (GPU_RESOURCE, "cpu", "memory"):
                kai_name = RESOURCE_KEYS[resource]
                quota = kai_amount(queue, kai_name)
                need = kai_units(resource, workload.total(resource))
                if quota != UNLIMITED and need > quota:
                    short.append((resource, need, quota))
            if not short:
                continue
            unit = {GPU_RESOURCE: "", "cpu": "m", "memory": "MB"}
            gap = ", ".join(f"{RESOURCE_KEYS[r]} {n}{unit[r]} > {q}{unit[r]}" for r, n, q in short)
            units = "in KAI's units: millicores, MB"
            if level == 0:
                first = short[0][0]
                flavor = _gpu_flavor(team, settings) if first == GPU_RESOURCE else CPU_POOL_NAME
                if flavor not in team.quota:
                    flavor = None
                path = _quota_path(settings, team, flavor, first)
                where = f"team {team.name}'s KAI queue"
            else:
                department = next(
                    (d for d in settings.scheduling.departments if d.name == name), None
                )
                path = (
                    settings.scheduling.department_path(department.name)
                    if department
                    else settings.scheduling.team_path(team.name)
                )
                where = f"its parent KAI queue {name}"
            out.error(
                path,
                f"{workload.spec.name} has priority {priority} "
                f"({PRIORITY_CLASSES[priority]} >= {NON_PREEMPTIBLE_MIN_PRIORITY}: "
                f"non-preemptible), which KAI schedules only within quota, but its gang needs "
                f"more than {where} holds ({gap}; {units}), so it would never start: raise "
                "the team's quota (gpu, cpu and memory) or give the workload a preemptible "
                "priority (train or build-preemptible)",
            )
            break


def check_kai_hierarchy(plan: Plan, out: Findings) -> None:
    """Each KAI parent queue's quota covers the sum of its children's."""
    settings = plan.settings
    children: dict[str, list[str]] = defaultdict(list)
    for name, queue in plan.registered.kai_queues.items():
        parent = parent_queue(queue)
        if parent:
            children[parent].append(name)
    for parent, names in children.items():
        if parent not in plan.registered.kai_queues:
            continue
        queue = plan.registered.kai_queues[parent]
        over = []
        for kai_name in KAI_RESOURCES:
            quota = kai_amount(queue, kai_name)
            values = [kai_amount(plan.registered.kai_queues[n], kai_name) for n in names]
            total = UNLIMITED if UNLIMITED in values else sum(values)
            if quota != UNLIMITED and (total == UNLIMITED or total > quota):
                over.append(f"{kai_name} {'unlimited' if total == UNLIMITED else total} > {quota}")
        if not over:
            continue
        department = next((d for d in settings.scheduling.departments if d.name == parent), None)
        path = settings.scheduling.department_path(parent) if department else "scheduling"
        out.error(
            path,
            f"the quotas of KAI queue {parent}'s children ({_listed(sorted(names))}) add up "
            f"to more than its own ({'; '.join(over)}): KAI never gives the children what "
            "the parent lacks; the department's queue must hold the sum of its teams' quotas",
        )


# --------------------------------------------------------------------------------------------
# The two schedulers' vocabulary: priority classes and Kueue integrations
# --------------------------------------------------------------------------------------------


def check_priority_classes(plan: Plan, out: Findings) -> None:
    reg = plan.registered
    for workload in plan.workloads:
        priority = workload.workload.priority
        missing = [
            what
            for what, names in (
                ("Kueue WorkloadPriorityClass", reg.kueue_priority_classes),
                ("KAI PriorityClass", reg.kai_priority_classes),
            )
            if priority not in names
        ]
        if missing:
            out.error(
                f"{workload_path(workload.spec.name)}.priority",
                f"priority {priority!r} has no {' and no '.join(missing)}: the scheduler that "
                "lacks it never runs the workload; both schedulers need the class "
                f"({', '.join(PRIORITY_CLASSES)})",
            )


def check_kueue_integrations(plan: Plan, out: Findings) -> None:
    reg = plan.registered
    source = (
        "the Kueue release's configuration"
        if reg.installed_kueue
        else "the integrations an existing cluster's Kueue must enable"
    )
    for workload in plan.workloads:
        kind = workload.spec.kind
        framework = KUEUE_FRAMEWORK_BY_KIND.get(kind)
        if framework is not None and framework in reg.kueue_frameworks:
            continue
        out.error(
            f"{workload_path(workload.spec.name)}.enabled",
            f"{workload.spec.name} is a {kind}, but {source} does not enable "
            f"{framework or 'an integration for it'} (enabled: "
            f"{', '.join(reg.kueue_frameworks) or 'none'}): Kueue would never suspend or "
            "admit it, so it would bypass the team's quota; enable the integration or disable "
            "the workload",
        )


# --------------------------------------------------------------------------------------------
# Warnings: money spent on nothing
# --------------------------------------------------------------------------------------------


def check_services_never_evicted(plan: Plan, out: Findings) -> None:
    """A RayService must never be preempted or reclaimed.

    Kueue 0.19 suspends a RayService through `spec.rayClusterConfig.suspend`, and KubeRay 1.7
    reads that field only when it creates the RayCluster: an evicted endpoint keeps serving and
    keeps its GPUs while Kueue has released its quota, so the workload that evicted it waits on
    nodes that never free up. The endpoint is safe when nothing in its team outranks it
    (withinClusterQueue: LowerPriority) and it never runs on borrowed quota (only borrowed
    quota is reclaimed).
    """
    settings = plan.settings
    queues = list(plan.registered.cluster_queues.values())
    for service in (w for w in plan.workloads if w.spec.kind == "RayService"):
        value = PRIORITY_CLASSES[service.workload.priority]
        outranking = [
            w.spec.name
            for w in plan.workloads
            if w.team.name == service.team.name and PRIORITY_CLASSES[w.workload.priority] > value
        ]
        if outranking:
            out.error(
                f"{workload_path(service.spec.name)}.priority",
                f"{_listed(outranking)} outrank{'s' if len(outranking) == 1 else ''} "
                f"{service.spec.name} in team {service.team.name} and would preempt it, but a "
                "preempted RayService keeps its GPUs (KubeRay 1.7 ignores Kueue's suspend of a "
                "running RayService): give it the team's highest priority (inference)",
            )
        queue = plan.registered.cluster_queues.get(service.team.name)
        if queue is None:
            continue
        lendable = cohort_borrowable(queues, service.team.name)
        flavors = {f for p in service.pod_sets for f in p.may_use}
        for flavor in sorted(flavors, key=settings.cluster.flavors.index):
            borrowable = [
                RESOURCE_KEYS[resource]
                for resource in RESOURCES
                if lendable.get((flavor, resource), 0) > 0
                and borrowing_limit(queue, flavor, resource) != 0
            ]
            if not borrowable:
                continue
            # On a GPU flavor the cpu/memory limits follow the gpu limit's share of a node.
            zero = ", ".join(f"{r}: 0" for r in borrowable) if flavor == CPU_POOL_NAME else "gpu: 0"
            out.error(
                f"{settings.scheduling.team_path(service.team.name)}.borrowingLimit.{flavor}",
                f"team {service.team.name} runs {service.spec.name} and may borrow "
                f"{'/'.join(borrowable)} of flavor {flavor} from its cohort, but borrowed quota "
                "is reclaimed and a reclaimed RayService keeps its GPUs (KubeRay 1.7 ignores "
                f"Kueue's suspend of a running RayService): set it to {{{zero}}}",
            )


def check_idle_gpus(plan: Plan, out: Findings) -> None:
    cluster = plan.settings.cluster
    for pool in cluster.gpu_pools:
        if pool.min_count <= 0:
            continue
        size = VM_SIZES[pool.vm_size]
        out.warning(
            f"{cluster.pool_path(pool.name)}.minCount",
            f"pool {pool.name} keeps {pool.min_count} {pool.vm_size} node"
            f"{'s' if pool.min_count != 1 else ''} "
            f"({amount(GPU_RESOURCE, pool.min_count * pool.gpus_per_node)}, {size.gpu_model}) "
            "running and billed while nothing runs; set minCount to 0 to scale to zero when "
            "idle",
        )


def check_unused_quota(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    by_team: dict[str, list[WorkloadPlan]] = defaultdict(list)
    for workload in plan.workloads:
        by_team[workload.team.name].append(workload)
    for team in settings.scheduling.teams:
        held = {
            flavor: quota
            for flavor in team.quota
            if any((quota := effective_quota(team, flavor, settings)).get(r) for r in RESOURCES)
        }
        if not held:
            continue
        path = f"{settings.scheduling.team_path(team.name)}.quota"
        workloads = by_team.get(team.name, [])
        if not workloads:
            listed = "; ".join(f"{flavor}: {amounts(_node(q))}" for flavor, q in held.items())
            out.warning(
                path,
                f"team {team.name} holds quota ({listed}) but runs no enabled workload of this "
                "stack; it serves only jobs the team submits itself (fine if it does), "
                "otherwise remove the quota or aim a workload at the team",
            )
            continue
        used = {flavor for w in workloads for p in w.pod_sets for flavor in p.may_use}
        for flavor, quota in held.items():
            if flavor in used:
                continue
            out.warning(
                f"{path}.{flavor}",
                f"team {team.name}'s quota on flavor {flavor} ({amounts(_node(quota))}) fits no "
                f"pod of its workloads ({', '.join(w.spec.name for w in workloads)}); it serves "
                "only jobs the team submits itself: remove it, or give it what those pods need",
            )


CHECKS: Final[tuple[Callable[[Plan, Findings], None], ...]] = (
    check_pool_capacity,
    check_gang_admission,
    check_node_fit,
    check_kai_quota,
    check_kai_hierarchy,
    check_priority_classes,
    check_kueue_integrations,
    check_services_never_evicted,
    check_idle_gpus,
    check_unused_quota,
)


def run_checks(plan: Plan, checks: Iterable[Callable[[Plan, Findings], None]] = CHECKS) -> Findings:
    findings = Findings()
    for check in checks:
        check(plan, findings)
    return findings
