"""The stack the MultiKueue rehearsal applies through the engine: the stack file as a fleet of
existing clusters, one context each, and only the submitted jobs' runs."""

from __future__ import annotations

import pytest

from aksray.offline.runner import stack_file
from aksray.rehearse.multikueue.stack import (
    Submitted,
    UnplayableStackError,
    fleet_config,
    offline_run,
    with_runs,
)
from aksray.rehearse.stack import REHEARSAL_ACCOUNT, read_stack_file

P = "aks-ray-platform:"
SERVERS = {"weu": "https://127.0.0.1:41001", "sce": "https://127.0.0.1:41002"}


def test_every_cluster_is_an_existing_one_on_its_own_context() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    config = fleet_config(stack, SERVERS, Submitted({"qwen-lora": "r1"}))
    assert config[P + "cluster"] == {
        "systemPool": {"vmSize": "Standard_D4ds_v6", "count": 1},
        "cpuPool": {"vmSize": "Standard_D8ds_v6", "minCount": 1, "maxCount": 2},
        "gpuPools": [],
        "mode": "existing",
        "kubeconfigContext": "manager",
    }
    assert config[P + "storage"]["existingAccount"] == REHEARSAL_ACCOUNT
    assert config[P + "operators"] == {"install": False}
    workers = config[P + "multikueue"]["workers"]
    assert [(w["name"], w["location"], w["apiServer"]) for w in workers] == [
        ("weu", "westeurope", "https://127.0.0.1:41001"),
        ("sce", "swedencentral", "https://127.0.0.1:41002"),
    ]
    weu = workers[0]["cluster"]
    assert (weu["mode"], weu["kubeconfigContext"]) == ("existing", "weu")
    assert weu["gpuPools"] == stack["multikueue"]["workers"][0]["cluster"]["gpuPools"]
    assert "kubernetesVersion" not in weu  # what only AKS does is left out
    assert workers[0]["quota"] == stack["multikueue"]["workers"][0]["quota"]
    assert config[P + "multikueue"]["regional"] == {"vllm-batch": "weu"}


def test_runs_are_set_on_the_named_jobs_only() -> None:
    workloads = read_stack_file(stack_file("multiregion"))["workloads"]
    workloads["model-stage"] = {**workloads["model-stage"], "run": "old"}
    section = with_runs(workloads, {"qwen-lora": "r7"})
    assert section["qwen-lora"]["run"] == "r7"
    assert "run" not in section["model-stage"] and "run" not in section["aurora-finetune"]
    assert "run" not in workloads["qwen-lora"]


def test_a_run_on_a_job_the_stack_does_not_enable_is_refused() -> None:
    workloads = read_stack_file(stack_file("multiregion"))["workloads"]
    with pytest.raises(UnplayableStackError, match=r"workloads\.llm-serve"):
        with_runs(workloads, {"llm-serve": "r1"})


def test_the_program_registers_every_cluster_under_its_provider() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    result = offline_run(stack, "multiregion", {"qwen-lora": "r1"})
    assert not result.problems
    providers = {
        r.urn: r.inputs.get("context")
        for r in result.resources
        if r.type == "pulumi:providers:kubernetes"
    }
    assert sorted(str(c) for c in providers.values()) == ["manager", "sce", "weu"]
    rayjobs = [r for r in result.resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert [(r.inputs["metadata"]["labels"]["aksray.io/workload"]) for r in rayjobs] == [
        "qwen-lora"
    ]
    assert not [r for r in result.resources if r.type.startswith("kubernetes:helm.sh/")]


def test_what_a_scenario_changed_is_set_as_pulumi_config_set_would() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    submitted = Submitted(
        {"vllm-batch": "r2"},
        {
            "vllm-batch": {"minWorkers": 4, "maxWorkers": 4},
            "aurora-finetune": {"priority": "build"},
        },
        {"vllm-batch"},
    )
    config = fleet_config(stack, SERVERS, submitted)
    workloads = config[P + "workloads"]
    assert workloads["vllm-batch"] == {
        "enabled": True,
        "team": "team-a",
        "priority": "train",
        "minWorkers": 4,
        "maxWorkers": 4,
        "run": "r2",
    }
    assert workloads["aurora-finetune"]["priority"] == "build"
    assert "run" not in workloads["aurora-finetune"]
    assert config[P + "multikueue"]["regional"] == {}
    assert stack["multikueue"]["regional"] == {"vllm-batch": "weu"}  # the stack file's own


def test_a_regional_job_of_an_existing_fleet_reads_the_existing_account() -> None:
    """A worker's own jobs use the stack's existing Blob account, as a one-cluster stack's do."""
    stack = read_stack_file(stack_file("multiregion"))
    result = offline_run(stack, "multiregion", {"vllm-batch": "r1"})
    assert not result.problems
    [job] = [r for r in result.resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert job.name == "aksray-weu-workloads-vllm-batch"
    assert REHEARSAL_ACCOUNT in str(job.inputs["spec"]["rayClusterSpec"])
