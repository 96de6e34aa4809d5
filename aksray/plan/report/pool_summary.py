"""The plan summary's pools: per pool its VM size, GPUs, node counts and what one node offers,
from the scheduling core's node model (scheduling/nodes.py): AKS's allocatable, and on a GPU
node what its daemon sets request of it before the stack's pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aksray.plan.model.plan import Plan
from aksray.plan.report.tables import NONE, Render, text_table
from catalog.quantities import RESOURCE_KEYS
from catalog.vm_sizes import VM_SIZES
from scheduling.amounts import READING_ORDER, Amounts
from scheduling.nodes import daemon_set_requests, node_allocatable
from settings.model import GpuPool

POOLS_TITLE: Final = (
    "Pools (node allocatable = the VM as its kernel reports it minus AKS reservations; daemon "
    "sets = what each GPU node's daemon sets request of it)"
)


def requests(values: Mapping[str, int]) -> dict[str, Any]:
    """Canonical amounts as Kubernetes quantities: {"gpu": 1, "cpu": "8", "memory": "64Gi"}."""
    quantities = Amounts(values).quantities()
    return {RESOURCE_KEYS[r]: quantities[r] for r in READING_ORDER}


def shown_amounts(values: Mapping[str, Any] | None, *, zeros: bool = True) -> str:
    """`gpu 1, cpu 8, memory 64Gi`; without `zeros`, a zero amount is left out."""
    if not values:
        return NONE
    return ", ".join(
        f"{key} {values[key]}"
        for key in (RESOURCE_KEYS[r] for r in READING_ORDER)
        if key in values and (zeros or values[key] not in (0, "0"))
    )


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
                "nodeAllocatable": requests(node),
                "daemonSets": requests(daemon_set_requests(pool.vm_size)),  # per GPU node
            }
        )
    return rows


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
        "daemon sets",
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
            shown_amounts(p["nodeAllocatable"], zeros=False),
            shown_amounts(p["daemonSets"], zeros=False) or "-",
        )
        for p in pools
    )
    return render(POOLS_TITLE, header, rows)
