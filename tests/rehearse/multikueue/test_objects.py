"""What each control plane of the MultiKueue rig gets from the program's offline run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aksray.offline.runner import stack_file
from aksray.rehearse.multikueue.objects import (
    ClusterObjects,
    UnplayableObjectError,
    cluster_objects,
    deletion_order,
    object_label,
    program_run,
    token_secret_of,
    with_kubeconfigs,
    with_runs,
)

RUNS = {"qwen-lora": "r1", "aurora-finetune": "r1"}


@pytest.fixture(scope="module")
def objects() -> dict[str, ClusterObjects]:
    ran = program_run(stack_file("multiregion"), "multiregion", RUNS)
    assert ran.problems == ()
    return cluster_objects(ran)


def labels(cluster: ClusterObjects) -> list[str]:
    return [object_label(o) for o in cluster.platform]


def test_one_set_of_objects_per_cluster(objects: dict[str, ClusterObjects]) -> None:
    assert list(objects) == ["manager", "sce", "weu"]


def test_the_manager_holds_the_multikueue_objects_and_the_jobs(
    objects: dict[str, ClusterObjects],
) -> None:
    manager = labels(objects["manager"])
    for expected in (
        "MultiKueueCluster weu",
        "MultiKueueCluster sce",
        "MultiKueueConfig multikueue-team-a",
        "AdmissionCheck multikueue-team-a",
        "Secret kueue-system/multikueue-weu",
        "ClusterQueue team-a",
        "LocalQueue team-a/team-a",
    ):
        assert expected in manager
    assert sorted(objects["manager"].jobs) == ["aurora-finetune", "qwen-lora"]
    assert objects["weu"].jobs == {} and objects["sce"].jobs == {}


def test_each_worker_holds_the_manager_account_and_its_queues(
    objects: dict[str, ClusterObjects],
) -> None:
    for worker in ("weu", "sce"):
        found = labels(objects[worker])
        for expected in (
            "ServiceAccount kueue-system/multikueue-manager",
            "ClusterRole aksray-multikueue-worker",
            "ClusterRoleBinding aksray-multikueue-worker",
            "Secret kueue-system/multikueue-manager-token",
            "ClusterQueue team-a",
            "ConfigMap team-a/qwen-lora-code-26534a6c50",
        ):
            assert expected in found, (worker, expected)
        assert not any(x.startswith("MultiKueue") for x in found)


def test_the_operators_objects_are_left_to_the_rig(objects: dict[str, ClusterObjects]) -> None:
    # The rig's processes are the operators: no chart namespace, no KAI webhook probe Job.
    for cluster in objects.values():
        found = labels(cluster)
        assert "Namespace kueue-system" not in found
        assert not any(x.startswith("Job ") for x in found)


def test_what_an_object_names_is_created_before_it(objects: dict[str, ClusterObjects]) -> None:
    manager = labels(objects["manager"])

    def at(label: str) -> int:
        return manager.index(label)

    assert manager[0] == "Namespace team-a"
    assert at("Secret kueue-system/multikueue-weu") < at("MultiKueueCluster weu")
    assert at("MultiKueueConfig multikueue-team-a") < at("AdmissionCheck multikueue-team-a")
    assert at("AdmissionCheck multikueue-team-a") < at("ClusterQueue team-a")
    assert at("Queue research") < at("Queue team-a")  # KAI's parent queue first
    assert at("ClusterQueue team-a") < at("LocalQueue team-a/team-a")
    reverse = [object_label(o) for o in deletion_order(objects["manager"].platform)]
    assert reverse == list(reversed(manager))


def test_the_kubeconfig_secrets_get_the_rigs_kubeconfigs(
    objects: dict[str, ClusterObjects],
) -> None:
    filled = with_kubeconfigs(
        objects["manager"], {"weu": "kubeconfig-weu", "sce": "kubeconfig-sce"}
    )
    secrets = {o["metadata"]["name"]: o for o in filled if o["kind"] == "Secret"}
    assert secrets["multikueue-weu"]["stringData"] == {"kubeconfig": "kubeconfig-weu"}
    assert secrets["multikueue-sce"]["stringData"] == {"kubeconfig": "kubeconfig-sce"}


def test_a_secret_the_rig_has_no_value_for_is_refused(objects: dict[str, ClusterObjects]) -> None:
    with pytest.raises(UnplayableObjectError, match="Secret kueue-system/multikueue-sce"):
        with_kubeconfigs(objects["manager"], {"weu": "kubeconfig-weu"})


def test_runs_are_set_on_the_named_jobs_only() -> None:
    document = yaml.safe_load(Path(stack_file("multiregion")).read_text(encoding="utf-8"))
    document["config"]["aks-ray-platform:workloads"]["model-stage"]["run"] = "old"
    changed = with_runs(document, {"qwen-lora": "r7"})
    section = changed["config"]["aks-ray-platform:workloads"]
    assert section["qwen-lora"]["run"] == "r7"
    assert "run" not in section["model-stage"] and "run" not in section["aurora-finetune"]
    assert "run" not in document["config"]["aks-ray-platform:workloads"]["qwen-lora"]


def test_a_run_on_a_job_the_stack_does_not_enable_is_refused() -> None:
    document = yaml.safe_load(Path(stack_file("multiregion")).read_text(encoding="utf-8"))
    with pytest.raises(UnplayableObjectError, match=r"workloads\.llm-serve"):
        with_runs(document, {"llm-serve": "r1"})


def test_the_token_secret_is_the_one_the_program_creates(
    objects: dict[str, ClusterObjects],
) -> None:
    assert token_secret_of(objects["weu"]) == "multikueue-manager-token"
    with pytest.raises(UnplayableObjectError, match="worker manager: the program creates no"):
        token_secret_of(objects["manager"])
