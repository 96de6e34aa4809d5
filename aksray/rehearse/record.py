"""What a rehearsal records: samples of the controllers' objects, timeline events and verdicts.

A sample is one look at every Kueue Workload, Ray object and pod of the stack's namespaces, the
nodes, flavors and ClusterQueues, at a time since the scenario started; the invariants and the
scenarios read samples, the observer (aksray/rehearse/observer.py) takes them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
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
    # An invariant about one kind of subject (an endpoint) says whether the run had one: False
    # until a sample shows it, and a verdict with nothing to judge is reported as such, never
    # as held. None: the invariant judges every run.
    applicable: bool | None = None
    inapplicable_why: str = ""

    def breach(self, detail: str) -> None:
        if self.held:
            self.held = False
            self.detail = detail

    def subject(self, seen: bool) -> None:
        """Record whether this sample shows the invariant's subject (once seen, it stays)."""
        self.applicable = bool(self.applicable) or seen

    @property
    def mark(self) -> str:
        if self.applicable is False:
            return "n/a"
        return "held" if self.held else "BROKEN"

    def as_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"name": self.name, "held": self.held, "detail": self.detail}
        if self.applicable is False:
            document["applicable"] = False
            document["detail"] = self.inapplicable_why
        return document


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

    def bound_ray_pods(
        self,
    ) -> Iterator[tuple[dict[str, Any], tuple[str, str], str, Mapping[str, Any] | None]]:
        """(pod, owner ref, node, Workload or None) of every Ray pod bound to a node and not
        being deleted."""
        for pod in self.pods:
            node = pod.get("spec", {}).get("nodeName")
            ref = self.pod_owner(pod)
            if not node or ref is None or o.is_terminating(pod):
                continue
            ns = pod["metadata"]["namespace"]
            yield pod, ref, node, self.workload_by_owner.get((ns, *ref))

    @functools.cached_property
    def workload_by_owner(self) -> Mapping[tuple[str, str, str], Mapping[str, Any]]:
        """(ns, kind, name) of a Ray object -> the Kueue Workload that stands for it."""
        return o.workload_by_owner(self.workloads)


# One invariant's check of one sample (aksray/rehearse/invariants/): breaches `verdict` when the
# sample shows the invariant broken.
SampleCheck = Callable[[Sample, Verdict], None]
