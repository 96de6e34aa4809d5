"""The endpoint-scales rehearsal's pure parts, on recorded objects: reading Kueue's workload
slices, the patch the Ray autoscaler makes, what the scenario asks of the stack, and the
invariants with more than one Workload per Ray object.

The scenario itself runs on the rig (`make rehearse-test`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT, run_program
from aksray.rehearse import objects as o
from aksray.rehearse.invariants.pods_only_when_admitted import EVICTION_GRACE_S
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Sample
from aksray.rehearse.scenarios import endpoint_scales as scaling
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.stack import read_stack_file, stack_workloads

ROOT = PROJECT_ROOT
NS = "team-a"
OWNER = {"kind": "RayService", "name": "llm-serve"}


def slice_(name: str, workers: int, *, state: str, replaced: bool = False) -> dict[str, Any]:
    """A Kueue Workload of the endpoint: admitted, pending, or finished (replaced)."""
    conditions = []
    if state in ("admitted", "finished"):
        conditions += [
            {"type": "QuotaReserved", "status": "True"},
            {"type": "Admitted", "status": "True"},
        ]
    if state == "pending":
        conditions.append({"type": "QuotaReserved", "status": "False", "reason": "Pending"})
    if state == "finished":
        reason = "WorkloadSliceReplaced" if replaced else "Succeeded"
        conditions.append({"type": "Finished", "status": "True", "reason": reason})
    workload: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": name,
            "ownerReferences": [OWNER],
            "annotations": {"kueue.x-k8s.io/elastic-job": "true"},
        },
        "spec": {"podSets": [{"name": "head", "count": 1}, {"name": "gpu", "count": workers}]},
        "status": {"conditions": conditions},
    }
    if state != "pending":
        workload["status"]["admission"] = {
            "clusterQueue": NS,
            "podSetAssignments": [
                {"name": "head", "count": 1, "flavors": {"cpu": "cpu"}},
                {
                    "name": "gpu",
                    "count": workers,
                    "flavors": {"nvidia.com/gpu": "a100"},
                    "resourceUsage": {"nvidia.com/gpu": str(workers)},
                },
            ],
        }
    return workload


def pod(name: str, group: str, *, node: str | None, gated: bool = False) -> dict[str, Any]:
    labels = {"ray.io/cluster": "llm-serve-abc", "aksray.io/workload": "llm-serve"}
    labels |= {"ray.io/node-type": "head"} if group == "head" else {"ray.io/group": group}
    spec: dict[str, Any] = {"containers": [{"name": "ray"}]}
    if node:
        spec["nodeName"] = node
    if gated:
        spec["schedulingGates"] = [{"name": "kueue.x-k8s.io/elastic-job"}]
    return {"metadata": {"name": name, "namespace": NS, "labels": labels}, "spec": spec}


def sample(t: float, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Sample:
    service = {"metadata": {"name": "llm-serve", "labels": {"aksray.io/workload": "llm-serve"}}}
    node = {"metadata": {"labels": {"kubernetes.azure.com/agentpool": "a100"}}}
    return Sample(
        t=t,
        workloads=workloads,
        pods=pods,
        owners={(NS, "RayService", "llm-serve"): service},
        clusters={(NS, "llm-serve-abc"): ("RayService", "llm-serve")},
        nodes={"n0": node, "n1": node, "n2": node, "cpu0": {"metadata": {"labels": {}}}},
        flavor_pool={"a100": "a100", "cpu": "cpu"},
        queues={},
    )


RUNNING_AT_ONE = [pod("head", "head", node="cpu0"), pod("w0", "gpu", node="n0")]


def test_pods_of_an_admitted_slice_are_admitted_while_a_bigger_slice_waits() -> None:
    """A scale-up's new slice waits for quota while the old one still holds the running pods:
    the bound pods belong to the admitted slice, whatever order the API lists them in."""
    observer = Observer(kube=None, namespaces=(NS,))  # type: ignore[arg-type]
    for workloads in (
        [slice_("wl-1", 1, state="admitted"), slice_("wl-2", 2, state="pending")],
        [slice_("wl-2", 2, state="pending"), slice_("wl-1", 1, state="admitted")],
    ):
        for t in (0.0, EVICTION_GRACE_S + 5):
            observer._check(sample(t, workloads, [*RUNNING_AT_ONE, pod("w1", "gpu", node=None)]))
    assert observer.verdicts["pods-only-when-admitted"].held, observer.verdicts[
        "pods-only-when-admitted"
    ].detail


TEAM_QUEUE = {
    "metadata": {"name": NS},
    "spec": {
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}
                ],
            }
        ]
    },
}


def replacement(name: str, workers: int, replaces: str) -> dict[str, Any]:
    """A scale-up's slice, admitted, naming the slice it replaces the way Kueue's job
    reconciler does (`namespace/name`)."""
    workload = slice_(name, workers, state="admitted")
    workload["metadata"]["annotations"]["kueue.x-k8s.io/workload-slice-replacement-for"] = (
        f"{NS}/{replaces}"
    )
    return workload


def quota_verdict(workloads: list[dict[str, Any]]) -> Any:
    observer = Observer(kube=None, namespaces=(NS,))  # type: ignore[arg-type]
    current = sample(1.0, workloads, RUNNING_AT_ONE)
    observer._check(Sample(**{**current.__dict__, "queues": {NS: TEAM_QUEUE}}))
    return observer.verdicts["admitted-within-quota"]


def test_a_slice_its_admitted_replacement_names_holds_no_quota() -> None:
    """Kueue admits a scale-up's new slice (the whole new size) and finishes the old slice in a
    second write: a sample between the two sees both QuotaReserved. Kueue's own accounting
    counts only the replacement (the old slice is its preemption target), and so do we."""
    between = [slice_("wl-1", 2, state="admitted"), replacement("wl-2", 4, replaces="wl-1")]
    assert quota_verdict(between).held, quota_verdict(between).detail
    # Without the annotation they are two workloads: 6 GPUs on a quota of 4 is a breach.
    unrelated = [slice_("wl-1", 2, state="admitted"), slice_("wl-2", 4, state="admitted")]
    assert not quota_verdict(unrelated).held
    assert "has 6 of nvidia.com/gpu admitted on a100" in quota_verdict(unrelated).detail
    # A replacement that waits for quota replaces nothing yet: the old slice still counts.
    waiting = replacement("wl-2", 4, replaces="wl-1")
    del waiting["status"]["admission"]
    waiting["status"]["conditions"] = [{"type": "QuotaReserved", "status": "False"}]
    over = [slice_("wl-1", 5, state="admitted"), waiting]
    assert not quota_verdict(over).held


def test_the_active_slice_is_the_admitted_one() -> None:
    old = slice_("wl-1", 1, state="finished", replaced=True)
    new = slice_("wl-2", 3, state="admitted")
    waiting = slice_("wl-3", 4, state="pending")
    current = sample(1.0, [waiting, old, new], RUNNING_AT_ONE)
    assert scaling.admitted_workers(current, "llm-serve", "gpu") == 3
    assert scaling.replaced_slices(current, "llm-serve") == 1
    assert scaling.pending_slices(current, "llm-serve") == 1
    gone = sample(1.0, [old], RUNNING_AT_ONE)
    assert scaling.admitted_workers(gone, "llm-serve", "gpu") is None


def scaled_down(workload: dict[str, Any], workers: int) -> dict[str, Any]:
    """Kueue's job reconciler on a scale-down: the admitted slice's spec count is lowered in
    place; its `status.admission` keeps the count it was admitted with."""
    for pod_set in workload["spec"]["podSets"]:
        if pod_set["name"] == "gpu":
            pod_set["count"] = workers
    return workload


def test_a_scale_down_in_the_spec_is_what_the_slice_holds() -> None:
    """Kueue counts an admitted pod set at the lower of its admission's count and its spec's
    count less reclaimable pods (`totalRequestsFromAdmission`), so a scale-down gives the quota
    back without a new slice and without rewriting the admission."""
    down = scaled_down(slice_("wl-2", 4, state="admitted"), 1)
    current = sample(1.0, [down], RUNNING_AT_ONE)
    assert scaling.admitted_workers(current, "llm-serve", "gpu") == 1
    admission = o.admission(down)
    assert admission is not None and admission.usage[("a100", "nvidia.com/gpu")] == 1
    assert admission.counts == {"head": 1, "gpu": 1}
    # Reclaimable pods lower it the same way, never below zero.
    down["status"]["reclaimablePods"] = [{"name": "gpu", "count": 3}]
    assert scaling.admitted_workers(sample(1.0, [down], RUNNING_AT_ONE), "llm-serve", "gpu") == 0
    # A spec count above the admission's (a partial admission) keeps the admitted count.
    partial = slice_("wl-3", 2, state="admitted")
    partial["spec"]["podSets"][1]["count"] = 4
    assert scaling.admitted_workers(sample(1.0, [partial], []), "llm-serve", "gpu") == 2


def test_bound_and_gated_workers_are_told_apart() -> None:
    current = sample(
        1.0,
        [slice_("wl-1", 1, state="admitted")],
        [*RUNNING_AT_ONE, pod("w1", "gpu", node=None, gated=True)],
    )
    assert scaling.bound_workers(current, "llm-serve", "gpu") == 1
    assert scaling.gated_workers(current, "llm-serve", "gpu") == 1


def test_the_gate_watch_breaches_only_past_the_grace() -> None:
    watch = scaling.GateWatch("llm-serve", "gpu")
    one = [slice_("wl-1", 1, state="admitted")]
    two_bound = [*RUNNING_AT_ONE, pod("w1", "gpu", node="n1")]
    watch.observe(sample(0.0, one, two_bound))  # KubeRay deletes a removed pod: a moment
    watch.observe(sample(EVICTION_GRACE_S - 1, one, RUNNING_AT_ONE))
    assert watch.breach is None
    watch.observe(sample(30.0, one, two_bound))
    watch.observe(sample(30.0 + EVICTION_GRACE_S + 1, one, two_bound))
    assert watch.breach is not None
    assert "2 gpu workers bound while Kueue admits 1" in watch.breach


def test_the_autoscaler_patch_grows_and_names_the_pods_it_removes() -> None:
    cluster = yaml.safe_load(
        """
metadata: {name: llm-serve-abc, resourceVersion: "42"}
spec:
  workerGroupSpecs:
  - {groupName: gpu, replicas: 1, minReplicas: 1, maxReplicas: 3}
"""
    )
    up = scaling.autoscaler_patch(cluster, "gpu", 3, pods=[])
    assert up == {
        "metadata": {"resourceVersion": "42"},
        "spec": {
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 3,
                    "minReplicas": 1,
                    "maxReplicas": 3,
                    "scaleStrategy": {"workersToDelete": []},
                }
            ]
        },
    }
    pods = [
        pod("w0", "gpu", node="n0"),
        pod("w2", "gpu", node="n2"),
        pod("w1", "gpu", node=None, gated=True),
    ]
    down = scaling.autoscaler_patch(cluster, "gpu", 1, pods=pods)
    (group,) = down["spec"]["workerGroupSpecs"]
    # The autoscaler removes what never started first, then the newest running workers.
    assert group["replicas"] == 1
    assert group["scaleStrategy"] == {"workersToDelete": ["w1", "w2"]}
    with pytest.raises(ValueError, match="no worker group 'cpu'"):
        scaling.autoscaler_patch(cluster, "cpu", 1, pods=[])


def _plan(stack: Path, change: Any = None) -> scaling.ScalePlan:
    document = read_stack_file(stack)
    if change:
        change(document)
    settings = run_program(stack).settings
    return scaling.scale_plan(settings, stack_workloads(document))


def test_the_scenario_scales_the_endpoint_from_its_minimum_to_what_its_quota_holds() -> None:
    dev = _plan(ROOT / "stacks" / "Pulumi.dev.yaml")
    # dev: team-a holds the whole 5-GPU a100 pool: no node beyond the quota to prove the gate.
    assert dev == scaling.ScalePlan("team-a", "a100", minimum=1, fits=5, beyond=False)
    assert dev.section_entry()["maxReplicas"] == 5
    prod = _plan(ROOT / "stacks" / "Pulumi.prod.yaml")
    # prod: serving holds 8 of the a100 pool's 32 GPUs: the step past the quota stays gated.
    assert prod == scaling.ScalePlan("serving", "a100", minimum=2, fits=8, beyond=True)
    assert prod.section_entry() == {
        "enabled": True,
        "team": "serving",
        "priority": "inference",
        "minReplicas": 2,
        "maxReplicas": 9,
    }


def test_what_a_team_may_borrow_is_not_past_its_quota() -> None:
    # Two teams of 4 GPUs lending to each other on a pool of 8: all 8 are admissible.
    plan = _plan(ROOT / "tests" / "stacks" / "kueue-team-queues.yaml")
    assert plan == scaling.ScalePlan("team-a", "gpu", minimum=1, fits=8, beyond=False)


def test_a_team_without_room_above_the_minimum_cannot_show_it() -> None:
    demo = ROOT / "tests" / "stacks" / "kai-demo.yaml"
    settings = run_program(demo).settings
    stack = stack_workloads(read_stack_file(demo))
    # One team, unlimited quota on a pool of two one-GPU nodes: a minimum of 2 fills it.
    stack["llm-serve"] = {"minReplicas": 2}
    with pytest.raises(NotApplicableError, match="no GPU above the endpoint's minimum"):
        scaling.scale_plan(settings, stack)
    stack["llm-serve"] = {}
    assert scaling.scale_plan(settings, stack) == scaling.ScalePlan(
        "team-a", "gpu", minimum=1, fits=2, beyond=False
    )
