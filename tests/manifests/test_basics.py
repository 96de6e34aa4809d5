"""Pure building blocks: quantities, the VM catalog, pool labels and taints."""

from __future__ import annotations

import pytest

from catalog.pools import gpu_pool_node_taints, tolerations_for
from catalog.quantities import (
    QuantityError,
    format_cpu,
    format_memory,
    parse_cpu_millis,
    parse_memory_bytes,
)
from catalog.vm_sizes import VM_SIZES
from manifests.aks import gpu_pool_args


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        (16, 16000),
        ("16", 16000),
        ("500m", 500),
        ("1.5", 1500),
        ("0", 0),
        (".5", 500),
        ("5.", 5000),
        ("+2", 2000),
        ("5E-3", 5),
        ("2e1", 20000),
        ("500000u", 500),
        ("1k", 1_000_000),
        (2.5, 2500),
    ],
)
def test_cpu_quantities(text: object, millis: int) -> None:
    """Kubernetes' quantity grammar (k8s.io/apimachinery pkg/api/resource/quantity.go)."""
    assert parse_cpu_millis(text) == millis


@pytest.mark.parametrize(
    ("text", "num"),
    [
        ("64Gi", 64 * 2**30),
        ("512Mi", 512 * 2**20),
        ("1G", 10**9),
        (1024, 1024),
        ("1.5Gi", 3 * 2**29),
        ("1e11", 10**11),
        ("100e9", 10**11),  # how the API server writes `1e11` back
        ("1.2E11", 12 * 10**10),
        ("+1.2e+11", 12 * 10**10),
        (1e11, 10**11),  # a YAML 1.2 number
        ("2000m", 2),
        ("1E", 10**18),  # exa, not an exponent
    ],
)
def test_memory_quantities(text: object, num: int) -> None:
    assert parse_memory_bytes(text) == num


@pytest.mark.parametrize(
    "bad", ["64Gb", "64 Gi", "-1", "1e3m", "1K", "e3", ".", "", True, None, "0.5m", "1e999"]
)
def test_malformed_quantities_are_rejected(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_cpu_millis(bad) if bad != "64Gb" else parse_memory_bytes(bad)


@pytest.mark.parametrize("bad", ["1.5", "500m", "1e-3", "0.1Ki"])
def test_memory_is_whole_bytes(bad: str) -> None:
    with pytest.raises(QuantityError, match="not a whole number of bytes"):
        parse_memory_bytes(bad)


def test_quantities_format_back_exactly() -> None:
    assert format_cpu(16000) == "16" and format_cpu(1500) == "1500m"
    assert format_memory(64 * 2**30) == "64Gi" and format_memory(1000) == "1000"


@pytest.mark.parametrize(
    ("size", "vcpus", "memory", "gpus", "model", "gpu_gb"),
    [
        ("Standard_NC24ads_A100_v4", 24, 220, 1, "A100 80GB PCIe", 80),
        ("Standard_NC96ads_A100_v4", 96, 880, 4, "A100 80GB PCIe", 80),
        ("Standard_ND96asr_v4", 96, 900, 8, "A100 40GB SXM4", 40),
        ("Standard_ND96amsr_A100_v4", 96, 1900, 8, "A100 80GB SXM4", 80),
        ("Standard_NC40ads_H100_v5", 40, 320, 1, "H100 NVL", 94),
        ("Standard_NC80adis_H100_v5", 80, 640, 2, "H100 NVL", 94),
        ("Standard_ND96isr_H100_v5", 96, 1900, 8, "H100 80GB SXM5", 80),
        ("Standard_NC4as_T4_v3", 4, 28, 1, "T4", 16),
        ("Standard_NC64as_T4_v3", 64, 440, 4, "T4", 16),
        ("Standard_NV36ads_A10_v5", 36, 440, 1, "A10", 24),
        ("Standard_NV72ads_A10_v5", 72, 880, 2, "A10", 24),
        ("Standard_NC24s_v3", 24, 448, 4, "V100", 16),
        ("Standard_D8ds_v6", 8, 32, 0, "", 0),
    ],
)
def test_vm_catalog_facts(
    size: str, vcpus: int, memory: int, gpus: int, model: str, gpu_gb: int
) -> None:
    vm = VM_SIZES[size]
    assert (vm.vcpus, vm.memory_gib, vm.gpus, vm.gpu_model, vm.gpu_memory_gb) == (
        vcpus,
        memory,
        gpus,
        model,
        gpu_gb,
    )


def test_fractional_gpu_sizes_are_not_offered() -> None:
    assert "Standard_NV6ads_A10_v5" not in VM_SIZES
    assert "Standard_NV18ads_A10_v5" not in VM_SIZES


def test_spot_gpu_nodes_carry_the_aks_spot_taint_and_flavors_tolerate_both() -> None:
    taints = gpu_pool_node_taints(spot=True)
    assert taints == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"},
    ]
    assert [t["key"] for t in tolerations_for(taints)] == [t["key"] for t in taints]
    # ... but only the GPU taint is declared on the pool: AKS adds the spot taint itself.
    args = gpu_pool_args(
        "a100spot",
        "Standard_NC24ads_A100_v4",
        min_count=0,
        max_count=4,
        spot=True,
        gpu_driver="operator",
        kubernetes_version="1.35",
    )
    assert args["node_taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert (
        args["scale_set_priority"],
        args["scale_set_eviction_policy"],
        args["spot_max_price"],
    ) == ("Spot", "Delete", -1)
