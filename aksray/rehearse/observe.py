"""Sample the controllers' objects, turn changes into a timeline, check invariants each sample.

Every sample lists the Kueue Workloads, Ray objects and pods of the stack's namespaces, the
nodes, flavors and ClusterQueues. A change becomes one timeline event (`t=+12.3s qwen-lora
admitted on a100 (team-a)`); every sample is checked against the invariants, and the first
breach of each is kept with its time and detail.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from aksray.rehearse import objects as o
from aksray.rehearse.gang import GANG_INVARIANT, GangWatch
from aksray.rehearse.kube import Kube
from aksray.rehearse.quota_check import quota_breaches

# A bound pod of a workload Kueue no longer admits is tolerated this long: KubeRay deletes the
# Ray cluster on suspension and the garbage collector then deletes its pods, which takes a few
# seconds on the rig (and longer on a busy machine).
EVICTION_GRACE_S: Final = 20.0
EXPLAINED_PREEMPTIONS: Final = {
    "InClusterQueue": "priority within the team's ClusterQueue",
    "InCohortReclamation": "reclaim of lent quota within the cohort",
    "InCohortReclaimWhileBorrowing": "reclaim from a borrowing ClusterQueue",
    "InCohortFairSharing": "fair sharing within the cohort",
}
# Evictions that explain themselves; the last: a MultiKueue worker's copy of a job the manager
# evicted (aksray/rehearse/multikueue_watch.py).
EXPLAINED_EVICTIONS: Final = ("PodsReadyTimeout", "Deactivated", "InactiveWorkload",
                              "DeactivatedDueToEvictedOnManagerCluster")  # fmt: skip
INVARIANTS: Final = (
    "pods-only-when-admitted",
    "pods-on-flavor-nodes",
    "admitted-within-quota",
    "endpoint-never-evicted",
    "evictions-explained",
    "destroy-leaves-nothing",
    GANG_INVARIANT,
)


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


@dataclass
class Observer:
    kube: Kube
    namespaces: tuple[str, ...]
    started: float = field(default_factory=time.monotonic)
    events: list[TimelineEvent] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(
        default_factory=lambda: {n: Verdict(n) for n in INVARIANTS}
    )
    last: Sample | None = None
    _state: dict[Any, Any] = field(default_factory=dict)
    _cluster_owner: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)
    _unadmitted_since: dict[str, float] = field(default_factory=dict)
    _gangs: GangWatch = field(default_factory=GangWatch)
    # Called before every sample (the rig keeps the operator's hosts file current there).
    before_sample: list[Callable[[], None]] = field(default_factory=list)
    # Called with every sample once checked (a scenario's own invariants).
    after_sample: list[Callable[[Sample], None]] = field(default_factory=list)
    # Called with every timeline event as it is recorded (the progress a terminal shows).
    on_event: list[Callable[[TimelineEvent], None]] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.started

    def note(self, workload: str, what: str, detail: str = "") -> None:
        event = TimelineEvent(self.now(), workload, what, detail)
        self.events.append(event)
        for hook in self.on_event:
            hook(event)

    # -- sampling ----------------------------------------------------------------------------
    def sample(self) -> Sample:
        for hook in self.before_sample:
            hook()
        workloads: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []
        owners: dict[tuple[str, str, str], dict[str, Any]] = {}
        for ns in self.namespaces:
            workloads += self.kube.items(f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads")
            pods += self.kube.items(f"/api/v1/namespaces/{ns}/pods", "ray.io/node-type")
            for kind, plural in (("RayJob", "rayjobs"), ("RayService", "rayservices")):
                for obj in self.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/{plural}"):
                    owners[(ns, kind, obj["metadata"]["name"])] = obj
            for cluster in self.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters"):
                self._cluster_owner[(ns, cluster["metadata"]["name"])] = o.owner(cluster)
        nodes = {n["metadata"]["name"]: n for n in self.kube.items("/api/v1/nodes")}
        flavors = self.kube.items("/apis/kueue.x-k8s.io/v1beta2/resourceflavors")
        queues = {
            q["metadata"]["name"]: q
            for q in self.kube.items("/apis/kueue.x-k8s.io/v1beta2/clusterqueues")
        }
        sample = Sample(
            self.now(), workloads, pods, owners, dict(self._cluster_owner), nodes,
            o.flavor_pools(flavors), queues,
        )  # fmt: skip
        self._timeline(sample)
        self._check(sample)
        for check in self.after_sample:
            check(sample)
        self.last = sample
        return sample

    def wait_until(
        self, what: str, predicate: Callable[[Sample], bool], timeout: float, interval: float = 0.5
    ) -> bool:
        """Sample until `predicate` holds; False (and a timeline note) when it never does."""
        if poll_until(lambda: predicate(self.sample()), timeout, interval):
            return True
        self.note("rehearsal", "timed out", f"waiting {timeout:.0f}s for {what}")
        return False

    def hold(self, seconds: float, interval: float = 0.5) -> None:
        """Keep sampling (and checking) for a while."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.sample()
            time.sleep(interval)

    # -- names -------------------------------------------------------------------------------
    def workload_name(self, sample: Sample, ns: str, ref: tuple[str, str] | None) -> str:
        if ref is None:
            return "?"
        obj = sample.owners.get((ns, ref[0], ref[1]))
        return o.workload_label(obj) if obj else ref[1]

    def pod_owner(self, sample: Sample, pod: dict[str, Any]) -> tuple[str, str] | None:
        ns = pod["metadata"]["namespace"]
        cluster = (pod["metadata"].get("labels") or {}).get("ray.io/cluster", "")
        return sample.clusters.get((ns, cluster))

    # -- timeline ----------------------------------------------------------------------------
    def _timeline(self, sample: Sample) -> None:
        for wl in sample.workloads:
            self._workload_events(sample, wl)
        self._job_events(sample)
        self._pod_events(sample)

    def _workload_events(self, sample: Sample, wl: dict[str, Any]) -> None:
        ns = wl["metadata"]["namespace"]
        uid = wl["metadata"]["uid"]
        name = self.workload_name(sample, ns, o.owner(wl))
        conds = o.conditions(wl)
        seen = self._state.setdefault(uid, {"conds": {}, "new": True})
        if seen["new"]:
            seen["new"] = False
            queue = wl.get("spec", {}).get("queueName", "")
            spec = wl.get("spec", {})
            priority = (spec.get("priorityClassRef") or {}).get("name", "none")
            value = spec.get("priority")
            self.note(name, "queued", f"in {queue} ({ns}) at priority {priority} ({value})")
        for kind, cond in conds.items():
            key = (cond.get("status"), cond.get("reason"))
            if seen["conds"].get(kind) == key:
                continue
            seen["conds"][kind] = key
            self._condition_event(name, ns, wl, kind, cond)

    def _condition_event(
        self, name: str, ns: str, wl: dict[str, Any], kind: str, cond: dict[str, Any]
    ) -> None:
        status, reason, message = (
            cond.get("status"),
            cond.get("reason", ""),
            cond.get("message", ""),
        )
        if kind == "Admitted" and status == "True":
            self.note(name, "admitted", admitted_detail(o.admission(wl)))
        elif kind == "QuotaReserved" and status == "False" and reason == "Pending":
            self.note(name, "pending", message)
        elif kind == "Evicted" and status == "True":
            self.note(name, "evicted", f"by Kueue: {reason}: {message}")
        elif kind == "Preempted" and status == "True":
            self.note(name, "preempted", f"by Kueue ({reason}): {message}")
        elif kind == "Requeued" and status == "True":
            self.note(name, "requeued", message)
        elif kind == "Finished" and status == "True":
            self.note(name, "finished", f"{reason}: {message}".strip(": "))

    def _job_events(self, sample: Sample) -> None:
        for (ns, kind, name), obj in sample.owners.items():
            status = obj.get("status") or {}
            if kind == "RayJob":
                state = (status.get("jobDeploymentStatus", ""), status.get("jobStatus", ""))
            else:
                state = (status.get("serviceStatus", ""), "")
            key = ("owner", ns, kind, name)
            if state[0] and self._state.get(key) != state:
                self._state[key] = state
                detail = f"(job {state[1]})" if state[1] else ""
                self.note(o.workload_label(obj), f"{kind} {state[0]}", detail)

    def _pod_events(self, sample: Sample) -> None:
        per_owner: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for pod in sample.pods:
            ref = self.pod_owner(sample, pod)
            if ref is not None and not o.is_terminating(pod):
                per_owner[(pod["metadata"]["namespace"], *ref)].append(pod)
        known = {k for k in self._state if isinstance(k, tuple) and k and k[0] == "pods"}
        for (ns, kind, name), pods in per_owner.items():
            bound = [p for p in pods if p.get("spec", {}).get("nodeName")]
            pools: dict[str, int] = defaultdict(int)
            for pod in bound:
                pools[o.node_pool(sample.nodes.get(pod["spec"]["nodeName"], {"metadata": {}}))] += 1
            summary = (len(pods), len(bound), tuple(sorted(pools.items())))
            key = ("pods", ns, kind, name)
            known.discard(key)
            if self._state.get(key) != summary:
                self._state[key] = summary
                where = ", ".join(f"{pool} x{n}" for pool, n in sorted(pools.items()))
                label = self.workload_name(sample, ns, (kind, name))
                self.note(label, "pods bound", f"{len(bound)}/{len(pods)} on {where or 'no node'}")
        for key in known:
            if self._state.get(key) != (0, 0, ()):
                self._state[key] = (0, 0, ())
                self.note(self.workload_name(sample, key[1], (key[2], key[3])), "pods deleted", "")

    # -- invariants --------------------------------------------------------------------------
    def _check(self, sample: Sample) -> None:
        self._check_pods(sample, o.workload_by_owner(sample.workloads))
        self._check_quota(sample)
        self._check_evictions(sample)
        self._gangs.check(
            sample,
            self.verdicts[GANG_INVARIANT],
            lambda pod: self.pod_owner(sample, pod),
            lambda ns, ref: self.workload_name(sample, ns, ref),
        )
        for verdict in self.verdicts.values():
            verdict.checked += 1

    def _check_pods(
        self, sample: Sample, by_owner: Mapping[tuple[str, str, str], Mapping[str, Any]]
    ) -> None:
        seen_now: set[str] = set()
        for pod in sample.pods:
            node_name = pod.get("spec", {}).get("nodeName")
            ref = self.pod_owner(sample, pod)
            if not node_name or ref is None or o.is_terminating(pod):
                continue
            ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            wl = by_owner.get((ns, *ref))
            label = self.workload_name(sample, ns, ref)
            finished = wl is not None and o.condition_true(wl, "Finished")
            if wl is None or not (o.is_admitted(wl) or finished):
                seen_now.add(pod_name)
                since = self._unadmitted_since.setdefault(pod_name, sample.t)
                if sample.t - since > EVICTION_GRACE_S:
                    self.verdicts["pods-only-when-admitted"].breach(
                        f"t=+{sample.t:.1f}s {label}: pod {ns}/{pod_name} bound on {node_name} "
                        f"for {sample.t - since:.0f}s while its workload is not admitted"
                    )
                continue
            adm = o.admission(wl)
            flavor = adm.flavors.get(o.pod_set_of(pod)) if adm else None
            pool = o.node_pool(sample.nodes.get(node_name, {"metadata": {}}))
            if flavor is not None and sample.flavor_pool.get(flavor, flavor) != pool:
                self.verdicts["pods-on-flavor-nodes"].breach(
                    f"t=+{sample.t:.1f}s {label}: pod {ns}/{pod_name} of pod set "
                    f"{o.pod_set_of(pod)} (flavor {flavor}) bound on {node_name} of pool {pool}"
                )
        for name in list(self._unadmitted_since):
            if name not in seen_now:
                del self._unadmitted_since[name]

    def _check_quota(self, sample: Sample) -> None:
        for breach in quota_breaches(sample.t, sample.workloads, sample.queues):
            self.verdicts["admitted-within-quota"].breach(breach)

    def _check_evictions(self, sample: Sample) -> None:
        for wl in sample.workloads:
            conds = o.conditions(wl)
            evicted = conds.get("Evicted", {})
            if evicted.get("status") != "True":
                continue
            ns = wl["metadata"]["namespace"]
            ref = o.owner(wl)
            label = self.workload_name(sample, ns, ref)
            if ref is not None and ref[0] == "RayService":
                self.verdicts["endpoint-never-evicted"].breach(
                    f"t=+{sample.t:.1f}s {label} (RayService) evicted: {evicted.get('reason')}: "
                    f"{evicted.get('message')}"
                )
            reason = evicted.get("reason", "")
            preempted = conds.get("Preempted", {})
            if reason == "Preempted" and preempted.get("reason") in EXPLAINED_PREEMPTIONS:
                continue
            if reason in EXPLAINED_EVICTIONS:
                continue
            self.verdicts["evictions-explained"].breach(
                f"t=+{sample.t:.1f}s {label} evicted for {reason!r} "
                f"({preempted.get('reason', 'no preemption reason')}): {evicted.get('message')}"
            )

    def verdict_list(self) -> list[Verdict]:
        return list(self.verdicts.values())


def admitted_detail(adm: o.Admission | None) -> str:
    """`on a100 (team-a; head on cpu)`: the workers' flavors first, then where the head went."""
    if adm is None:
        return "(no admission recorded)"
    workers = sorted({f for ps, f in adm.flavors.items() if ps != "head"})
    head = adm.flavors.get("head")
    where = ", ".join(workers) or (head or "?")
    extra = f"; head on {head}" if head and workers else ""
    return f"on {where} ({adm.cluster_queue}{extra})"


def namespaces_of(teams: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(teams)))
