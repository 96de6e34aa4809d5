"""Who may reach a Ray head: KubeRay's token auth on every Ray cluster, and a NetworkPolicy per
workload that admits only its own pods, the KubeRay operator and, for the endpoint, its callers.

Without them any pod in the cluster could submit code to a head's dashboard (8265), GCS (6379)
or client port (10001), and it would run as the team's workload identity with Blob write access.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT, RecordedResource, RunResult
from catalog.versions import RAY_VERSION
from manifests.network import metrics_scraper
from tests.support.harness import one, planned, transitive_dependencies
from tests.support.reference import chart as reference_chart
from tests.support.reference import crds

RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
# The metrics add-on's replica set, which reads the PodMonitors (kube-system, rsName label).
AMA_METRICS = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
    "podSelector": {"matchLabels": {"rsName": "ama-metrics"}},
}
KUBERAY = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kuberay-system"}},
    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kuberay-operator"}},
}


def ray_objects(result: RunResult) -> list[RecordedResource]:
    found = [r for r in result.resources if r.type in RAY_KINDS]
    assert found
    return found


def cluster_spec(ray: RecordedResource) -> dict[str, Any]:
    spec = ray.inputs["spec"]
    cluster = spec["rayClusterSpec"] if ray.inputs["kind"] == "RayJob" else spec["rayClusterConfig"]
    assert isinstance(cluster, dict)
    return cluster


def policy_for(result: RunResult, ray: RecordedResource) -> RecordedResource:
    workload = ray.inputs["metadata"]["labels"]["aksray.io/workload"]
    return one(result, POLICY, f"aksray-workloads-{workload}-network")


# --------------------------------------------------------------------------------------------
# Token auth
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev+run", "prod+run", "local"])
def test_every_ray_cluster_requires_kuberays_token(stack: str) -> None:
    for ray in ray_objects(planned(stack)):
        cluster = cluster_spec(ray)
        # KubeRay (1.6 and newer) then generates a Secret with a random token per Ray cluster, sets
        # RAY_AUTH_MODE=token and RAY_AUTH_TOKEN on every Ray container and signs its own
        # dashboard calls (job submission, Serve) with it.
        assert cluster["authOptions"] == {"mode": "token"}, ray.name
        # ...and refuses token mode below Ray 2.52.0 or without a declared version.
        assert cluster["rayVersion"] == RAY_VERSION
        assert tuple(int(p) for p in RAY_VERSION.split(".")) >= (2, 52, 0)


@pytest.mark.reference
def test_the_crds_we_ship_know_the_field() -> None:
    for name in ("rayjobs", "rayservices", "rayclusters"):
        text = (crds("kuberay") / f"ray.io_{name}.yaml").read_text()
        assert "authOptions:" in text, name


# --------------------------------------------------------------------------------------------
# NetworkPolicies
# --------------------------------------------------------------------------------------------


def test_a_training_job_admits_only_its_own_pods_and_kuberay_on_the_dashboard() -> None:
    result = planned("dev+run")
    ray = one(result, RAY_KINDS[0], next(r.name for r in ray_objects(result) if "qwen" in r.name))
    assert policy_for(result, ray).inputs == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "ray-qwen-lora",
            "namespace": "team-a",
            "labels": {
                "app.kubernetes.io/managed-by": "aks-ray-platform",
                "aksray.io/workload": "qwen-lora",
                "aksray.io/team": "team-a",
            },
        },
        "spec": {
            "podSelector": {"matchLabels": {"aksray.io/workload": "qwen-lora"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                # head <-> workers: GCS, raylets, object managers and workers use many ports.
                {"from": [{"podSelector": {"matchLabels": {"aksray.io/workload": "qwen-lora"}}}]},
                # KubeRay submits the job and reads its status through the dashboard.
                {"from": [KUBERAY], "ports": [{"protocol": "TCP", "port": 8265}]},
            ],
        },
    }


def test_the_endpoint_also_admits_its_serve_port_from_its_teams_namespace() -> None:
    result = planned("prod")
    ray = one(result, RAY_KINDS[1], "aksray-workloads-llm-serve")
    assert policy_for(result, ray).inputs["spec"] == {
        "podSelector": {"matchLabels": {"aksray.io/workload": "llm-serve"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [{"podSelector": {"matchLabels": {"aksray.io/workload": "llm-serve"}}}]},
            # the dashboard (Serve config), and the head's Serve proxy health check
            {
                "from": [KUBERAY],
                "ports": [{"protocol": "TCP", "port": 8265}, {"protocol": "TCP", "port": 8000}],
            },
            # callers in the team's own namespace; `kubectl port-forward` needs no rule
            {"from": [{"podSelector": {}}], "ports": [{"protocol": "TCP", "port": 8000}]},
            # prod observes: AKS's metrics add-on scrapes Ray's metrics port
            {"from": [AMA_METRICS], "ports": [{"protocol": "TCP", "port": 8080}]},
        ],
    }
    assert policy_for(result, ray).inputs["metadata"]["namespace"] == "llm-serving"


def test_an_existing_clusters_prometheus_is_admitted_to_the_metrics_port_only_when_declared(
    tmp_path: Path,
) -> None:

    local = planned("local").settings
    assert metrics_scraper(local) is None  # the local stack does not observe
    observed = dataclasses.replace(
        local,
        observability=dataclasses.replace(
            local.observability, enabled=True, prometheus_operator=True
        ),
    )
    assert metrics_scraper(observed) == {"namespaceSelector": {}, "podSelector": {}}
    dev = planned("dev").settings
    assert dev.observability.enabled is False and metrics_scraper(dev) is None


def test_without_our_kuberay_release_its_operator_is_matched_in_any_namespace() -> None:
    result = planned("local")
    assert result.settings.operators.install is False
    for ray in ray_objects(result):
        operator_rule = policy_for(result, ray).inputs["spec"]["ingress"][1]
        assert operator_rule["from"] == [
            {"namespaceSelector": {}, "podSelector": KUBERAY["podSelector"]}
        ]


@pytest.mark.parametrize("stack", ["dev+run", "prod+run", "local"])
def test_every_ray_object_is_created_after_its_policy(stack: str) -> None:
    result = planned(stack)
    namespaces = {
        r.inputs["metadata"]["name"]: r.urn for r in result.by_type("kubernetes:core/v1:Namespace")
    }
    rays = ray_objects(result)
    assert len(result.by_type(POLICY)) == len(rays)
    for ray in rays:
        policy = policy_for(result, ray)
        # In force before the head listens; deleted only after the Ray object is gone.
        assert policy.urn in ray.depends_on, ray.name
        assert namespaces[policy.inputs["metadata"]["namespace"]] in transitive_dependencies(
            result, policy
        )
        selected = policy.inputs["spec"]["podSelector"]["matchLabels"]
        for template in pod_templates(cluster_spec(ray)):
            assert selected.items() <= template["metadata"]["labels"].items(), ray.name


def pod_templates(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        cluster["headGroupSpec"]["template"],
        *(group["template"] for group in cluster.get("workerGroupSpecs", [])),
    ]


@pytest.mark.reference
def test_kuberays_pods_carry_the_label_the_policies_name() -> None:
    """The chart names its operator pods `app.kubernetes.io/name: <nameOverride>`."""
    chart = reference_chart("kuberay-operator")
    values = yaml.safe_load((chart / "values.yaml").read_text())
    assert values["nameOverride"] == "kuberay-operator"
    deployment = (chart / "templates/deployment.yaml").read_text()
    template = deployment[deployment.index("  template:") :]
    assert 'app.kubernetes.io/name: {{ include "kuberay-operator.name" . }}' in template
    helpers = (chart / "templates/_helpers.tpl").read_text()
    assert "default .Chart.Name .Values.nameOverride" in helpers


def test_the_ray_ports_the_policies_open_are_the_ones_the_pods_declare() -> None:
    result = planned("prod")
    ray = one(result, RAY_KINDS[1], "aksray-workloads-llm-serve")
    head = cluster_spec(ray)["headGroupSpec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in head["ports"]}
    assert ports["dashboard"] == 8265 and ports["serve"] == 8000


def test_the_readme_port_forward_still_reaches_the_endpoint() -> None:
    text = (PROJECT_ROOT / "README.md").read_text()
    assert "kubectl -n <team namespace> port-forward svc/llm-serve-serve-svc 8000" in text
