"""The plan summary: pools, queues, workloads and the deploy critical path, as data and as text.

`summary(plan)` returns plain JSON data (what `aksray plan --json` prints under `summary`);
`summary_lines(data)` renders the same data as the tables `aksray plan` prints. Numbers come
from the recorded objects (ClusterQueue quantities as Kueue reads them, KAI queues in KAI's
units) and from the scheduling core (node allocatable, recorded queues read as typed queues).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aksray.plan.model.demand import gpu_demand, gpu_demand_lines
from aksray.plan.model.graph import CriticalPath
from aksray.plan.model.kai_queues import kai_amount, parent_queue
from aksray.plan.model.monitoring import monitoring, monitoring_lines
from aksray.plan.model.plan import Plan, PodSetPlan, WorkloadPlan
from aksray.plan.report.cluster_summary import cluster, cluster_lines
from aksray.plan.report.critical_path import critical_path_lines
from aksray.plan.report.storage_summary import storage, storage_lines
from aksray.plan.report.tables import NONE, Render, text_table
from catalog.kai import KAI_RESOURCES
from catalog.priorities import PRIORITY_CLASSES
from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS, RESOURCE_KINDS, UNLIMITED
from catalog.vm_sizes import VM_SIZES
from scheduling.amounts import READING_ORDER, Amounts
from scheduling.nodes import node_allocatable
from scheduling.queues import FlavorQuota, LimitKind
from scheduling.workers import gpus_used_per_node
from settings.model import GpuPool


def _requests(values: Mapping[str, int]) -> dict[str, Any]:
    """Canonical amounts as Kubernetes quantities: {"gpu": 1, "cpu": "8", "memory": "64Gi"}."""
    quantities = Amounts(values).quantities()
    return {RESOURCE_KEYS[r]: quantities[r] for r in READING_ORDER}


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def pools(plan: Plan) -> list[dict[str, Any]]:
    cluster = plan.settings.cluster
    rows: list[dict[str, Any]] = []
    for flavor in cluster.flavors:
        pool = cluster.pool(flavor)
        size = VM_SIZES[pool.vm_size]
        node = node_allocatable(pool.vm_size)
        rows.append(
            {
                "pool": flavor,
                "flavor": flavor,
                "vmSize": pool.vm_size,
                "gpuModel": size.gpu_model or None,
                "gpusPerNode": size.gpus,
                "minCount": pool.min_count,
                "maxCount": pool.max_count,
                "spot": isinstance(pool, GpuPool) and pool.spot,
                "maxGpus": size.gpus * pool.max_count,
                # GPU nodes kept while idle (minCount); the CPU pool has none.
                "idleGpuNodes": pool.min_count if size.gpus else 0,
                "idleGpus": pool.min_count * size.gpus,
                "nodeAllocatable": _requests(node),
            }
        )
    return rows


def _limits(flavor: FlavorQuota, kind: LimitKind) -> dict[str, Any] | None:
    found = {
        RESOURCE_KEYS[r]: RESOURCE_KINDS[r].format(limit)
        for r, limit in flavor.limit(kind).items()
        if limit is not None
    }
    return found or None


def queues(plan: Plan) -> list[dict[str, Any]]:
    reg = plan.registered
    rows: list[dict[str, Any]] = []
    for team in plan.settings.scheduling.teams:
        queue = reg.queues[team.name]
        flavors = [
            {
                "flavor": flavor.name,
                "nominal": {
                    RESOURCE_KEYS[r]: RESOURCE_KINDS[r].format(q.nominal)
                    for r, q in flavor.resources
                },
                "borrowingLimit": _limits(flavor, "borrowingLimit"),
                "lendingLimit": _limits(flavor, "lendingLimit"),
            }
            for flavor in queue.flavors
        ]
        rows.append(
            {
                "team": team.name,
                "department": team.department,
                "cohort": queue.cohort,
                "namespace": team.namespace,
                "localQueue": team.local_queue,
                "flavors": flavors,
                # The team's KAI leaf queue: where KAI places its pods, no quota of its own.
                "kai": {"queue": team.name, "parent": parent_queue(reg.kai_queues[team.name])},
            }
        )
    return rows


def kai_queues(plan: Plan) -> list[dict[str, Any]]:
    """Every KAI queue as registered, parents before their leaves: KAI's tree, in KAI's units
    (GPUs, CPU millicores, memory MB; -1 unlimited). The quota is Kueue's (`queues`)."""
    return [
        {
            "queue": name,
            "parent": parent_queue(queue),
            **{key: _kai_amounts(queue, key) for key in ("quota", "limit")},
        }
        for name, queue in plan.registered.kai_queues.items()
    ]


def _kai_amounts(queue: Mapping[str, Any], key: str) -> dict[str, int | None]:
    """A KAI queue's quota or limit per resource; None where it is missing (the KAI check
    reports it: KAI reads a missing limit as 0)."""
    resources = queue["spec"].get("resources") or {}
    return {
        resource: kai_amount(queue, resource, key)
        if key in (resources.get(resource) or {})
        else None
        for resource in KAI_RESOURCES
    }


def _pod_set(pod_set: PodSetPlan, plan: Plan) -> dict[str, Any]:
    flavor = pod_set.flavor
    return {
        "name": pod_set.pod_set.name,
        "count": pod_set.pod_set.count,
        "requests": _requests(pod_set.pod_set.requests),
        "nodeSelector": dict(pod_set.pod_set.node_selector),
        "flavor": flavor,
        "mayUse": list(pod_set.may_use),
        "vmSize": plan.settings.cluster.pool(flavor).vm_size if flavor else None,
        "podsPerNode": dict(pod_set.pods_per_node),
        "fitsNode": pod_set.fits_node(flavor) if flavor else None,
        # GPU pod sets: GPUs a full node of its flavor's pool gives them, of the node's GPUs.
        "gpusUsedPerNode": _gpus_used(pod_set, plan) if flavor else None,
    }


def _gpus_used(pod_set: PodSetPlan, plan: Plan) -> dict[str, int] | None:
    requests = Amounts(pod_set.pod_set.requests)
    if not requests[GPU_RESOURCE] or pod_set.flavor is None:
        return None
    vm_size = plan.settings.cluster.pool(pod_set.flavor).vm_size
    return {"used": gpus_used_per_node(requests, vm_size), "of": VM_SIZES[vm_size].gpus}


def _workload(workload: WorkloadPlan, plan: Plan) -> dict[str, Any]:
    priority = workload.workload.priority
    return {
        "workload": workload.spec.name,
        "team": workload.team.name,
        "kind": workload.spec.kind,
        "priority": priority,
        "priorityValue": PRIORITY_CLASSES[priority],
        "gangPods": workload.pods,
        "gangGpus": workload.gpus,
        # An elastic workload's gang is its minimum; it may grow to maxGpus, and Kueue can admit
        # at most maxAdmissibleWorkers GPU workers of it at once (None: the maximum fits).
        "elastic": workload.workload.elastic,
        "maxGpus": workload.worst_case_gpus,
        "maxAdmissibleWorkers": workload.max_admissible_workers,
        # staged: enabled RayJob without a `run` yet, so `pulumi up` submits nothing for it.
        "status": "staged"
        if workload.workload.staged
        else ("submitted" if workload.spec.kind == "RayJob" else "deployed"),
        "admissible": workload.inadmissible is None,
        "podSets": [_pod_set(p, plan) for p in workload.pod_sets],
    }


def summary(plan: Plan, path: CriticalPath) -> dict[str, Any]:
    reg = plan.registered
    return {
        "cluster": cluster(plan),
        "pools": pools(plan),
        "storage": storage(plan),
        "queues": queues(plan),
        "kaiQueues": kai_queues(plan),
        "workloads": [_workload(w, plan) for w in plan.workloads],
        "schedulers": {
            "kueueFrameworks": list(reg.kueue_frameworks),
            "kueuePriorityClasses": sorted(reg.kueue_priority_classes),
            "kaiPriorityClasses": sorted(reg.kai_priority_classes),
            # What KAI's scheduler runs (allocate alone: it only places); None: unknown.
            "kaiActions": None if reg.kai_actions is None else list(reg.kai_actions),
            # False: the stack installs no operators; the cluster's own are assumed to match.
            "installedByStack": reg.installed_kueue and reg.installed_kai,
        },
        "gpuDemand": gpu_demand(plan),
        "criticalPath": path.to_json(),
        "monitoring": monitoring(plan),
    }


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------


def _amounts(values: Mapping[str, Any] | None, *, zeros: bool = True) -> str:
    """`gpu 1, cpu 8, memory 64Gi`; without `zeros`, a zero amount is left out."""
    if not values:
        return NONE
    return ", ".join(
        f"{key} {values[key]}"
        for key in (RESOURCE_KEYS[r] for r in READING_ORDER)
        if key in values and (zeros or values[key] not in (0, "0"))
    )


def _kai(values: Mapping[str, int | None]) -> str:
    """`unlimited`, or `gpu / cpu millicores / memory MB` where any is not -1."""
    if all(values[name] == UNLIMITED for name in KAI_RESOURCES):
        return "unlimited"
    return " / ".join(
        NONE if values[n] is None else str(values[n]) for n in ("gpu", "cpu", "memory")
    )


def summary_lines(data: Mapping[str, Any]) -> list[str]:
    """The summary as `aksray plan` prints it: one table per part, a blank line between."""
    parts = (
        cluster_lines(data["cluster"]),
        pools_table(data["pools"]),
        storage_lines(data["storage"]),
        queues_table(data["queues"]),
        kai_queues_table(data["kaiQueues"], data["schedulers"]["kaiActions"]),
        workloads_table(data["workloads"]),
        pod_sets_table(data["workloads"]) + gpu_demand_lines(data["gpuDemand"]),
        critical_path_lines(data["criticalPath"]),
        monitoring_lines(data["monitoring"]),
    )
    lines: list[str] = []
    for part in parts:
        lines += ["", *part] if lines else part
    return lines


def pools_table(pools: Sequence[Mapping[str, Any]], render: Render = text_table) -> list[str]:
    header = (
        "pool",
        "vm size",
        "gpu model",
        "gpus/node",
        "nodes",
        "spot",
        "max gpus",
        "idle gpu nodes",
        "node allocatable",
    )
    rows = (
        (
            p["pool"],
            p["vmSize"],
            p["gpuModel"],
            p["gpusPerNode"],
            f"{p['minCount']}..{p['maxCount']}",
            "yes" if p["spot"] else "no",
            p["maxGpus"],
            p["idleGpuNodes"],
            _amounts(p["nodeAllocatable"], zeros=False),
        )
        for p in pools
    )
    return render("Pools (node allocatable = VM size minus AKS reservations)", header, rows)


def queues_table(queues: Sequence[Mapping[str, Any]], render: Render = text_table) -> list[str]:
    header = (
        "team",
        "cohort",
        "flavor",
        "nominal gpu",
        "nominal cpu",
        "nominal memory",
        "borrowing limit",
        "lending limit",
    )
    rows = (
        (
            q["team"],
            q["cohort"],
            f["flavor"],
            f["nominal"]["gpu"],
            f["nominal"]["cpu"],
            f["nominal"]["memory"],
            _amounts(f["borrowingLimit"]),
            _amounts(f["lendingLimit"]),
        )
        for q in queues
        for f in q["flavors"]
    )
    return render("Queues (Kueue ClusterQueue per team, one cohort per department)", header, rows)


def kai_queues_table(
    queues: Sequence[Mapping[str, Any]], actions: list[str] | None, render: Render = text_table
) -> list[str]:
    """KAI's queue tree: where KAI places each team's pods; the quota is Kueue's, above."""
    rows = ((q["queue"], q["parent"], _kai(q["quota"]), _kai(q["limit"])) for q in queues)
    runs = ", ".join(actions) if actions is not None else "unknown (the cluster's own KAI)"
    return render(
        f"KAI queues (placement only: the quota is Kueue's, above; KAI actions: {runs})",
        ("queue", "parent", "quota", "limit"),
        rows,
    )


def workloads_table(
    workloads: Sequence[Mapping[str, Any]], render: Render = text_table
) -> list[str]:
    """One row per workload; its pod sets follow in their own table (`pod_sets_table`)."""
    header = ("workload", "status", "team", "kind", "priority", "gang pods / gpus")
    rows = (
        (
            w["workload"],
            w["status"],
            w["team"],
            w["kind"],
            f"{w['priority']} {w['priorityValue']}",
            f"{w['gangPods']} / {w['gangGpus']}"
            + (f" (max {w['maxGpus']} gpus)" if w["elastic"] else ""),
        )
        for w in workloads
    )
    return render(
        "Workloads (staged: planned and checked, submitted once workloads.<name>.run is set)",
        header,
        rows,
    )


def pod_sets_table(
    workloads: Sequence[Mapping[str, Any]], render: Render = text_table
) -> list[str]:
    """One row per pod set; the workload's name only on its first."""
    header = ("workload", "pod set", "pods", "per pod", "flavor", "one node holds")
    rows: list[tuple[object, ...]] = []
    for w in workloads:
        for index, p in enumerate(w["podSets"]):
            rows.append((w["workload"] if index == 0 else "", *_pod_set_cells(p)))
    return render(
        "Pod sets (flavor: what Kueue assigns on an empty cluster, the pool of that name)",
        header,
        rows,
    )


def _pod_set_cells(p: Mapping[str, Any]) -> tuple[object, ...]:
    fits = (
        NONE
        if p["fitsNode"] is None
        else f"{'yes' if p['fitsNode'] else 'NO'} ({p['podsPerNode'].get(p['flavor'], 0)} per node)"
    )
    used = p.get("gpusUsedPerNode")
    if used is not None:
        fits += f", {used['used']}/{used['of']} GPUs"
    return (
        p["name"],
        p["count"],
        _amounts(p["requests"], zeros=False),
        p["flavor"] or "never admitted",
        fits,
    )
