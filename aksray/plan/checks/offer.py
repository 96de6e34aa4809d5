"""Warnings where the tables of Azure's offer cannot tell (what they prove wrong is refused by
settings/deployable.py): a GPU size in a region the region table does not cover, and a
render-only stack on a new cluster, which needs its operators installed before the rendered
YAML is applied."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from catalog import gpu_regions


def check_gpu_size_offer_known(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    cluster = settings.cluster
    if cluster.mode != "aks":
        return
    for index, pool in enumerate(cluster.gpu_pools):
        if gpu_regions.offered(pool.vm_size, settings.location) is not None:
            continue
        out.warning(
            f"cluster.gpuPools[{index}].vmSize",
            f"this version cannot tell whether {settings.location} offers {pool.vm_size} (its "
            f"table of GPU sizes per region covers {len(gpu_regions.REGIONS)} US regions, as of "
            f"{gpu_regions.AS_OF}); a region without it fails `pulumi up` at this pool: check "
            f"with `az vm list-skus -l {settings.location} --size {pool.vm_size} -o table`",
        )


def check_rendered_operators(plan: Plan, out: Findings) -> None:
    cluster = plan.settings.cluster
    if cluster.mode != "aks" or not cluster.render_yaml_to or plan.settings.operators.install:
        return
    out.warning(
        "operators.install",
        "is false (a render-only stack installs no Helm release), but mode: aks creates a new "
        "cluster, which has no GPU Operator, KubeRay, Kueue or KAI Scheduler: install them "
        "(docs/cluster-software.md) before applying the YAML in "
        f"{cluster.render_yaml_to}, or the queues and workloads in it are refused",
    )
