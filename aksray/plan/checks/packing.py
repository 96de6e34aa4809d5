"""GPU packing: every GPU worker fits one GPU's share of each node it may run on, so a full node
runs a full gang and a team's GPU quota runs a gang of that many GPUs (scheduling/workers.py)."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings, amounts
from aksray.plan.model.plan import Plan, WorkloadPlan
from catalog.pools import CPU_POOL_NAME
from catalog.quantities import GPU_RESOURCE
from catalog.vm_sizes import VM_SIZES
from scheduling.amounts import READING_ORDER, Amounts
from scheduling.nodes import daemon_set_requests, gpu_share, node_allocatable
from scheduling.workers import fits_share, gpus_used_per_node, minimum_per_gpu, per_gpu
from settings.model import workload_path


def gpu_flavors(plan: Plan, workload: WorkloadPlan) -> list[str]:
    """The GPU flavors a workload's GPU workers may get: those of its team's queue."""
    queue = plan.registered.queues[workload.team.name]
    return [f.name for f in queue.flavors if f.name != CPU_POOL_NAME]


def check_gpu_share(plan: Plan, out: Findings) -> None:
    """A GPU worker asking more per GPU than a GPU's share of a node can never fill that node
    (a GPU stranded per node) and never runs on its team's own quota of that many GPUs."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        spec = workload.spec
        if spec.gpu_group is None:
            continue
        asked = per_gpu(spec, workload.workload)
        for flavor in gpu_flavors(plan, workload):
            vm_size = cluster.pool(flavor).vm_size
            if fits_share(asked, vm_size):
                continue
            out.error(*_over_share(plan, workload, flavor, asked))


def _over_share(plan: Plan, workload: WorkloadPlan, flavor: str, asked: Amounts) -> tuple[str, str]:
    cluster = plan.settings.cluster
    spec, settings = workload.spec, workload.workload
    vm_size = cluster.pool(flavor).vm_size
    share = gpu_share(vm_size)
    gpus = VM_SIZES[vm_size].gpus
    over = [r for r in READING_ORDER if asked[r] > share[r]]
    keys = {"cpu": "cpuPerGpu", "memory": "memoryPerGpu"}
    raised = [r for r in over if getattr(settings, f"{r}_per_gpu") is not None]
    minimum = minimum_per_gpu(spec)
    need = amounts({r: asked[r] for r in over})
    have = amounts({r: share[r] for r in over})
    head = (
        f"{spec.name} asks {need} per GPU, but one GPU's share of a {vm_size} node of pool "
        f"{flavor} is {have} ((node allocatable {_node(node_allocatable(vm_size), over)} "
        f"less the GPU node's daemon sets' {_node(daemon_set_requests(vm_size), over)}) / "
        f"{gpus} GPUs): a full node would hold fewer than {gpus} of its workers, stranding "
        f"GPUs, and team {workload.team.name}'s quota of N GPUs there would not admit N of them"
    )
    if raised:
        path = f"{workload_path(spec.name)}.{keys[raised[0]]}"
        return path, (
            f"{head}: lower {' and '.join(keys[r] for r in raised)} to at most {have} "
            f"(the payload needs {amounts({r: minimum[r] for r in over})})"
        )
    group = spec.gpu_group
    assert group is not None
    return f"{cluster.pool_path(flavor)}.vmSize", (
        f"{head}; that is the payload's minimum ({group.minimum_why}): use a vmSize with more "
        f"CPU and memory per GPU for pool {flavor}, or run {spec.name} on another team's pool"
    )


def _node(node: Amounts, resources: list[str]) -> str:
    return amounts({r: node[r] for r in resources})


def check_full_node(plan: Plan, out: Findings) -> None:
    """A worker shape that fits the share but leaves GPUs of a full node unused (a pod of k GPUs
    on a node whose GPU count k does not divide)."""
    cluster = plan.settings.cluster
    for workload in plan.workloads:
        for pod_set in workload.pod_sets:
            requests = Amounts(pod_set.pod_set.requests)
            if not requests[GPU_RESOURCE]:
                continue
            for flavor in gpu_flavors(plan, workload):
                vm_size = cluster.pool(flavor).vm_size
                per_gpu_amounts = requests.floor_div(requests[GPU_RESOURCE])
                if not fits_share(per_gpu_amounts, vm_size):
                    continue  # check_gpu_share says why
                used = gpus_used_per_node(requests, vm_size)
                gpus = VM_SIZES[vm_size].gpus
                if used < gpus:
                    out.error(
                        f"{cluster.pool_path(flavor)}.vmSize",
                        f"{workload.spec.name}'s {pod_set.pod_set.name} pods take "
                        f"{requests[GPU_RESOURCE]} GPUs each: a full {vm_size} node of pool "
                        f"{flavor} runs {used} of its {gpus} GPUs for them and strands the "
                        "rest; use a vmSize whose GPU count they divide",
                    )
