"""What `aksray plan` shows for a stack with `multikueue`: the clusters and their regions,
where each team's quota lies (the manager's being the workers' sum), where each workload may
run, and GPU demand and cost per region."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aksray.plan.checks.multikueue import federated_credentials
from aksray.plan.model.cost import monthly_cost
from aksray.plan.model.demand import gpu_demand
from aksray.plan.model.multikueue import WorkerPlan, multikueue_of
from aksray.plan.report.tables import text_table
from catalog.quantities import GPU_RESOURCE
from scheduling.amounts import Amounts
from scheduling.multikueue import manager_quota, team_workers, worker_quotas
from settings.model import Settings


def clusters(settings: Settings, workers: Sequence[WorkerPlan]) -> list[dict[str, Any]]:
    """The manager, then each worker: region, GPUs at most, GPU demand, cost at most."""
    rows = [
        {
            "cluster": "manager",
            "role": "manager",
            "region": settings.location,
            "gpuPools": [],
            "poolGpus": 0,
            "worstCaseGpus": 0,
            **_cost(settings),
        }
    ]
    for worker in workers:
        own = worker.plan.settings
        demand = gpu_demand(worker.plan)
        rows.append(
            {
                "cluster": worker.name,
                "role": "worker",
                "region": own.location,
                "gpuPools": [pool.name for pool in own.cluster.gpu_pools],
                "poolGpus": demand["poolGpus"],
                "worstCaseGpus": demand["worstCaseGpus"],
                **_cost(own),
            }
        )
    return rows


def _cost(settings: Settings) -> dict[str, Any]:
    """At most, per month, at list price; the region each price is from (the table may have
    only another region's figure) and the pools it has none for."""
    cost = monthly_cost(settings)
    return {
        "usdPerMonthAtMost": cost["usdPerMonthAtMost"],
        "priceRegions": sorted({r["priceRegion"] for r in cost["pools"] if r["priceRegion"]}),
        "unpriced": cost["unpriced"],
    }


def quotas(settings: Settings) -> list[dict[str, Any]]:
    """Per team and flavor: GPUs in each worker and on the manager (their sum)."""
    per_worker = worker_quotas(settings)
    total = manager_quota(settings)
    rows = []
    for team in settings.scheduling.teams:
        for flavor, amounts in sorted(total.get(team.name, {}).items()):
            rows.append(
                {
                    "team": team.name,
                    "flavor": flavor,
                    "workers": {
                        worker: quota.get(team.name, {}).get(flavor, Amounts())[GPU_RESOURCE]
                        for worker, quota in per_worker.items()
                    },
                    "managerGpus": amounts[GPU_RESOURCE],
                }
            )
    return rows


def placements(settings: Settings) -> list[dict[str, Any]]:
    multikueue = multikueue_of(settings)
    where = team_workers(settings)
    rows = []
    for workload in settings.enabled_workloads:
        regional = multikueue.regional.get(workload.name)
        rows.append(
            {
                "workload": workload.name,
                "team": workload.team,
                "dispatch": "regional" if regional else "multikueue",
                "workers": [regional] if regional else list(where.get(workload.team, ())),
            }
        )
    return rows


def multikueue_summary(settings: Settings, workers: Sequence[WorkerPlan]) -> dict[str, Any]:
    return {
        "clusters": clusters(settings, workers),
        "quotas": quotas(settings),
        "workloads": placements(settings),
        "federatedCredentials": federated_credentials(settings),
    }


def multikueue_lines(data: Mapping[str, Any]) -> list[str]:
    workers = [row["cluster"] for row in data["clusters"] if row["role"] == "worker"]
    lines = text_table(
        "Clusters",
        (
            "cluster",
            "role",
            "region",
            "GPU pools",
            "GPUs at most",
            "GPUs wanted at worst",
            "USD/month at most",
            "prices of",
            "not priced",
        ),
        (
            (
                r["cluster"],
                r["role"],
                r["region"],
                ", ".join(r["gpuPools"]) or "-",
                r["poolGpus"],
                r["worstCaseGpus"],
                r["usdPerMonthAtMost"],
                ", ".join(r["priceRegions"]) or "-",
                ", ".join(r["unpriced"]) or "-",
            )
            for r in data["clusters"]
        ),
    )
    lines += [
        "",
        *text_table(
            "GPU quota per team (the manager's is the sum of the workers')",
            ("team", "flavor", *workers, "manager"),
            (
                (r["team"], r["flavor"], *(r["workers"][w] for w in workers), r["managerGpus"])
                for r in data["quotas"]
            ),
        ),
    ]
    lines += [
        "",
        *text_table(
            "Where workloads run",
            ("workload", "team", "dispatch", "workers"),
            (
                (r["workload"], r["team"], r["dispatch"], ", ".join(r["workers"]) or "-")
                for r in data["workloads"]
            ),
        ),
    ]
    lines += [
        "",
        *text_table(
            "Federated credentials per team identity",
            ("team", "credentials"),
            sorted(data["federatedCredentials"].items()),
        ),
    ]
    return lines
