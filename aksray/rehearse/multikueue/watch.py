"""Observing a MultiKueue rig: one Observer per control plane (aksray/rehearse/observer.py: its
timeline and invariants), and what only the manager shows: where MultiKueue sent each job, its
admission check's state, and whether each worker is connected.

Each reachable cluster is sampled in turn; a lost worker is not sampled until it is back. The
timeline is every cluster's, merged in time order, each event naming its cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from aksray.live.kube import KubeError
from aksray.rehearse import objects as o
from aksray.rehearse.invariants.evictions_explained import EXPLAINED_EVICTIONS
from aksray.rehearse.invariants.ray_token_required import TokenWatch, keep_heads_reachable
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Sample, TimelineEvent, Verdict, poll_until

MANAGER_RUNS_NOTHING: Final = "manager-runs-no-ray-pod"
MANAGER_EVICTIONS: Final = "manager-evictions-explained"
DESTROY: Final = "destroy-leaves-nothing"
# The per-cluster invariants the fleet states itself, across clusters.
FLEET_OWNED: Final = ("destroy-leaves-nothing", "evictions-explained")
# Kueue's eviction reason when an admission check goes to Retry (a lost worker, on the manager).
ADMISSION_CHECK_EVICTION: Final = "AdmissionCheck"
TOO_MANY_REQUESTS: Final = 429


def dispatched_to(workload: Mapping[str, Any]) -> str | None:
    """The worker MultiKueue recorded as running the job (`status.clusterName`)."""
    name = (workload.get("status") or {}).get("clusterName")
    return str(name) if name else None


def check_state(workload: Mapping[str, Any]) -> tuple[str, str]:
    """The first admission check's state and message (a manager workload has one)."""
    checks = (workload.get("status") or {}).get("admissionChecks") or []
    if not checks:
        return "", ""
    return str(checks[0].get("state", "")), str(checks[0].get("message", ""))


def cluster_connection(cluster: Mapping[str, Any]) -> tuple[bool, str]:
    """A MultiKueueCluster's `Active` condition: connected, and why not."""
    active = o.conditions(cluster).get("Active", {})
    detail = f"{active.get('reason', '')}: {active.get('message', '')}".strip(": ")
    return active.get("status") == "True", detail


def manager_eviction_explained(workload: Mapping[str, Any]) -> bool:
    """An eviction on the manager is explained when its admission check sent the job back (a
    worker lost past the timeout), or for the reasons a one-cluster rehearsal accepts."""
    evicted = o.conditions(workload).get("Evicted", {})
    if evicted.get("status") != "True":
        return True
    return evicted.get("reason") in (ADMISSION_CHECK_EVICTION, *EXPLAINED_EVICTIONS)


def by_workload(sample: Sample) -> dict[str, dict[str, Any]]:
    """Workload label (`qwen-lora`) -> the Kueue Workload its RayJob runs under."""
    found = {}
    for (ns, kind, name), workload in o.workload_by_owner(sample.workloads).items():
        owner = sample.owners.get((ns, kind, name))
        found[o.workload_label(owner) if owner else name] = dict(workload)
    return found


def job_status(sample: Sample, workload: str) -> tuple[str, str]:
    """A RayJob's (jobDeploymentStatus, jobStatus) by workload label; ("", "") when absent."""
    for (_, kind, _), obj in sample.owners.items():
        if kind == "RayJob" and o.workload_label(obj) == workload:
            status = obj.get("status") or {}
            return str(status.get("jobDeploymentStatus", "")), str(status.get("jobStatus", ""))
    return "", ""


@dataclass
class Fleet:
    """The observers of every control plane, sampled together."""

    observers: dict[str, Observer]  # cluster -> its observer (the manager first)
    reachable: Callable[[str], bool]
    manager: str
    rayclusters: Callable[[], list[dict[str, Any]]]  # the manager's
    started: float = field(default_factory=time.monotonic)
    verdicts: dict[str, Verdict] = field(
        default_factory=lambda: {n: Verdict(n) for n in (MANAGER_RUNS_NOTHING, MANAGER_EVICTIONS)}
    )
    samples: dict[str, Sample] = field(default_factory=dict)  # the last of each cluster
    _seen: dict[Any, Any] = field(default_factory=dict)

    def note(self, cluster: str, workload: str, what: str, detail: str = "") -> None:
        self.observers[cluster].note(workload, what, detail)

    def sample(self) -> None:
        for name, observer in self.observers.items():
            if not self.reachable(name):
                continue
            try:
                self.samples[name] = observer.sample()
            except KubeError as error:
                # A worker just back answers 429 while its watch caches fill: next sample.
                if error.status != TOO_MANY_REQUESTS or name == self.manager:
                    raise
        self._manager(self.samples[self.manager])

    def wait_until(
        self, what: str, predicate: Callable[[Fleet], bool], timeout: float, interval: float = 0.5
    ) -> bool:
        if poll_until(lambda: self._sampled(predicate), timeout, interval):
            return True
        self.note(self.manager, "rehearsal", "timed out", f"waiting {timeout:.0f}s for {what}")
        return False

    def _sampled(self, predicate: Callable[[Fleet], bool]) -> bool:
        self.sample()
        return predicate(self)

    def _manager(self, sample: Sample) -> None:
        kube = self.observers[self.manager].kube
        for cluster in kube.items("/apis/kueue.x-k8s.io/v1beta2/multikueueclusters"):
            name = cluster["metadata"]["name"]
            state = cluster_connection(cluster)
            if self._seen.get(("cluster", name)) != state[0]:
                self._seen[("cluster", name)] = state[0]
                self.note(
                    self.manager,
                    name,
                    "MultiKueueCluster",
                    "connected" if state[0] else f"not connected ({state[1]})",
                )
        for label, workload in by_workload(sample).items():
            where, check = dispatched_to(workload), check_state(workload)
            if where and self._seen.get(("where", label)) != where:
                self._seen[("where", label)] = where
                self.note(self.manager, label, "dispatched", f"to {where}")
            if check[0] and self._seen.get(("check", label)) != check:
                self._seen[("check", label)] = check
                self.note(self.manager, label, f"admission check {check[0]}", check[1])
            if not manager_eviction_explained(workload):
                evicted = o.conditions(workload)["Evicted"]
                self.verdicts[MANAGER_EVICTIONS].breach(
                    f"t=+{sample.t:.1f}s {label} evicted on the manager for "
                    f"{evicted.get('reason')!r}: {evicted.get('message')}"
                )
        running = [f"pod {p['metadata']['name']}" for p in sample.pods] + [
            f"RayCluster {c['metadata']['name']}" for c in self.rayclusters()
        ]
        if running:
            self.verdicts[MANAGER_RUNS_NOTHING].breach(
                f"t=+{sample.t:.1f}s the manager has {', '.join(running)}: its KubeRay did not "
                "leave a MultiKueue job alone"
            )
        for verdict in self.verdicts.values():
            verdict.checked += 1

    def timeline(self) -> list[TimelineEvent]:
        merged = [
            TimelineEvent(e.t, f"{cluster}: {e.workload}", e.what, e.detail)
            for cluster, observer in self.observers.items()
            for e in observer.events
        ]
        return sorted(merged, key=lambda e: e.t)

    def verdict_list(self) -> list[Verdict]:
        """Each cluster's invariants, named by cluster, then the fleet's own."""
        found = [
            Verdict(f"{cluster}: {v.name}", v.held, v.detail, v.checked)
            for cluster, observer in self.observers.items()
            for v in observer.verdict_list()
            if v.name not in FLEET_OWNED
            or (v.name == "evictions-explained" and cluster != self.manager)
        ]
        return found + list(self.verdicts.values())


def worker_hooks(observer: Observer, member: Any, namespaces: tuple[str, ...]) -> TokenWatch:
    """Before each sample of a worker: its KubeRay's hosts file and the stand-in dashboard's
    tokens kept current (as the one-cluster rehearsal does), so its RayJobs run."""
    tokens = keep_heads_reachable(
        observer.before_sample, observer.note, kube=member.kube, namespaces=namespaces,
        hosts=member.hosts, dashboard=member.dashboard,
    )  # fmt: skip
    assert tokens is not None  # every worker runs a stand-in dashboard
    return tokens
