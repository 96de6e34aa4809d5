"""What a change must leave running: the pods of every workload the change plan leaves alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aksray.rehearse.change.survivors import RunningPod, lost_pods, running_pods, touched_objects
from aksray.rehearse.record import Sample


def pod(
    uid: str, ns: str, cluster: str, node: str | None, workload: str, *, going: bool = False
) -> Any:
    meta: dict[str, Any] = {
        "uid": uid, "namespace": ns, "name": f"{cluster}-{uid}",
        "labels": {"ray.io/cluster": cluster, "aksray.io/workload": workload},
    }  # fmt: skip
    if going:
        meta["deletionTimestamp"] = "2026-12-04T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}}


def sample(*pods: Any) -> Sample:
    clusters: dict[tuple[str, str], tuple[str, str] | None] = {
        ("team-a", "qwen-lora-day2-abc"): ("RayJob", "qwen-lora-day2"),
        ("team-a", "llm-serve-xyz"): ("RayService", "llm-serve"),
        ("team-b", "aurora-finetune-day2-def"): ("RayJob", "aurora-finetune-day2"),
    }
    return Sample(0.0, [], list(pods), {}, clusters, {}, {}, {})


@dataclass(frozen=True)
class Changed:
    inputs: dict[str, Any] = field(default_factory=dict)
    old_inputs: dict[str, Any] = field(default_factory=dict)


def test_only_bound_pods_that_are_not_going_count() -> None:
    found = running_pods(
        sample(
            pod("1", "team-a", "qwen-lora-day2-abc", "n1", "qwen-lora"),
            pod("2", "team-a", "qwen-lora-day2-abc", None, "qwen-lora"),
            pod("3", "team-a", "llm-serve-xyz", "n2", "llm-serve", going=True),
        )
    )
    assert found == {
        "1": RunningPod(
            "1", "team-a", "qwen-lora-day2-abc-1", "qwen-lora", ("RayJob", "qwen-lora-day2"), "n1"
        )
    }


def test_the_objects_a_change_touches_old_and_new() -> None:
    moved = Changed(
        inputs={
            "kind": "RayJob",
            "metadata": {"name": "aurora-finetune-day2", "namespace": "team-c"},
        },
        old_inputs={
            "kind": "RayJob",
            "metadata": {"name": "aurora-finetune-day2", "namespace": "team-b"},
        },
    )
    gone = Changed(old_inputs={"kind": "Namespace", "metadata": {"name": "team-b"}})
    azure = Changed(inputs={"vmSize": "x"})
    assert touched_objects([moved, gone, azure]) == {
        ("RayJob", "team-c", "aurora-finetune-day2"),
        ("RayJob", "team-b", "aurora-finetune-day2"),
        ("Namespace", "", "team-b"),
    }


def test_a_pod_the_plan_keeps_must_stay_and_the_others_may_go() -> None:
    before = running_pods(
        sample(
            pod("1", "team-a", "qwen-lora-day2-abc", "n1", "qwen-lora"),
            pod("2", "team-a", "llm-serve-xyz", "n2", "llm-serve"),
            pod("3", "team-b", "aurora-finetune-day2-def", "n3", "aurora-finetune"),
            pod("4", "team-a", "qwen-lora-day2-abc", "gone-node", "qwen-lora"),
        )
    )
    after = running_pods(sample(pod("2", "team-a", "llm-serve-xyz", "n2", "llm-serve")))
    touched = {("Namespace", "", "team-b")}
    assert lost_pods(before, after, touched, {"gone-node"}) == [
        "pod team-a/qwen-lora-day2-abc-1 of qwen-lora, which the change plan leaves alone, is gone"
    ]
    touched.add(("RayJob", "team-a", "qwen-lora-day2"))
    assert lost_pods(before, after, touched, {"gone-node"}) == []
