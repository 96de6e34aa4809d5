"""What a rehearsal records: samples of the controllers' objects, timeline events and verdicts.

A sample is one look at every Kueue Workload, Ray object and pod of the stack's namespaces, the
nodes, flavors and ClusterQueues, at a time since the scenario started; the invariants and the
scenarios read samples, the observer (aksray/rehearse/observer.py) takes them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aksray.rehearse import objects as o


@dataclass(frozen=True)
class TimelineEvent:
    t: float
    workload: str
    what: str
    detail: str

    def line(self, width: int = 200) -> str:
        text = self.detail if len(self.detail) <= width else self.detail[: width - 3] + "..."
        detail = f" {text}" if text else ""
        return f"t=+{self.t:.1f}s {self.workload} {self.what}{detail}"

    def as_json(self) -> dict[str, Any]:
        return {
            "t": round(self.t, 1),
            "workload": self.workload,
            "what": self.what,
            "detail": self.detail,
        }


@dataclass
class Verdict:
    name: str
    held: bool = True
    detail: str = ""
    checked: int = 0

    def breach(self, detail: str) -> None:
        if self.held:
            self.held = False
            self.detail = detail

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "held": self.held, "detail": self.detail}


def poll_until(sampled: Callable[[], bool], timeout: float, interval: float) -> bool:
    """Take a sample and test it until it holds (True) or `timeout` seconds have passed, with
    one last sample after the deadline (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if sampled():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)


@dataclass
class Sample:
    t: float
    workloads: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    owners: dict[tuple[str, str, str], dict[str, Any]]  # (ns, kind, name) -> RayJob/RayService
    clusters: dict[tuple[str, str], tuple[str, str] | None]  # (ns, RayCluster) -> owner
    nodes: dict[str, dict[str, Any]]
    flavor_pool: dict[str, str]
    queues: dict[str, dict[str, Any]]
    # Workloads (namespace/name) Kueue had admitted when the latest change to the stack began
    # (`aksray rehearse --since`): a quota cut may leave them over the new quota.
    admitted_before: frozenset[str] = frozenset()

    def workload_name(self, ns: str, ref: tuple[str, str] | None) -> str:
        """How the timeline names the RayJob or RayService `ref` of namespace `ns`."""
        if ref is None:
            return "?"
        obj = self.owners.get((ns, ref[0], ref[1]))
        return o.workload_label(obj) if obj else ref[1]

    def pod_owner(self, pod: Mapping[str, Any]) -> tuple[str, str] | None:
        """(kind, name) of the RayJob or RayService whose Ray cluster the pod belongs to."""
        ns = pod["metadata"]["namespace"]
        cluster = (pod["metadata"].get("labels") or {}).get("ray.io/cluster", "")
        return self.clusters.get((ns, cluster))

    @functools.cached_property
    def workload_by_owner(self) -> Mapping[tuple[str, str, str], Mapping[str, Any]]:
        """(ns, kind, name) of a Ray object -> the Kueue Workload that stands for it."""
        return o.workload_by_owner(self.workloads)


# One invariant's check of one sample (aksray/rehearse/invariants/): breaches `verdict` when the
# sample shows the invariant broken.
SampleCheck = Callable[[Sample, Verdict], None]
