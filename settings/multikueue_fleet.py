"""`multikueue`, the fleet as a whole: what the manager may not hold, the chart source, flavors
that mean one VM size in every worker, what `pulumi up` would fail on in a worker, and elastic
workloads that MultiKueue cannot dispatch."""

from __future__ import annotations

from typing import Final

from settings.catalogues import check_kubernetes_version
from settings.deployable import (
    check_gpu_sizes_offered,
    check_node_pool_count,
    check_operators_on_new_cluster,
    check_retired_sizes,
)
from settings.errors import Problem
from settings.model import (
    ClusterSettings,
    OperatorSettings,
    WorkerCluster,
    WorkloadSettings,
    worker_path,
)
from settings.reader import Section, join

# Kueue v0.19.2 refuses in-tree Ray autoscaling on a MultiKueue-managed RayCluster ("MultiKueue
# does not support Ray autoscaling yet"), and only its RayCluster adapter syncs elastic replicas.
ELASTIC_LIMIT: Final = (
    "MultiKueue (Kueue v0.19.2) does not dispatch an elastic Ray workload: it does not support "
    "Ray autoscaling across clusters"
)


def check_manager(section: Section, manager: ClusterSettings) -> None:
    """The manager runs no job: no GPU pools, no image cache (a quota typed on its teams is
    refused where the teams are read, settings/scheduling.py)."""
    if manager.image_cache.enabled:
        section.problem(
            "cluster.imageCache.enabled",
            "with multikueue the stack's cluster is the manager, which runs no Ray pod and "
            "pulls no Ray image; remove it",
        )
    if manager.gpu_pools:
        section.problem(
            "cluster.gpuPools",
            "with multikueue the stack's cluster is the manager, which runs no job; move its GPU "
            "pools to multikueue.workers[*].cluster.gpuPools and remove them here",
        )


def check_chart_source(section: Section, operators: OperatorSettings) -> None:
    """Microsoft's Kueue chart and MultiKueue: refused, with why (docs/multikueue.md)."""
    if operators.install and operators.chart_source == "mcr":
        section.problem(
            "operators.chartSource",
            "mcr cannot run MultiKueue here: Microsoft's Kueue chart keeps it off (it renders "
            "--feature-gates=MultiKueue=false and leaves the MultiKueueCluster and "
            "MultiKueueConfig CRDs out) unless aksExtension.enableMultiKueue is true, and then "
            "passes the gate on Kueue's command line, which Kueue 0.19.2 refuses beside the "
            'featureGates of the Configuration this platform writes ("feature gates for CLI and '
            'configuration cannot both specified"); use chartSource: upstream for a stack with '
            "multikueue",
        )


def check_flavors_agree(section: Section, workers: tuple[WorkerCluster, ...]) -> None:
    """A flavor is one kind of node: pools of one name have one VM size in every worker."""
    first: dict[str, tuple[str, str]] = {}
    for index, worker in enumerate(workers):
        for pool in worker.cluster.gpu_pools:
            # `cluster.gpuPools[<i>]` of the worker, under the worker's path.
            path = f"{worker_path(index)}.{worker.cluster.pool_path(pool.name)}"
            if pool.name not in first:
                first[pool.name] = (pool.vm_size, path)
            elif first[pool.name][0] != pool.vm_size:
                vm_size, other = first[pool.name]
                section.problem(
                    join(path, "vmSize"),
                    f"pool {pool.name!r} is {vm_size} at {other}: a flavor (pool name) means one "
                    "VM size in every worker, the manager's quota adds them up; rename one pool",
                )


def check_workers_deployable(
    workers: tuple[WorkerCluster, ...], operators: OperatorSettings, problems: list[Problem]
) -> None:
    """What `pulumi up` would fail on halfway in a worker (settings/deployable.py), in the
    worker's own region: a GPU size its region does not offer, a retired size, too many pools,
    a Kubernetes version AKS no longer creates (at the worker's path); and operators.install
    false, since every worker is a new cluster (once, at that key)."""
    for index, worker in enumerate(workers):
        if worker.cluster.mode != "aks":
            continue  # the stack creates nothing for it
        found: list[Problem] = []
        check_kubernetes_version(worker.cluster, found)
        check_retired_sizes(worker.cluster, found)
        check_node_pool_count(worker.cluster, found)
        if worker.location:
            check_gpu_sizes_offered(worker.location, worker.cluster, found)
        problems += [Problem(f"{worker_path(index)}.{p.path}", p.message) for p in found]
        shared: list[Problem] = []
        check_operators_on_new_cluster(worker.cluster, operators, shared)
        problems += [p for p in shared if p not in problems]


def check_elastic_regional(
    section: Section, workloads: tuple[WorkloadSettings, ...], regional: frozenset[str]
) -> None:
    for workload in workloads:
        if workload.enabled and workload.elastic and workload.name not in regional:
            section.problem(
                join(section.path, f"regional.{workload.name}"),
                f"{workload.name} is elastic ({workload.min_workers}..{workload.max_workers} "
                f"workers) and {ELASTIC_LIMIT}; name the worker it runs in here, or give it a "
                "fixed size (max equal to min)",
            )
