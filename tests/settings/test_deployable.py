"""What `pulumi up` would fail on halfway is refused before the first resource (retired sizes,
node pools past AKS's limit, GPU sizes the region does not offer, a new cluster without its
operators); what the tables cannot tell is a warning of the plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog import gpu_regions, regions
from catalog.azure import MAX_NODE_POOLS
from catalog.vm_sizes import VM_SIZES, gpu_sizes
from settings.deployable import FIXED_POOLS
from tests.support.harness import P, assert_rejected, cli, planned, write_stack
from tests.support.minimal_stack import config, minimal

G = "cluster.gpuPools[0].vmSize"


def _pool(document: dict[str, Any]) -> dict[str, Any]:
    pool: dict[str, Any] = config(document)[P + "cluster"]["gpuPools"][0]
    return pool


def _warnings(tmp_path: Path, document: dict[str, Any]) -> list[str]:
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 0, run.output
    return [line for line in run.stderr.splitlines() if line.startswith("warning: ")]


# ---- retired sizes ---------------------------------------------------------------------------


def test_a_retired_size_is_refused_with_its_date_and_current_sizes(tmp_path: Path) -> None:
    document = minimal()
    _pool(document)["vmSize"] = "Standard_NC24s_v3"  # NCv3, 4 x V100
    run = assert_rejected(tmp_path, document, G)
    assert run.error_lines == [
        f"error: {G}: Microsoft retired the NCv3 series (Standard_NC24s_v3) on 2025-09-30: "
        "Azure creates no node of it; use a current size, e.g. Standard_NC64as_T4_v3, "
        "Standard_NC96ads_A100_v4"
    ]


def test_retired_sizes_are_never_offered_as_choices() -> None:
    retired = {n for n, s in VM_SIZES.items() if s.retired is not None}
    assert retired == {
        "Standard_NC6s_v3",
        "Standard_NC12s_v3",
        "Standard_NC24s_v3",
        "Standard_NC24rs_v3",
    }
    assert retired.isdisjoint(gpu_sizes())


# ---- node pools per cluster ------------------------------------------------------------------


def _with_gpu_pools(count: int) -> dict[str, Any]:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"] = [
        {"name": f"p{i}", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 1} for i in range(count)
    ]
    config(document)[P + "scheduling"]["departments"][0]["teams"][0]["quota"] = {
        "p0": {"gpu": 1},
        "cpu": {"cpu": 4, "memory": "16Gi"},
    }
    return document


def test_more_node_pools_than_aks_allows_is_refused(tmp_path: Path) -> None:
    assert MAX_NODE_POOLS == 100
    gpu_pools = MAX_NODE_POOLS - FIXED_POOLS + 1
    run = assert_rejected(tmp_path, _with_gpu_pools(gpu_pools), "cluster.gpuPools")
    assert run.error_lines == [
        "error: cluster.gpuPools: 99 GPU pools plus the system and CPU pools make 101 node "
        "pools, and AKS allows at most 100 per cluster; use at most 98 GPU pools (one per VM "
        "size and spot setting is enough: a pool's maxCount holds up to 1000 nodes)"
    ]


def test_exactly_as_many_node_pools_as_aks_allows_plans(tmp_path: Path) -> None:
    document = _with_gpu_pools(MAX_NODE_POOLS - FIXED_POOLS)
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert "cluster.gpuPools:" not in run.stderr
    assert run.error_lines == [], run.stderr


# ---- GPU sizes per region --------------------------------------------------------------------


def test_a_gpu_size_the_region_does_not_offer_is_refused(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "location"] = "westus2"
    _pool(document)["vmSize"] = "Standard_NC40ads_H100_v5"
    run = assert_rejected(tmp_path, document, G)
    assert run.error_lines == [
        f"error: {G}: westus2 does not offer Standard_NC40ads_H100_v5 (Azure's price list for "
        f"the region, {gpu_regions.AS_OF}; `az vm list-skus -l westus2 --size "
        "Standard_NC40ads_H100_v5` shows today's offer); use a size westus2 offers "
        "(Standard_NC16as_T4_v3, Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4, "
        "Standard_NC4as_T4_v3, Standard_NC64as_T4_v3, Standard_NC8as_T4_v3, "
        "Standard_NC96ads_A100_v4, Standard_ND96asr_v4, Standard_NV36adms_A10_v5, "
        "Standard_NV36ads_A10_v5, Standard_NV72ads_A10_v5) or set location to one that offers "
        "it (eastus, eastus2, southcentralus, westus3)"
    ]


def test_an_existing_cluster_is_not_held_to_the_region_table(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "location"] = "westus2"
    config(document)[P + "cluster"].update(mode="existing", kubeconfigContext="kind-dev")
    config(document)[P + "storage"] = {"enabled": False}
    config(document)[P + "operators"] = {
        "install": False,
        "kaiActions": ["allocate"],
        "kuberayServiceAccount": "kuberay-system/kuberay-operator",
    }
    _pool(document)["vmSize"] = "Standard_NC40ads_H100_v5"
    assert _warnings(tmp_path, document) == []


def test_a_region_the_table_does_not_cover_is_a_warning(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "location"] = "westeurope"
    assert _warnings(tmp_path, document) == [
        f"warning: {G}: this version cannot tell whether westeurope offers "
        "Standard_NC24ads_A100_v4 (its table of GPU sizes per region covers 9 US regions, as of "
        f"{gpu_regions.AS_OF}); a region without it fails `pulumi up` at this pool: check with "
        "`az vm list-skus -l westeurope --size Standard_NC24ads_A100_v4 -o table`"
    ]


def test_the_region_table_covers_every_current_gpu_size_in_real_regions() -> None:
    assert set(gpu_regions.GPU_SIZE_REGIONS) == set(gpu_sizes())
    assert set(regions.AZURE_REGIONS) >= gpu_regions.REGIONS
    for size, offered_in in gpu_regions.GPU_SIZE_REGIONS.items():
        assert offered_in and offered_in <= gpu_regions.REGIONS, size
    assert gpu_regions.offered("Standard_NC24ads_A100_v4", "eastus2") is True
    assert gpu_regions.offered("Standard_ND96isr_H100_v5", "westus2") is False
    assert gpu_regions.offered("Standard_ND96isr_H100_v5", "swedencentral") is None


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_project_stacks_pools_are_offered_in_their_region(stack: str) -> None:
    settings = planned(stack).settings
    for pool in settings.cluster.gpu_pools:
        assert gpu_regions.offered(pool.vm_size, settings.location) is True, pool


# ---- operators on a new cluster --------------------------------------------------------------


def test_a_new_cluster_without_operators_is_refused(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "operators"] = {"install": False}
    run = assert_rejected(tmp_path, document, "operators.install")
    assert run.error_lines == [
        "error: operators.install: is false, but mode: aks creates a new cluster, which has no "
        "GPU Operator, KubeRay, Kueue or KAI Scheduler: `pulumi up` would fail on the first "
        "queue after creating the cluster; set operators.install: true (or mode: existing for "
        "a cluster that runs them)"
    ]


def test_a_render_only_new_cluster_is_warned_about_its_operators(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["renderYamlTo"] = "out/render"
    config(document)[P + "operators"] = {"install": False, "kaiActions": ["allocate"]}
    assert _warnings(tmp_path, document) == [
        "warning: operators.install: is false (a render-only stack installs no Helm release), "
        "but mode: aks creates a new cluster, which has no GPU Operator, KubeRay, Kueue or KAI "
        "Scheduler: install them (docs/cluster-software.md) before applying the YAML in "
        "out/render, or the queues and workloads in it are refused"
    ]
