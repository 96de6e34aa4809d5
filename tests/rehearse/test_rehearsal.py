"""Tier T5: every scenario on the real controllers, for dev, prod and the two seed demos.

`make rehearse-test` runs these (marker `rehearsal`; the default run deselects them): each stack
is rehearsed with `aksray rehearse --scenario all --json` on a rig of its own, two at once, and
the tests assert the timeline the controllers produced, not only the exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse.invariants import SAMPLED as INVARIANTS

ROOT = PROJECT_ROOT
STACKS = {
    "dev": ROOT / "stacks" / "Pulumi.dev.yaml",
    "prod": ROOT / "stacks" / "Pulumi.prod.yaml",
    "kai-demo": ROOT / "tests" / "stacks" / "kai-demo.yaml",
    "kueue-team-queues": ROOT / "tests" / "stacks" / "kueue-team-queues.yaml",
}
# The rig loads KubeRay's CRDs from the upstream reference data (make reference).
pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]


SCALE_DOWN = "scenario: a scale-down frees the quota above the minimum"  # a verdict's name


# Stacks rehearsed at once, each on a rig of its own (own loopback addresses and ports): most of
# a rehearsal is waiting on controllers' timers, so two share 2 cores without slowing each other.
AT_ONCE = int(os.environ.get("AKSRAY_REHEARSALS_AT_ONCE", "2"))
_runs: dict[str, Future[subprocess.CompletedProcess[str]]] = {}


# The same scenario with kube-scheduler binding the Ray pods in KAI's place: what the gang test
# failed with before KAI ran on the rig.
KUBE_SCHEDULER_RUN = ("dev", "gangs-compete", "kube-scheduler")


def _rehearse(
    stack: str, scenario: str = "all", scheduler: str = "kai-scheduler"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aksray.rehearse", "rehearse", "--config", str(STACKS[stack]),
         "--scenario", scenario, "--scheduler", scheduler, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=3000, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def rehearsals(request: pytest.FixtureRequest) -> Any:
    """Starts the rehearsal of every stack the selected tests use, AT_ONCE at a time."""
    params = [
        item.callspec.params
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.module is sys.modules[__name__]
        and hasattr(item, "callspec")
    ]  # fmt: skip
    wanted = {p["stack"] for p in params if "stack" in p}
    pool = ThreadPoolExecutor(max_workers=AT_ONCE)
    for stack in STACKS:  # in the tests' order, so the first tests' rehearsal ends first
        if stack in wanted:
            _runs[stack] = pool.submit(_rehearse, stack)
    if any(p.get("scheduler") == "kube-scheduler" for p in params):
        _runs["/".join(KUBE_SCHEDULER_RUN)] = pool.submit(_rehearse, *KUBE_SCHEDULER_RUN)
    yield
    pool.shutdown(cancel_futures=True)


@cache
def rehearsal(stack: str) -> dict[str, dict[str, Any]]:
    """Every scenario of one stack, by scenario name (one rig per stack)."""
    done = _runs[stack].result()
    assert done.returncode in (0, 1), done.stderr[-4000:]
    results = json.loads(done.stdout)
    return {r["scenario"]: r for r in results}


def events(result: dict[str, Any], workload: str, what: str) -> list[dict[str, Any]]:
    return [e for e in result["events"] if e["workload"] == workload and e["what"] == what]


def broken(result: dict[str, Any]) -> list[str]:
    return [f"{v['name']}: {v['detail']}" for v in result["invariants"] if not v["held"]]


@pytest.mark.parametrize("stack", list(STACKS))
def test_every_invariant_holds_in_every_scenario(stack: str) -> None:
    for scenario, result in rehearsal(stack).items():
        assert broken(result) == [], f"{stack} {scenario}"
        names = {v["name"] for v in result["invariants"]}
        assert set(INVARIANTS) <= names
        controllers = result["controllers"]
        assert controllers["kueue"] == "v0.19.2"
        assert controllers["kuberay-operator"].startswith("v1.6.2")
        assert controllers["kai-scheduler"] == "v0.12.0 (the platform ships v0.17.0)"
        assert any("KAI places and binds every Ray pod" in note for note in result["notes"])
        assert any("v0.12's SchedulingShard has no `actions`" in n for n in result["notes"])


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_submit_all_admits_and_finishes_every_job(stack: str) -> None:
    result = rehearsal(stack)["submit-all"]
    for job in ("aurora-finetune", "qwen-lora", "vllm-batch"):
        assert events(result, job, "admitted"), job
        assert events(result, job, "finished"), job
        assert events(result, job, "RayJob Complete"), job
    assert not [e for e in result["events"] if e["what"] == "evicted"]
    # KubeRay made each cluster's token Secret; the head refused a submission without it, and
    # the jobs still ran on KubeRay's own calls, which carry it.
    tokens = [e for e in result["events"] if e["what"] == "ray token"]
    assert len(tokens) >= 3
    assert all(e["detail"].endswith("a job submission without it: 401") for e in tokens)
    assert {v["name"]: v["held"] for v in result["invariants"]}["ray-token-required"]


@pytest.mark.parametrize("stack", ["dev", "kai-demo", "kueue-team-queues"])
def test_inference_preempts_training_as_a_whole(stack: str) -> None:
    result = rehearsal(stack)["inference-preempts-training"]
    preempted = events(result, "qwen-lora", "preempted")
    assert preempted and "InClusterQueue" in preempted[0]["detail"]
    evicted_at = events(result, "qwen-lora", "evicted")[0]["t"]
    serve_admitted = events(result, "llm-serve", "admitted")
    assert serve_admitted and serve_admitted[0]["t"] >= evicted_at
    # Training requeued and ran again once the endpoint was gone.
    assert len(events(result, "qwen-lora", "admitted")) >= 2


def test_prod_endpoint_runs_on_its_own_quota_without_preempting() -> None:
    result = rehearsal("prod")["inference-preempts-training"]
    assert events(result, "llm-serve", "admitted")
    assert "h100" in events(result, "llm-serve", "admitted")[0]["detail"]
    assert not events(result, "qwen-lora", "evicted")


def test_team_queues_borrower_is_reclaimed_when_the_owner_submits() -> None:
    result = rehearsal("kueue-team-queues")["borrow-and-reclaim"]
    assert events(result, "qwen-lora", "admitted")
    preempted = events(result, "qwen-lora", "preempted")
    assert preempted and "InCohort" in preempted[0]["detail"]
    assert events(result, "aurora-finetune", "admitted")[0]["t"] >= preempted[0]["t"]


def test_prod_lending_limit_keeps_the_owners_share() -> None:
    result = rehearsal("prod")["borrow-and-reclaim"]
    assert events(result, "aurora-finetune", "admitted")
    assert not events(result, "qwen-lora", "evicted")


@pytest.mark.parametrize("stack", ["dev", "kai-demo"])
def test_one_team_cannot_borrow(stack: str) -> None:
    result = rehearsal(stack)["borrow-and-reclaim"]
    assert result["applicable"] is False


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_nothing_admitted_is_evicted_while_nodes_arrive(stack: str) -> None:
    result = rehearsal(stack)["nodes-arrive-late"]
    assert not [e for e in result["events"] if e["what"] == "evicted"]
    assert events(result, "qwen-lora", "finished")


@pytest.mark.parametrize("stack", list(STACKS))
def test_a_job_on_nodes_that_never_come_gives_its_quota_back(stack: str) -> None:
    result = rehearsal(stack)["no-capacity"]
    evicted = events(result, "qwen-lora", "evicted")
    assert evicted and "PodsReadyTimeout" in evicted[0]["detail"]
    # Requeued once its backoff ran out (Requeued condition True), then admitted again.
    assert events(result, "qwen-lora", "requeued")
    assert len(events(result, "qwen-lora", "admitted")) >= 2
    assert "deactivated after 3 requeues as on AKS" in " ".join(result["notes"])


@pytest.mark.parametrize("stack", ["prod", "kai-demo"])
def test_the_endpoint_scales_up_in_workload_slices_and_never_past_its_quota(stack: str) -> None:
    result = rehearsal(stack)["endpoint-scales"]
    assert result["applicable"] is True
    assert broken(result) == []
    # The minimum's slice, then the scaled one: admitted twice, the first replaced.
    assert len(events(result, "llm-serve", "admitted")) >= 2
    finished = events(result, "llm-serve", "finished")
    assert any("WorkloadSliceReplaced" in e["detail"] for e in finished)
    assert len(events(result, "llm-serve", "autoscaler")) >= 2
    assert not [e for e in result["events"] if e["what"] == "evicted"]


@pytest.mark.parametrize("stack", ["prod", "kai-demo"])
def test_the_endpoint_scale_down_gives_the_quota_back(stack: str) -> None:
    """Kueue lowers the admitted slice's count in place (its spec; the admission keeps the count
    it was admitted with): the slice counts the minimum again and the workers above it are gone."""
    result = rehearsal(stack)["endpoint-scales"]
    verdicts = {v["name"]: v for v in result["invariants"]}
    assert verdicts[SCALE_DOWN]["held"], verdicts[SCALE_DOWN]["detail"]
    last = events(result, "llm-serve", "autoscaler")[-1]["detail"]
    assert last.startswith("gpu replicas ") and "removing" in last


@pytest.mark.parametrize("stack", list(STACKS))
def test_an_endpoint_admitted_late_still_starts(stack: str) -> None:
    result = rehearsal(stack)["endpoint-admitted-late"]
    assert broken(result) == []
    held = [e["t"] for e in result["events"] if e["what"] == "ClusterQueue"]
    assert len(held) == 2  # held, then released
    admitted = events(result, "llm-serve", "admitted")
    assert admitted and admitted[0]["t"] >= held[1]
    # Its last pod count: every pod bound (`2/2 on cpu x1, gpu x1`).
    bound, pods = events(result, "llm-serve", "pods bound")[-1]["detail"].split(" ")[0].split("/")
    assert bound == pods != "0"


# What every stack's member is refused, as a member (RBAC lets the Ray objects through, the
# policy refuses them) and as the admin (the kinds no member may create).
MEMBER_REFUSALS = (
    "a RayJob without the queue label (as a member)",
    "a RayJob whose head sets NVIDIA_VISIBLE_DEVICES=all (as a member)",
    "a RayJob whose worker runs under runtimeClassName nvidia (as a member)",
    "a RayJob whose head asks KAI for half a GPU (as a member)",
    "a Pod asking for a GPU (as the admin)",
    "a Job asking for a GPU (as the admin)",
    "a Deployment asking for a GPU (as the admin)",
    "a Pod with no GPU request but NVIDIA_VISIBLE_DEVICES=all (as the admin)",
    "a RayCluster of one's own (as the admin)",
)


@pytest.mark.parametrize("stack", list(STACKS))
def test_a_member_submits_through_the_queue_and_nothing_gets_around_it(stack: str) -> None:
    result = rehearsal(stack)["team-members"]
    assert result["applicable"] is True
    assert broken(result) == []
    held = {v["name"] for v in result["invariants"] if v["held"]}
    for what in MEMBER_REFUSALS:
        assert f"scenario: {what} is refused" in held, what
    for verdict in (" admitted by Kueue", " finished", "'s pods bound, each by kai-scheduler"):
        assert f"scenario: my-first-job{verdict}" in held, verdict
    # Secrets neither in its own namespace nor in another (another team's, or kube-system).
    secrets = [v for v in held if v.startswith("scenario: a member may not get secrets in ")]
    assert len(secrets) == 2, secrets
    refused = [e["detail"] for e in result["events"] if e["what"] == "refused"]
    assert all("ValidatingAdmissionPolicy 'aksray-team-" in d or "is forbidden: User" in d
               for d in refused)  # fmt: skip
    admitted = events(result, "my-first-job", "admitted")
    assert admitted and events(result, "my-first-job", "finished")


def test_prods_member_cannot_reach_another_teams_queue_or_namespace() -> None:
    held = {v["name"] for v in rehearsal("prod")["team-members"]["invariants"] if v["held"]}
    assert {
        "scenario: a RayJob on team vision's LocalQueue (as a member) is refused",
        "scenario: a RayJob in team vision's KAI queue (as a member) is refused",
        "scenario: a RayJob at priority inference, which team nlp may not use (as a member) "
        "is refused",
        "scenario: a member may not create rayjobs.ray.io in vision",
        "scenario: a member cannot list RayJobs in vision",
    } <= held


def _gangs(scheduler: str) -> dict[str, Any]:
    if scheduler == "kai-scheduler":
        return rehearsal("dev")["gangs-compete"]
    done = _runs["/".join(KUBE_SCHEDULER_RUN)].result()
    assert done.returncode in (0, 1), done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout)  # one scenario: one document
    return result


@pytest.mark.parametrize("scheduler", ["kai-scheduler", "kube-scheduler"])
def test_two_gangs_for_one_gangs_gpus_one_runs_whole_and_the_other_waits(scheduler: str) -> None:
    """KAI binds one gang and no pod of the other; kube-scheduler (what the rig ran before KAI)
    binds part of both, the failure this scenario was written against."""
    result = _gangs(scheduler)
    verdicts = {v["name"]: v for v in result["invariants"]}
    whole = verdicts["scenario: one gang bound whole, none of the other"]
    assert verdicts["scenario: Kueue admits both gangs (quota, not nodes)"]["held"]
    if scheduler == "kai-scheduler":
        assert broken(result) == []
        assert result["controllers"]["kai-scheduler"].startswith("v0.12.0")
    else:
        assert not whole["held"]
        assert not verdicts["gang-all-or-nothing"]["held"]
        assert "wait for capacity" in verdicts["gang-all-or-nothing"]["detail"]


@pytest.fixture(scope="module")
def own_cluster() -> Any:
    """A rig started apart from the rehearsal, standing in for a cluster the user runs."""
    from aksray.rehearse.rig.bringup import start_rig
    from aksray.rehearse.rig.controlplane import remove_run_data, rig_run_dir
    from aksray.rehearse.rig.prerequisites import rig_toolchain
    from manifests.helm_values import kueue_manager_config
    from settings.defaults import DEFAULT_PODS_READY_TIMEOUT_MINUTES, DEFAULT_REQUEUE_LIMIT
    from settings.model import PodsReady

    run_dir = rig_run_dir()
    pods_ready = PodsReady(DEFAULT_PODS_READY_TIMEOUT_MINUTES, DEFAULT_REQUEUE_LIMIT)
    kueue = kueue_manager_config(metrics=False, pods_ready=pods_ready)
    plane = start_rig(rig_toolchain(), run_dir, kueue)
    yield plane
    plane.stop()
    remove_run_data(run_dir)


def rehearse_on(cluster: Any, stack: str, scenario: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aksray.rehearse", "rehearse", "--config", str(STACKS[stack]),
         "--scenario", scenario, "--kubeconfig", str(cluster.kubeconfig), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip


def test_a_cluster_of_your_own_plays_the_same_scenario_and_is_left_as_found(
    own_cluster: Any,
) -> None:
    before = {n["metadata"]["name"] for n in own_cluster.kube.items("/api/v1/nodes")}
    done = rehearse_on(own_cluster, "kai-demo", "inference-preempts-training")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert broken(result) == []
    assert events(result, "qwen-lora", "preempted")
    assert "kubernetes" in result["controllers"]
    # Its kwok nodes and every object it applied are gone again.
    assert {n["metadata"]["name"] for n in own_cluster.kube.items("/api/v1/nodes")} == before
    assert own_cluster.kube.get_or_none("/api/v1/namespaces/team-a") is None


def test_a_cluster_that_already_has_the_stacks_objects_is_refused(own_cluster: Any) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    own_cluster.kube.create("/api/v1/namespaces", namespace)
    try:
        done = rehearse_on(own_cluster, "kai-demo", "submit-all")
        assert done.returncode == 1
        assert "already has 1 object(s) of this stack (Namespace team-a)" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        own_cluster.kube.delete("/api/v1/namespaces/team-a")
