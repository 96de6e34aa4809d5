"""A two-region stack: what the manager and each worker get, and the credentials between."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RecordedResource, RunResult, run_program, stack_file
from manifests.access.multikueue import token_secret_name, worker_write_rules
from manifests.kueue import MULTIKUEUE_CONTROLLER
from manifests.multikueue import kubeconfig_text, server_of
from tests.support.harness import ancestors, one, stack_document, with_runs, write_stack

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"


@pytest.fixture(scope="module")
def result() -> RunResult:
    return run_program(stack_file("multiregion"), stack="multiregion")


def _provider(resource: RecordedResource) -> str:
    return (resource.provider or "").split("::")[3] if resource.provider else ""


def _spec(resource: RecordedResource) -> dict[str, Any]:
    spec: dict[str, Any] = resource.inputs["spec"]
    return spec


def _quotas(queue: RecordedResource) -> dict[str, dict[str, Any]]:
    flavors = _spec(queue)["resourceGroups"][0]["flavors"]
    return {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in flavors}


def test_the_manager_queue_waits_for_dispatch_with_the_sum_of_the_workers_quota(
    result: RunResult,
) -> None:
    manager = one(result, KUEUE + "ClusterQueue", "aksray-queues-cq-team-a")
    assert _spec(manager)["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "multikueue-team-a"}]
    }
    # 4 + 4 A100s; 10 + 10 CPU and 40Gi + 40Gi for the heads; the A100 flavor's cpu/memory
    # are each worker's GPU share of its nodes, summed.
    weu = one(result, KUEUE + "ClusterQueue", "aksray-weu-queues-cq-team-a")
    assert _quotas(manager)["a100"]["nvidia.com/gpu"] == "8"
    assert _quotas(manager)["cpu"] == {"cpu": "20", "memory": "80Gi", "nvidia.com/gpu": "0"}
    assert _quotas(weu)["a100"]["nvidia.com/gpu"] == "4"
    assert _quotas(weu)["cpu"] == {"cpu": "10", "memory": "40Gi", "nvidia.com/gpu": "0"}
    assert "admissionChecksStrategy" not in _spec(weu)


def test_the_manager_dispatches_each_team_to_the_workers_it_has_quota_in(
    result: RunResult,
) -> None:
    check = one(
        result, KUEUE + "AdmissionCheck", "aksray-multikueue-admissioncheck-multikueue-team-a"
    )
    assert _spec(check) == {
        "controllerName": MULTIKUEUE_CONTROLLER,
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "MultiKueueConfig",
            "name": "multikueue-team-a",
        },
    }
    config = one(
        result, KUEUE + "MultiKueueConfig", "aksray-multikueue-multikueueconfig-multikueue-team-a"
    )
    assert _spec(config) == {"clusters": ["weu", "sce"]}
    cluster = one(result, KUEUE + "MultiKueueCluster", "aksray-multikueue-multikueuecluster-weu")
    assert _spec(cluster) == {
        "clusterSource": {"kubeConfig": {"locationType": "Secret", "location": "multikueue-weu"}}
    }
    assert _provider(cluster) == "aksray-cluster-k8s"


def test_the_kubeconfig_is_a_secret_on_the_manager(result: RunResult) -> None:
    secret = one(result, "kubernetes:core/v1:Secret", "aksray-multikueue-weu-kubeconfig")
    assert secret.inputs["stringData"] == "[secret]"
    assert secret.inputs["metadata"]["namespace"] == "kueue-system"
    assert _provider(secret) == "aksray-cluster-k8s"


def test_each_worker_is_its_own_aks_cluster_in_its_region(result: RunResult) -> None:
    weu = one(result, "azure-native:containerservice:ManagedCluster", "aksray-weu-cluster-aks")
    assert weu.inputs["location"] == "westeurope"
    assert weu.inputs["resourceName"] == "aks-aksray-multiregion-weu"
    pools = {r.name for r in result.by_type("azure-native:containerservice:AgentPool")}
    assert pools == {
        "aksray-cluster-pool-cpu",  # the manager: no GPU pool
        "aksray-weu-cluster-pool-cpu",
        "aksray-weu-cluster-pool-a100",
        "aksray-sce-cluster-pool-cpu",
        "aksray-sce-cluster-pool-a100",
    }


def test_the_manager_account_on_a_worker_is_least_privilege(result: RunResult) -> None:
    rbac = "kubernetes:rbac.authorization.k8s.io/v1:"
    read = one(result, rbac + "ClusterRole", "aksray-weu-clusterrole-aksray-multikueue-worker-read")
    assert _provider(read) == "aksray-weu-cluster-k8s"
    # Cluster-wide, Kueue's remote client only watches: Workloads and every Ray kind the
    # manager's Kueue integrates (RayJob and RayService, whatever the stack dispatches: it does
    # not connect where one watch is forbidden, Kueue v0.19.2, seen on the rehearsal rig).
    assert read.inputs["rules"] == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["list", "watch"]},
        {
            "apiGroups": ["ray.io"],
            "resources": ["rayjobs", "rayservices"],
            "verbs": ["list", "watch"],
        },
    ]
    cluster_wide = [
        r.inputs["roleRef"]["name"]
        for r in result.by_type(rbac + "ClusterRoleBinding")
        if r.name.startswith("aksray-weu-")
        and {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
        in r.inputs["subjects"]
    ]
    assert cluster_wide == ["aksray-multikueue-worker-read"]
    # Its writes are bound in the namespaces of the teams with quota in the worker only.
    write = one(result, rbac + "ClusterRole", "aksray-weu-clusterrole-aksray-multikueue-worker")
    assert write.inputs["rules"] == worker_write_rules(["RayJob", "RayService"])
    bindings = [r for r in result.by_type(rbac + "RoleBinding") if r.name.startswith("aksray-weu-")]
    assert [(b.inputs["metadata"]["namespace"], b.inputs["roleRef"]) for b in bindings] == [
        (
            "team-a",
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "aksray-multikueue-worker",
            },
        )
    ]
    assert bindings[0].inputs["subjects"] == [
        {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
    ]
    verbs = {verb for r in (read, write) for rule in r.inputs["rules"] for verb in rule["verbs"]}
    assert "*" not in verbs and "escalate" not in verbs and "bind" not in verbs
    token = one(result, "kubernetes:core/v1:Secret", "aksray-weu-secret-multikueue-manager-token")
    assert token.inputs["type"] == "kubernetes.io/service-account-token"
    assert token.inputs["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "multikueue-manager"
    }


def test_the_writes_cover_what_kueue_does_on_a_worker() -> None:
    """Create, read back and delete the copies; patch a RayService whose Serve config changed
    (MultiKueueRemoteSpecSync); update a copy's status to open its preemption gate."""
    rules = worker_write_rules(["RayJob", "RayService"])
    assert {tuple(r["resources"]): set(r["verbs"]) for r in rules} == {
        ("rayjobs",): {"get", "create", "delete"},
        ("rayservices",): {"get", "create", "delete", "patch"},
        ("workloads",): {"get", "create", "delete", "update", "patch"},
        ("workloads/status",): {"update", "patch"},
    }


def test_the_kubeconfig_holds_a_static_token_and_nothing_to_execute() -> None:
    text = kubeconfig_text(
        worker="weu", server="https://weu.example:443", ca_data="Q0E=", token="t0ken"
    )
    document = yaml.safe_load(text)
    assert document["users"] == [{"name": "weu-multikueue-manager", "user": {"token": "t0ken"}}]
    assert document["clusters"][0]["cluster"] == {
        "server": "https://weu.example:443",
        "certificate-authority-data": "Q0E=",
    }
    assert "exec" not in text and "auth-provider" not in text
    assert server_of(text) == "https://weu.example:443"


def test_each_worker_issuer_is_trusted_by_the_team_identity(result: RunResult) -> None:
    credentials = result.by_type("azure-native:managedidentity:FederatedIdentityCredential")
    by_name = {c.name: c.inputs for c in credentials}
    weu = by_name["aksray-weu-team-a-federation-ray-workload"]
    assert weu["resourceName"] == "id-aksray-multiregion-team-a"
    assert weu["subject"] == "system:serviceaccount:team-a:ray-workload"
    assert "aks-aksray-multiregion-weu" in weu["issuer"]
    # weu runs the elastic vllm-batch: its heads' account is trusted there, not in sce.
    # The manager's issuer is trusted by nothing: no team pod runs there.
    assert sorted(by_name) == [
        "aksray-sce-team-a-federation-ray-workload",
        "aksray-weu-team-a-federation-ray-elastic-head",
        "aksray-weu-team-a-federation-ray-workload",
    ]
    assert sorted({str(c.inputs["issuer"]).split(" of ")[-1] for c in credentials}) == [
        "aks-aksray-multiregion-sce>",
        "aks-aksray-multiregion-weu>",
    ]
    # Azure refuses concurrent credential writes to one identity: one chain across clusters,
    # each credential after the first waiting for the one before it.
    urns = {c.urn for c in credentials}
    firsts = [c.name for c in credentials if not urns & set(c.depends_on)]
    assert len(firsts) == 1, firsts


def test_worker_objects_live_under_their_worker(result: RunResult) -> None:
    role = one(
        result,
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
        "aksray-sce-clusterrole-aksray-multikueue-worker",
    )
    assert "aksray-sce" in [a.name for a in ancestors(result, role)]


def test_a_submitted_job_finds_its_code_and_policy_in_every_candidate_worker(
    tmp_path: Path,
) -> None:
    document = with_runs(stack_document("multiregion"))
    result = run_program(write_stack(tmp_path, document, "Pulumi.multiregion.yaml"))
    config_maps = {r.name: _provider(r) for r in result.by_type("kubernetes:core/v1:ConfigMap")}
    for worker in ("weu", "sce"):
        assert config_maps[f"aksray-{worker}-dispatched-qwen-lora-code"] == (
            f"aksray-{worker}-cluster-k8s"
        )
    # The job itself is submitted once, to the manager; vllm-batch, regional, only in weu.
    jobs = {r.name: _provider(r) for r in result.by_type("kubernetes:ray.io/v1:RayJob")}
    assert jobs["aksray-workloads-qwen-lora"] == "aksray-cluster-k8s"
    assert jobs["aksray-weu-workloads-vllm-batch"] == "aksray-weu-cluster-k8s"
    assert not any(name.startswith("aksray-sce-") for name in jobs)
    policies = {r.name for r in result.by_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")}
    assert "aksray-sce-dispatched-aurora-finetune-network" in policies


def test_the_manager_runs_no_gpu_operator_and_each_worker_does(result: RunResult) -> None:
    releases = {r.name for r in result.by_type("kubernetes:helm.sh/v3:Release")}
    gpu_operators = sorted(name for name in releases if name.endswith("-operators-gpu-operator"))
    assert gpu_operators == [
        "aksray-sce-operators-gpu-operator",
        "aksray-weu-operators-gpu-operator",
    ]
    for cluster in ("aksray", "aksray-weu", "aksray-sce"):
        assert f"{cluster}-operators-kueue" in releases
        assert f"{cluster}-operators-kuberay-operator" in releases


def test_a_new_token_rotation_label_is_a_new_token_secret_read_into_the_kubeconfig(
    tmp_path: Path,
) -> None:
    """The label names the worker's token Secret: a new label is a new Secret (Kubernetes fills
    in a new token), the old Secret goes, and the manager's kubeconfig is read from the new one."""
    document = stack_document("multiregion")
    document["config"]["aks-ray-platform:multikueue"]["tokenRotation"] = "2026-12"
    result = run_program(write_stack(tmp_path, document, "Pulumi.multiregion.yaml"))
    secrets = {
        r.name: r.inputs["metadata"]["name"]
        for r in result.by_type("kubernetes:core/v1:Secret")
        if r.inputs.get("type") == "kubernetes.io/service-account-token"
    }
    assert secrets == {
        "aksray-weu-secret-multikueue-manager-token-2026-12": "multikueue-manager-token-2026-12",
        "aksray-sce-secret-multikueue-manager-token-2026-12": "multikueue-manager-token-2026-12",
    }
    # Without a label the Secret keeps the name it always had (existing stacks: no new token).
    assert token_secret_name("") == "multikueue-manager-token"
    assert token_secret_name("2026-12") == "multikueue-manager-token-2026-12"
