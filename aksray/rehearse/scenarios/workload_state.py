"""What a sample of the controllers' objects says about one workload of the stack: its Kueue
Workloads, whether it is admitted, running or finished, and what Kueue last said about it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aksray.rehearse import objects as o
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Sample
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from settings.model import Settings


def workloads_of(sample: Sample, name: str) -> list[dict[str, Any]]:
    found = []
    for wl in sample.workloads:
        ref = o.owner(wl)
        obj = sample.owners.get((wl["metadata"]["namespace"], *ref)) if ref else None
        if obj is not None and o.workload_label(obj) == name:
            found.append(wl)
    return found


def admitted(name: str) -> Callable[[Sample], bool]:
    return lambda s: any(o.is_admitted(wl) for wl in workloads_of(s, name))


def last_kueue_condition(sample: Sample | None, name: str) -> str:
    """The newest condition Kueue wrote on the workload's Workload objects, message whole: why
    a scenario that timed out waited (e.g. `QuotaReserved False (Pending): couldn't assign
    flavors to pod set gpu: insufficient quota for nvidia.com/gpu in flavor h100, ...`)."""
    found = [
        condition
        for wl in (workloads_of(sample, name) if sample is not None else [])
        for condition in (wl.get("status") or {}).get("conditions") or []
    ]
    if not found:
        return f"{name} has no Kueue Workload"
    last = max(found, key=lambda c: str(c.get("lastTransitionTime", "")))
    return (
        f"last Kueue condition of {name}: {last.get('type')} {last.get('status')} "
        f"({last.get('reason', '')}): {last.get('message', '')}"
    )


def requeues(sample: Sample, name: str) -> int:
    """How often Kueue requeued the workload after a pod-readiness eviction."""
    states = [wl.get("status", {}).get("requeueState") or {} for wl in workloads_of(sample, name)]
    return max((int(state.get("count", 0)) for state in states), default=0)


def bound_pods(sample: Sample, name: str) -> list[dict[str, Any]]:
    out = []
    for pod in sample.pods:
        if o.is_terminating(pod) or not pod.get("spec", {}).get("nodeName"):
            continue
        if (pod["metadata"].get("labels") or {}).get("aksray.io/workload") == name:
            out.append(pod)
    return out


def running(name: str, pods: int) -> Callable[[Sample], bool]:
    return lambda s: admitted(name)(s) and len(bound_pods(s, name)) >= pods


def finished(name: str) -> Callable[[Sample], bool]:
    return lambda s: any(o.condition_true(wl, "Finished") for wl in workloads_of(s, name))


def ever_evicted(observer: Observer, name: str) -> list[str]:
    return [e.detail for e in observer.events if e.workload == name and e.what == "evicted"]


def pod_count(settings: Settings, name: str, workers: int | None = None) -> int:
    spec = WORKLOADS[name]
    groups = sum(g.replicas for g in spec.workers)
    return 1 + (workers if workers is not None and "workers" in spec.options else groups)
