"""How long an endpoint served nothing, sample by sample."""

from __future__ import annotations

from typing import Any

from aksray.rehearse.change.serving import ServingWatch, serving
from aksray.rehearse.record import Sample


def pod(kind: str, *, bound: bool = True, endpoint: str = "llm-serve") -> Any:
    labels = {"aksray.io/workload": endpoint, "ray.io/node-type": kind}
    return {"metadata": {"labels": labels}, "spec": {"nodeName": "n"} if bound else {}}


def sample(t: float, *pods: Any, present: bool = True) -> Sample:
    owners = {
        ("team-a", "RayService", "llm-serve"): {
            "metadata": {"name": "llm-serve", "labels": {"aksray.io/workload": "llm-serve"}}
        }
    }
    return Sample(t, [], list(pods), owners if present else {}, {}, {}, {}, {})


def test_an_endpoint_serves_with_a_head_and_a_worker_bound() -> None:
    assert serving(sample(0, pod("head"), pod("worker")), "llm-serve")
    assert not serving(sample(0, pod("head"), pod("worker", bound=False)), "llm-serve")
    assert not serving(sample(0, pod("worker")), "llm-serve")


def test_a_replaced_endpoint_is_down_from_its_old_pods_going_to_its_new_ones_bound() -> None:
    notes: list[tuple[str, str, str]] = []
    watch = ServingWatch(lambda *n: notes.append(n))
    watch(sample(1.0, pod("head")))  # still starting: not an outage
    watch(sample(2.0, pod("head"), pod("worker")))
    watch(sample(3.0, present=False))  # deleted first
    watch(sample(4.0, pod("head"), pod("worker", bound=False)))
    watch(sample(6.5, pod("head"), pod("worker")))
    assert notes == [
        ("llm-serve", "serving nothing", "no head or no worker of it is bound"),
        ("llm-serve", "serving again", "after 3.5s serving nothing"),
    ]
    assert watch.outages == [("llm-serve", 3.0, 6.5)]
