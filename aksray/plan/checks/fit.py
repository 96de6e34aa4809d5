"""The model against the GPU: a workload whose GPU workers land on GPUs with less memory than
its model needs (workloads/<name>/spec.py `gpu_memory_gb`, catalog/vm_sizes.py) is admitted,
starts its pods, and fails loading the model: GPU hours spent on an out-of-memory error."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan, PodSetPlan, WorkloadPlan
from catalog.pools import CPU_POOL_NAME
from catalog.vm_sizes import VM_SIZES
from settings.model import ClusterSettings


def _gpu_memory(cluster: ClusterSettings, flavor: str) -> int:
    return VM_SIZES[cluster.pool(flavor).vm_size].gpu_memory_gb


def check_model_fits_gpu(plan: Plan, out: Findings) -> None:
    """Every GPU pod set against the GPUs of each flavor Kueue may give it: an error when it
    gets a too small GPU on an empty cluster (or may get nothing else), a warning when only a
    flavor it falls back to is too small."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        need = workload.spec.gpu_memory_gb
        if need <= 0:
            continue
        for pod_set in workload.pod_sets:
            if pod_set.pod_set.gpus <= 0:
                continue
            gpu_flavors = [f for f in pod_set.may_use if f != CPU_POOL_NAME]
            too_small = [f for f in gpu_flavors if _gpu_memory(cluster, f) < need]
            if too_small:
                _report(plan, workload, pod_set, too_small, out)


def _report(
    plan: Plan, workload: WorkloadPlan, pod_set: PodSetPlan, too_small: list[str], out: Findings
) -> None:
    cluster = plan.settings.cluster
    need = workload.spec.gpu_memory_gb
    gpu_flavors = [f for f in pod_set.may_use if f != CPU_POOL_NAME]
    fatal = pod_set.flavor in too_small or len(too_small) == len(gpu_flavors)
    flavor = pod_set.flavor if pod_set.flavor in too_small else too_small[0]
    assert flavor is not None
    size = VM_SIZES[cluster.pool(flavor).vm_size]
    big_enough = sorted(
        {n for n, s in VM_SIZES.items() if s.gpu_memory_gb >= need and s.retired is None},
        key=lambda n: (VM_SIZES[n].gpus, VM_SIZES[n].gpu_memory_gb, n),
    )
    what = (
        f"{workload.spec.name} needs a GPU with {need} GB of memory for its model, but pool "
        f"{flavor}'s {size.name} has {size.gpu_model} GPUs with {size.gpu_memory_gb} GB"
    )
    team_quota = f"{plan.settings.scheduling.team_path(workload.team.name)}.quota.{flavor}"
    path = f"{cluster.pool_path(flavor)}.vmSize"
    if fatal:
        out.error(
            path,
            f"{what}: it would start and fail loading the model; use a size with larger GPUs "
            f"(e.g. {', '.join(big_enough[:3])}), or move team {workload.team.name}'s quota "
            f"({team_quota}) to a pool that has them",
        )
    else:
        others = ", ".join(f for f in pod_set.may_use if f not in too_small and f != CPU_POOL_NAME)
        out.warning(
            path,
            f"{what}: Kueue gives it this flavor when {others} is full, and then it fails "
            f"loading the model; take team {workload.team.name}'s quota off this flavor "
            f"({team_quota}) or use a size with larger GPUs",
        )
