"""A pod set: one group of identical pods, as Kueue admits them and KAI gangs them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from catalog.quantities import GPU_RESOURCE
from scheduling.amounts import Amounts


@dataclass(frozen=True)
class PodSet:
    """One group of identical pods: Kueue's pod set, one part of KAI's gang.

    `requests` are per pod, in canonical units (cpu millicores, memory bytes, GPUs);
    `node_selector` is the pods' own (a Ray head selects the CPU pool).
    """

    name: str
    count: int
    requests: Mapping[str, int]  # per pod
    node_selector: Mapping[str, str] = field(default_factory=dict)

    @property
    def total(self) -> dict[str, int]:
        return {r: v * self.count for r, v in self.requests.items() if v > 0}

    @property
    def cpu_millis(self) -> int:
        return self.requests.get("cpu", 0)

    @property
    def memory_bytes(self) -> int:
        return self.requests.get("memory", 0)

    @property
    def gpus(self) -> int:
        return self.requests.get(GPU_RESOURCE, 0)

    @property
    def total_gpus(self) -> int:
        return self.count * self.gpus

    @property
    def amounts(self) -> Amounts:
        """Per-pod requests as amounts."""
        return Amounts(self.requests)
