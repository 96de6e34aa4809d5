"""The Ray autoscaler's Kubernetes rights (patch pods and RayClusters) reach its own container
and nothing else: no worker, and not the head's Ray container where the payload runs. Checked
on every stack's rendered Ray objects and service accounts together with the Role and
RoleBinding KubeRay creates for them (tests/support/kuberay_rbac.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aksray.offline.runner import RunResult
from manifests.access.autoscaler import API_CREDENTIALS_DIR
from manifests.namespaces import ELASTIC_HEAD_SERVICE_ACCOUNT, RAY_SERVICE_ACCOUNT
from tests.support.harness import planned
from tests.support.kuberay_rbac import (
    AUTOSCALER_CONTAINER,
    Container,
    autoscaler_bindings,
    containers,
    may_patch_pods,
    ray_cluster,
)

STACKS = ("dev+run", "prod+run", "local")
RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"


def _ray_objects(result: RunResult) -> list[dict[str, Any]]:
    return [r.inputs for kind in RAY_KINDS for r in result.by_type(kind)]


def _accounts(result: RunResult) -> dict[str, dict[str, dict[str, Any]]]:
    """namespace -> name -> ServiceAccount."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for r in result.by_type(SERVICE_ACCOUNT):
        meta = r.inputs["metadata"]
        found.setdefault(meta["namespace"], {})[meta["name"]] = r.inputs
    return found


def _patchers(objects: list[dict[str, Any]], accounts: Any) -> list[Container]:
    """Every container, in any stack object's pods, that may patch pods."""
    bindings = [b for manifest in objects for b in autoscaler_bindings(manifest)]
    found = []
    for manifest in objects:
        namespace = manifest["metadata"]["namespace"]
        for container in containers(manifest, accounts.get(namespace, {})):
            if may_patch_pods(container, namespace, bindings):
                found.append(container)
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_only_autoscalers_may_patch_pods_no_worker_and_no_payload(stack: str) -> None:
    result = planned(stack)
    objects = _ray_objects(result)
    patchers = _patchers(objects, _accounts(result))
    elastic = [m for m in objects if ray_cluster(m).get("enableInTreeAutoscaling")]
    assert [(c.workload, c.group, c.name) for c in patchers] == [
        (m["metadata"]["name"], "head", AUTOSCALER_CONTAINER) for m in elastic
    ]


def test_the_shipped_stacks_run_elastic_workloads() -> None:
    """So the test above checks an autoscaler at all: dev's batch inference, prod's batch
    inference and its endpoint (2 to 8 replicas)."""
    expected = {"dev+run": {"vllm-batch"}, "prod+run": {"vllm-batch", "llm-serve"}}
    for stack, elastic in expected.items():
        names = {
            m["metadata"]["labels"]["aksray.io/workload"]
            for m in _ray_objects(planned(stack))
            if ray_cluster(m).get("enableInTreeAutoscaling")
        }
        assert names == elastic, stack


def test_one_account_for_heads_and_workers_would_let_workers_patch_pods() -> None:
    """The check finds what it guards against: an elastic head on the workers' account, with
    its token automounted, hands KubeRay's Role to every worker of the team."""
    result = planned("prod+run")
    objects = copy.deepcopy(_ray_objects(result))
    (batch,) = [
        m
        for m in objects
        if ray_cluster(m).get("enableInTreeAutoscaling")
        and m["metadata"]["namespace"] == "training"
    ]
    head = ray_cluster(batch)["headGroupSpec"]["template"]["spec"]
    head["serviceAccountName"] = RAY_SERVICE_ACCOUNT
    del head["automountServiceAccountToken"]
    accounts = copy.deepcopy(_accounts(result))
    accounts["training"][RAY_SERVICE_ACCOUNT]["automountServiceAccountToken"] = True
    batch_name = batch["metadata"]["name"]
    (stage,) = [
        m["metadata"]["name"]
        for m in objects
        if m["metadata"]["namespace"] == "training" and m["metadata"]["name"] != batch_name
    ]
    assert sorted((c.workload, c.group, c.name) for c in _patchers(objects, accounts)) == [
        ("llm-serve", "head", AUTOSCALER_CONTAINER),  # the serving team's own elastic head
        (stage, "head", "ray-head"),  # another workload of the team
        (batch_name, "gpu", "ray-worker"),
        (batch_name, "head", AUTOSCALER_CONTAINER),
        (batch_name, "head", "ray-head"),
    ]


@pytest.mark.parametrize("stack", ("dev+run", "prod+run"))
def test_the_autoscaler_gets_its_token_where_ray_reads_it(stack: str) -> None:
    """Ray's KubeRay node provider reads token and ca.crt from the in-cluster directory; with
    every team account's automounting off, the head's projected volume is where they come
    from, for the elastic heads' own account (which the stack creates, as KubeRay expects)."""
    result = planned(stack)
    accounts = _accounts(result)
    for manifest in _ray_objects(result):
        cluster = ray_cluster(manifest)
        if not cluster.get("enableInTreeAutoscaling"):
            continue
        namespace = manifest["metadata"]["namespace"]
        pod = cluster["headGroupSpec"]["template"]["spec"]
        assert pod["serviceAccountName"] == ELASTIC_HEAD_SERVICE_ACCOUNT
        assert pod["automountServiceAccountToken"] is False
        assert ELASTIC_HEAD_SERVICE_ACCOUNT in accounts[namespace]
        (mount,) = cluster["autoscalerOptions"]["volumeMounts"]
        assert (mount["mountPath"], mount["readOnly"]) == (API_CREDENTIALS_DIR, True)
        (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        paths = {
            item["path"]
            for source in volume["projected"]["sources"]
            for kind in source.values()
            for item in kind.get("items", [kind])
        }
        assert paths == {"token", "ca.crt", "namespace"}
        for group in cluster.get("workerGroupSpecs", []):
            assert group["template"]["spec"]["serviceAccountName"] == RAY_SERVICE_ACCOUNT
