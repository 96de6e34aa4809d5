"""A MultiKueue stack's first `pulumi up`: what must hold whatever order the engine creates the
unordered objects in (it creates them in parallel, as its graph allows)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT, RunResult, run_program
from components.queues import DISPATCH_WAIT_SECONDS
from tests.support.harness import (
    one,
    planned,
    stack_document,
    transitive_dependencies,
    write_stack,
)

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
RAYJOB = "kubernetes:ray.io/v1:RayJob"
MULTIKUEUE_MANAGED = "kueue.x-k8s.io/multikueue"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """The example with the dispatched qwen-lora and the regional vllm-batch submitted."""
    document = stack_document("multiregion")
    workloads = document["config"]["aks-ray-platform:workloads"]
    workloads["qwen-lora"]["run"] = "1"
    workloads["vllm-batch"]["run"] = "1"
    folder: Path = tmp_path_factory.mktemp("first-up")
    return run_program(write_stack(folder, document, "Pulumi.multiregion.yaml"))


def test_the_token_secret_is_created_after_its_service_account(result: RunResult) -> None:
    for worker in ("weu", "sce"):
        token = one(
            result, "kubernetes:core/v1:Secret", f"aksray-{worker}-secret-multikueue-manager-token"
        )
        account = one(
            result,
            "kubernetes:core/v1:ServiceAccount",
            f"aksray-{worker}-serviceaccount-multikueue-manager",
        )
        assert account.urn in token.depends_on


def test_a_manager_ray_job_is_marked_for_multikueue_whenever_it_is_created(
    result: RunResult,
) -> None:
    manager = next(r for r in result.by_type(RAYJOB) if r.name == "aksray-workloads-qwen-lora")
    assert manager.inputs["spec"]["managedBy"] == MULTIKUEUE_MANAGED
    # A regional job runs where it is created: its worker's KubeRay must not leave it alone.
    regional = one(result, RAYJOB, "aksray-weu-workloads-vllm-batch")
    assert "managedBy" not in regional.inputs["spec"]


def test_the_manager_local_queue_waits_until_the_team_can_dispatch(result: RunResult) -> None:
    queue = one(result, KUEUE + "LocalQueue", "aksray-queues-lq-team-a")
    assert queue.inputs["metadata"]["annotations"]["pulumi.com/waitFor"] == "condition=Active"
    check = one(
        result, KUEUE + "AdmissionCheck", "aksray-multikueue-admissioncheck-multikueue-team-a"
    )
    assert check.urn in transitive_dependencies(result, queue)
    job = next(r for r in result.by_type(RAYJOB) if r.name == "aksray-workloads-qwen-lora")
    assert queue.urn in transitive_dependencies(result, job)


def test_the_manager_objects_come_after_what_they_name(result: RunResult) -> None:
    """And are deleted before it: an AdmissionCheck keeps Kueue's resource-in-use finalizer
    while a ClusterQueue names it, so `pulumi destroy` must delete the queue first (the rig's
    destroy otherwise waited on the check until it timed out)."""
    queue = one(result, KUEUE + "ClusterQueue", "aksray-queues-cq-team-a")
    check = one(
        result, KUEUE + "AdmissionCheck", "aksray-multikueue-admissioncheck-multikueue-team-a"
    )
    config = one(
        result, KUEUE + "MultiKueueConfig", "aksray-multikueue-multikueueconfig-multikueue-team-a"
    )
    assert check.urn in queue.depends_on
    assert config.urn in check.depends_on
    for worker in ("weu", "sce"):
        cluster = one(
            result, KUEUE + "MultiKueueCluster", f"aksray-multikueue-multikueuecluster-{worker}"
        )
        secret = one(result, "kubernetes:core/v1:Secret", f"aksray-multikueue-{worker}-kubeconfig")
        assert cluster.urn in config.depends_on
        assert secret.urn in cluster.depends_on


@pytest.mark.parametrize("cluster", ["aksray", "aksray-weu", "aksray-sce"])
def test_every_kueue_of_the_stack_preempts_for_a_dispatched_job_in_one_worker_at_a_time(
    result: RunResult, cluster: str
) -> None:
    release = one(result, "kubernetes:helm.sh/v3:Release", f"{cluster}-operators-kueue")
    values = release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    gates = yaml.safe_load(values)["featureGates"]
    assert gates == {"ElasticJobsViaWorkloadSlices": True, "MultiKueueOrchestratedPreemption": True}


def test_a_one_cluster_stack_keeps_the_alpha_gate_off() -> None:
    release = one(planned("dev"), "kubernetes:helm.sh/v3:Release", "aksray-operators-kueue")
    values = release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    assert yaml.safe_load(values)["featureGates"] == {"ElasticJobsViaWorkloadSlices": True}


def test_the_writes_in_a_team_namespace_come_after_it(result: RunResult) -> None:
    binding = one(
        result,
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "aksray-weu-rolebinding-team-a-aksray-multikueue-worker",
    )
    namespace = one(result, "kubernetes:core/v1:Namespace", "aksray-weu-teams-team-a")
    assert namespace.urn in binding.depends_on


def test_the_docs_say_how_long_the_first_up_waits_for_dispatch(result: RunResult) -> None:
    queue = one(result, KUEUE + "LocalQueue", "aksray-queues-lq-team-a")
    seconds = int(queue.inputs["metadata"]["annotations"]["pulumi.com/timeoutSeconds"])
    assert seconds == DISPATCH_WAIT_SECONDS
    text = " ".join((PROJECT_ROOT / "docs" / "multikueue.md").read_text(encoding="utf-8").split())
    assert f"(`pulumi.com/waitFor: condition=Active`, at most {seconds} s)" in text
    assert f"fails the `up` at that LocalQueue after {seconds} s" in text
