"""Whether each endpoint serves, sample by sample, so a change that replaces it says for how long
it served nothing.

An endpoint serves while a head and at least one worker of its Ray cluster are bound (on the
rig the stand-in dashboard then reports its Serve applications RUNNING). A RayService the
program replaces is deleted first: from the moment its pods go until the new one's are bound,
nothing serves. On AKS that gap also holds a node's boot, the image pull and the model's load,
which the rig does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aksray.rehearse import objects as o
from aksray.rehearse.record import Sample
from manifests.ray_pods import WORKLOAD_LABEL


def serving(sample: Sample, endpoint: str) -> bool:
    """A head and a worker of the endpoint's Ray cluster are bound."""
    kinds = set()
    for pod in sample.pods:
        labels = pod["metadata"].get("labels") or {}
        if labels.get(WORKLOAD_LABEL) != endpoint or o.is_terminating(pod):
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            kinds.add(labels.get("ray.io/node-type"))
    return {"head", "worker"} <= kinds


@dataclass
class ServingWatch:
    """Called with every sample (Observer.after_sample): a timeline note when an endpoint stops
    serving and when it serves again, with how long it did not."""

    note: Callable[[str, str, str], None]
    down_since: dict[str, float] = field(default_factory=dict)
    served: set[str] = field(default_factory=set)  # endpoints that have served once
    outages: list[tuple[str, float, float]] = field(default_factory=list)

    def __call__(self, sample: Sample) -> None:
        present = {
            o.workload_label(obj)
            for (_, kind, _), obj in sample.owners.items()
            if kind == "RayService"
        }
        for endpoint in sorted(present | self.served):
            up = serving(sample, endpoint)
            if up and endpoint in self.down_since:
                start = self.down_since.pop(endpoint)
                self.outages.append((endpoint, start, sample.t))
                self.note(
                    endpoint, "serving again", f"after {sample.t - start:.1f}s serving nothing"
                )
            elif up:
                self.served.add(endpoint)
            elif endpoint in self.served and endpoint not in self.down_since:
                self.down_since[endpoint] = sample.t
                self.note(endpoint, "serving nothing", "no head or no worker of it is bound")
