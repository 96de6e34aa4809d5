"""Catalog of the Azure VM sizes the platform can put in a node pool.

Facts per size: vCPUs, memory (GiB), GPUs per VM, GPU model and memory per GPU (GB). Source: the
Microsoft Learn size pages ("Sizes for virtual machines in Azure", one page per series):
  NC A100 v4   virtual-machines/sizes/gpu-accelerated/nca100v4-series
  ND A100 v4   virtual-machines/sizes/gpu-accelerated/nda100v4-series
  NDm A100 v4  virtual-machines/sizes/gpu-accelerated/ndma100v4-series
  NC H100 v5   virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series
  ND H100 v5   virtual-machines/sizes/gpu-accelerated/ndh100v5-series
  NCasT4_v3    virtual-machines/sizes/gpu-accelerated/ncast4v3-series
  NVadsA10_v5  virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series
  NCv3         virtual-machines/sizes/gpu-accelerated/ncv3-series
  Ddsv5        virtual-machines/sizes/general-purpose/ddsv5-series
  Ddsv6        virtual-machines/sizes/general-purpose/ddsv6-series
Only whole-GPU sizes are listed: fractional NVadsA10_v5 sizes (1/6 to 1/2 of an A10) expose a
vGPU profile, not an `nvidia.com/gpu` device the GPU Operator can hand to a pod.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class VmSize:
    name: str
    series: str
    vcpus: int
    memory_gib: int
    gpus: int = 0
    gpu_model: str = ""
    gpu_memory_gb: int = 0  # per GPU
    # The day Microsoft retired the size: no new VM of it can be created after it, and running
    # ones were deallocated. None: not retired.
    retired: datetime.date | None = None

    @property
    def is_gpu(self) -> bool:
        return self.gpus > 0


_NCV3_RETIRED: Final = datetime.date(2025, 9, 30)


def _sizes(*sizes: VmSize) -> dict[str, VmSize]:
    return {size.name: size for size in sizes}


VM_SIZES: Final[dict[str, VmSize]] = _sizes(
    # NC A100 v4: A100 80GB PCIe, 1-4 GPUs.
    VmSize("Standard_NC24ads_A100_v4", "NC A100 v4", 24, 220, 1, "A100 80GB PCIe", 80),
    VmSize("Standard_NC48ads_A100_v4", "NC A100 v4", 48, 440, 2, "A100 80GB PCIe", 80),
    VmSize("Standard_NC96ads_A100_v4", "NC A100 v4", 96, 880, 4, "A100 80GB PCIe", 80),
    # ND A100 v4 / NDm A100 v4: 8 x A100 SXM with NVLink and InfiniBand.
    VmSize("Standard_ND96asr_v4", "ND A100 v4", 96, 900, 8, "A100 40GB SXM4", 40),
    VmSize("Standard_ND96amsr_A100_v4", "NDm A100 v4", 96, 1900, 8, "A100 80GB SXM4", 80),
    # NC H100 v5: H100 NVL 94GB, 1-2 GPUs.
    VmSize("Standard_NC40ads_H100_v5", "NC H100 v5", 40, 320, 1, "H100 NVL", 94),
    VmSize("Standard_NC80adis_H100_v5", "NC H100 v5", 80, 640, 2, "H100 NVL", 94),
    # ND H100 v5: 8 x H100 80GB SXM5 with NVLink and InfiniBand.
    VmSize("Standard_ND96isr_H100_v5", "ND H100 v5", 96, 1900, 8, "H100 80GB SXM5", 80),
    # NCasT4_v3: T4 16GB.
    VmSize("Standard_NC4as_T4_v3", "NCasT4_v3", 4, 28, 1, "T4", 16),
    VmSize("Standard_NC8as_T4_v3", "NCasT4_v3", 8, 56, 1, "T4", 16),
    VmSize("Standard_NC16as_T4_v3", "NCasT4_v3", 16, 110, 1, "T4", 16),
    VmSize("Standard_NC64as_T4_v3", "NCasT4_v3", 64, 440, 4, "T4", 16),
    # NVadsA10_v5, whole-GPU sizes only: A10 24GB.
    VmSize("Standard_NV36ads_A10_v5", "NVadsA10_v5", 36, 440, 1, "A10", 24),
    VmSize("Standard_NV36adms_A10_v5", "NVadsA10_v5", 36, 880, 1, "A10", 24),
    VmSize("Standard_NV72ads_A10_v5", "NVadsA10_v5", 72, 880, 2, "A10", 24),
    # NCv3: V100 16GB. Microsoft retired the series on 2025-09-30 (Microsoft Learn,
    # virtual-machines/sizes/retirement/ncv3-series-retirement); kept so that a stack naming it
    # is refused with that reason rather than "unknown size".
    VmSize("Standard_NC6s_v3", "NCv3", 6, 112, 1, "V100", 16, retired=_NCV3_RETIRED),
    VmSize("Standard_NC12s_v3", "NCv3", 12, 224, 2, "V100", 16, retired=_NCV3_RETIRED),
    VmSize("Standard_NC24s_v3", "NCv3", 24, 448, 4, "V100", 16, retired=_NCV3_RETIRED),
    VmSize("Standard_NC24rs_v3", "NCv3", 24, 448, 4, "V100", 16, retired=_NCV3_RETIRED),
    # General purpose, for the system pool and the CPU pool (operators, Ray heads).
    VmSize("Standard_D2ds_v5", "Ddsv5", 2, 8),
    VmSize("Standard_D4ds_v5", "Ddsv5", 4, 16),
    VmSize("Standard_D8ds_v5", "Ddsv5", 8, 32),
    VmSize("Standard_D16ds_v5", "Ddsv5", 16, 64),
    VmSize("Standard_D2ds_v6", "Ddsv6", 2, 8),
    VmSize("Standard_D4ds_v6", "Ddsv6", 4, 16),
    VmSize("Standard_D8ds_v6", "Ddsv6", 8, 32),
    VmSize("Standard_D16ds_v6", "Ddsv6", 16, 64),
    VmSize("Standard_D32ds_v6", "Ddsv6", 32, 128),
)


def gpu_sizes() -> list[str]:
    """The GPU sizes a new pool can use (retired ones left out)."""
    return sorted(n for n, size in VM_SIZES.items() if size.is_gpu and size.retired is None)


def cpu_sizes() -> list[str]:
    return sorted(n for n, size in VM_SIZES.items() if not size.is_gpu and size.retired is None)
