"""The operators, queues and workloads of a cluster, wired one way on every cluster that runs
jobs: a one-cluster stack's, and each MultiKueue worker's (its regional workloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aksray.offline.runner import RecordedResource, RunResult, run_program
from tests.support.harness import one, planned, stack_document, with_runs, write_stack

RELEASE = "kubernetes:helm.sh/v3:Release"
RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"


def _ray_objects(result: RunResult, prefix: str) -> list[RecordedResource]:
    return [
        r
        for r in result.resources
        if r.type in RAY_KINDS and r.name.startswith(f"{prefix}-workloads-")
    ]


def _assert_ordered_on_its_cluster(result: RunResult, prefix: str) -> None:
    kueue = one(result, RELEASE, f"{prefix}-operators-kueue").urn
    kuberay = one(result, RELEASE, f"{prefix}-operators-kuberay-operator").urn
    kai = one(result, RELEASE, f"{prefix}-operators-kai-scheduler").urn
    ray_objects = _ray_objects(result, prefix)
    assert ray_objects, prefix
    for ray in ray_objects:
        team = ray.inputs["metadata"]["labels"]["kai.scheduler/queue"]
        own = {
            one(result, f"{KUEUE}LocalQueue", f"{prefix}-queues-lq-{team}").urn,
            one(result, KAI_QUEUE, f"{prefix}-queues-kai-{team}").urn,
        }
        assert {kueue, kuberay} | own <= set(ray.depends_on), ray.name
    for resource in result.resources:
        if resource.name.startswith(f"{prefix}-queues-") and resource.type.startswith(KUEUE):
            assert kueue in resource.depends_on, resource.name
        if resource.name.startswith(f"{prefix}-queues-") and resource.type == KAI_QUEUE:
            assert kai in resource.depends_on, resource.name


def test_a_one_cluster_stacks_workloads_wait_for_its_operators_and_queues() -> None:
    _assert_ordered_on_its_cluster(planned("dev+run"), "aksray")


def test_a_workers_regional_workloads_wait_for_that_workers_operators_and_queues(
    tmp_path: Path,
) -> None:
    document = with_runs(stack_document("multiregion"))
    result = run_program(write_stack(tmp_path, document, "Pulumi.multiregion.yaml"))
    _assert_ordered_on_its_cluster(result, "aksray-weu")
    # Nothing of one worker waits for another worker's Kueue.
    sce_kueue = one(result, RELEASE, "aksray-sce-operators-kueue").urn
    assert not [r.name for r in _ray_objects(result, "aksray-weu") if sce_kueue in r.depends_on]


@pytest.mark.parametrize("prefix", ["aksray-weu", "aksray-sce"])
def test_each_worker_has_the_three_parts_under_its_own_component(
    tmp_path: Path, prefix: str
) -> None:
    result = run_program(stack_file_path(tmp_path))
    worker = next(r for r in result.resources if r.name == prefix)
    for part in ("operators", "queues", "workloads"):
        component = next(r for r in result.resources if r.name == f"{prefix}-{part}")
        assert component.parent == worker.urn, part


def stack_file_path(tmp_path: Path) -> Path:
    return write_stack(tmp_path, stack_document("multiregion"), "Pulumi.multiregion.yaml")
