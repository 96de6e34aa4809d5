"""What `pulumi up` would fail on halfway, after creating (and billing) part of the stack: a VM
size Microsoft has retired, more node pools than AKS allows, a GPU size the region does not
offer (catalog/gpu_regions.py; a combination the table cannot tell is a warning of the planner,
aksray/plan/checks/offer.py), and a new cluster without the operators whose objects the stack
creates. Each is refused here, before the first resource."""

from __future__ import annotations

from catalog import gpu_regions
from catalog.azure import MAX_NODE_POOLS
from catalog.vm_sizes import VM_SIZES, VmSize, cpu_sizes, gpu_sizes
from settings.errors import Problem
from settings.model import ClusterSettings, OperatorSettings

# The pools an `aks` stack creates besides its GPU pools: the system pool and the CPU pool.
FIXED_POOLS = 2


def check_deployable(
    location: str, cluster: ClusterSettings, operators: OperatorSettings, problems: list[Problem]
) -> None:
    check_retired_sizes(cluster, problems)
    if cluster.mode != "aks":
        return
    check_node_pool_count(cluster, problems)
    check_gpu_sizes_offered(location, cluster, problems)
    check_operators_on_new_cluster(cluster, operators, problems)


def _pools(cluster: ClusterSettings) -> list[tuple[str, str]]:
    """(config path of the vmSize, the size) of every pool."""
    return [
        ("cluster.systemPool.vmSize", cluster.system_pool.vm_size),
        ("cluster.cpuPool.vmSize", cluster.cpu_pool.vm_size),
        *(
            (f"cluster.gpuPools[{index}].vmSize", pool.vm_size)
            for index, pool in enumerate(cluster.gpu_pools)
        ),
    ]


def _same_gpu(size: VmSize) -> list[str]:
    """Sizes that can replace a retired one: the same GPU count, else any GPU size."""
    choices = gpu_sizes() if size.is_gpu else cpu_sizes()
    same = [n for n in choices if VM_SIZES[n].gpus == size.gpus] if size.is_gpu else []
    return same or choices


def check_retired_sizes(cluster: ClusterSettings, problems: list[Problem]) -> None:
    """No VM of a retired size can be created, and running ones were deallocated."""
    for path, name in _pools(cluster):
        size = VM_SIZES.get(name)
        if size is None or size.retired is None:
            continue
        problems.append(
            Problem(
                path,
                f"Microsoft retired the {size.series} series ({name}) on {size.retired}: "
                "Azure creates no node of it; use a current size, e.g. "
                f"{', '.join(_same_gpu(size)[:4])}",
            )
        )


def check_node_pool_count(cluster: ClusterSettings, problems: list[Problem]) -> None:
    pools = FIXED_POOLS + len(cluster.gpu_pools)
    if pools <= MAX_NODE_POOLS:
        return
    problems.append(
        Problem(
            "cluster.gpuPools",
            f"{len(cluster.gpu_pools)} GPU pools plus the system and CPU pools make {pools} node "
            f"pools, and AKS allows at most {MAX_NODE_POOLS} per cluster; use at most "
            f"{MAX_NODE_POOLS - FIXED_POOLS} GPU pools (one per VM size and spot setting is "
            "enough: a pool's maxCount holds up to 1000 nodes)",
        )
    )


def check_gpu_sizes_offered(
    location: str, cluster: ClusterSettings, problems: list[Problem]
) -> None:
    for index, pool in enumerate(cluster.gpu_pools):
        if gpu_regions.offered(pool.vm_size, location) is not False:
            continue
        here = [s for s in gpu_regions.sizes_offered_in(location) if s in gpu_sizes()]
        elsewhere = ", ".join(gpu_regions.regions_offering(pool.vm_size)) or "none it covers"
        problems.append(
            Problem(
                f"cluster.gpuPools[{index}].vmSize",
                f"{location} does not offer {pool.vm_size} (Azure's price list for the region, "
                f"{gpu_regions.AS_OF}; `az vm list-skus -l {location} --size {pool.vm_size}` "
                f"shows today's offer); use a size {location} offers "
                f"({', '.join(here) or 'none this version knows'}) or set location to one that "
                f"offers it ({elsewhere})",
            )
        )


def check_operators_on_new_cluster(
    cluster: ClusterSettings, operators: OperatorSettings, problems: list[Problem]
) -> None:
    """A cluster this stack creates has none of the operators; without them `pulumi up` fails on
    the first Kueue or KAI object, after the cluster is up. A render-only stack applies nothing
    itself: the planner warns instead (aksray/plan/checks/offer.py)."""
    if operators.install or cluster.render_yaml_to:
        return
    problems.append(
        Problem(
            "operators.install",
            "is false, but mode: aks creates a new cluster, which has no GPU Operator, KubeRay, "
            "Kueue or KAI Scheduler: `pulumi up` would fail on the first queue after creating "
            "the cluster; set operators.install: true (or mode: existing for a cluster that "
            "runs them)",
        )
    )
