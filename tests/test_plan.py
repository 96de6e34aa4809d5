"""`aksray plan`: the summary (dev's numbers exactly), every check (fires once, naming the config
path, on a minimal stack that violates it; silent on the project stacks), the deploy critical
path, the CLI contract and a scaling smoke test."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.checks import CHECKS, run_checks
from aksray.checks.capacity import check_node_fit, check_pool_capacity
from aksray.checks.findings import Findings
from aksray.checks.gangs import check_gang_admission
from aksray.checks.kai import check_kai_hierarchy, check_kai_quota
from aksray.checks.schedulers import check_kueue_integrations, check_priority_classes
from aksray.checks.services import check_services_never_evicted
from aksray.checks.waste import check_idle_gpus, check_unused_quota
from aksray.graph import (
    ESTIMATED_SECONDS,
    critical_path,
    estimated_seconds,
    longest_chain,
    waits_for,
)
from aksray.model import HELM_RELEASE, Plan, plan, pods_per_node, registered
from aksray.report import summary, summary_lines
from aksray.runner import PROJECT_ROOT, RecordedResource, RunResult, run_program
from manifests.capacity import MIB
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.harness import STACKS, P, cli, planned, stack_document, write_stack

GIB = 1024**3
Check = Callable[[Plan, Findings], None]

# --------------------------------------------------------------------------------------------
# A minimal stack that plans clean; each check's test breaks it in one way
# --------------------------------------------------------------------------------------------


def minimal() -> dict[str, Any]:
    """One department, one team, one 1-GPU pool of 2 nodes, the endpoint without Blob."""
    return {
        "config": {
            P + "cluster": {
                "cpuPool": {"vmSize": "Standard_D8ds_v6", "minCount": 1, "maxCount": 2},
                "gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 2}],
            },
            P + "scheduling": {
                "departments": [
                    {
                        "name": "research",
                        "teams": [
                            {
                                "name": "team-a",
                                "quota": {
                                    "a100": {"gpu": 2},
                                    "cpu": {"cpu": 4, "memory": "16Gi"},
                                },
                            }
                        ],
                    }
                ]
            },
            P + "workloads": {
                "llm-serve": {"enabled": True, "team": "team-a", "loraAdapter": False}
            },
        }
    }


def config(document: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = document["config"]
    return result


def teams(document: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = config(document)[P + "scheduling"]["departments"][0]["teams"]
    return result


def run(tmp_path: Path, document: dict[str, Any]) -> RunResult:
    result = run_program(write_stack(tmp_path, document))
    assert result.ok, result.problems
    return result


def only(check: Check, subject: RunResult | Plan) -> Findings:
    findings = Findings()
    check(subject if isinstance(subject, Plan) else plan(subject), findings)
    return findings


def paths(problems: list[Any]) -> list[str]:
    return [problem.path for problem in problems]


def test_the_minimal_stack_plans_clean(tmp_path: Path) -> None:
    findings = run_checks(plan(run(tmp_path, minimal())))
    assert (findings.errors, findings.warnings) == ([], [])


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_every_check_is_silent_on_the_project_stacks(check: Check, stack: str) -> None:
    findings = only(check, planned(stack))
    assert (findings.errors, findings.warnings) == ([], [])


# --------------------------------------------------------------------------------------------
# Capacity: quotas against pools, pods against nodes
# --------------------------------------------------------------------------------------------


def test_team_quotas_above_the_pool_at_max_size(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3  # the pool holds 2 nodes x 1 GPU
    findings = only(check_pool_capacity, run(tmp_path, document))
    assert paths(findings.errors) == ["cluster.gpuPools[0].maxCount"]
    message = findings.errors[0].message
    assert "gpu 3 GPUs > 2 GPUs (team-a 3 GPUs)" in message
    assert "raise maxCount to 3" in message and "scheduling.allowOvercommit: true" in message
    assert findings.warnings == []
    # cpu and memory derived from the GPUs are over too: still one line for the pool
    assert "cpu 70.98 CPU > 47.32 CPU" in message

    config(document)[P + "scheduling"]["allowOvercommit"] = True
    allowed = only(check_pool_capacity, run(tmp_path, document))
    assert allowed.errors == []
    assert paths(allowed.warnings) == ["cluster.gpuPools[0].maxCount"]


def test_head_quota_above_the_cpu_pool(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["cpu"] = {"cpu": 16, "memory": "16Gi"}  # 2 x 7820m allocatable
    findings = only(check_pool_capacity, run(tmp_path, document))
    assert paths(findings.errors) == ["cluster.cpuPool.maxCount"]
    assert "cpu 16 CPU > 15.64 CPU" in findings.errors[0].message


def test_a_pod_larger_than_every_node_it_may_get(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"] = [
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}
    ]
    # Quota enough for the pod (so Kueue admits it), nodes too small: 4 vCPU, 28 GiB.
    teams(document)[0]["quota"] = {
        "t4": {"gpu": 2, "cpu": 16, "memory": "128Gi"},
        "cpu": {"cpu": 4, "memory": "16Gi"},
    }
    config(document)[P + "scheduling"]["allowOvercommit"] = True
    findings = only(check_node_fit, run(tmp_path, document))
    assert paths(findings.errors) == ["cluster.gpuPools[0].vmSize"]
    message = findings.errors[0].message
    assert message.startswith("llm-serve's gpu pods request 1 GPU, 8 CPU, 64Gi each, but one ")
    assert "Standard_NC4as_T4_v3 node of pool t4 offers 1 GPU, 3.86 CPU" in message
    assert findings.warnings == []


def test_a_pod_larger_than_one_of_the_flavors_it_may_get_is_a_warning(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"].append(
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}
    )
    teams(document)[0]["quota"]["t4"] = {"gpu": 2, "cpu": 16, "memory": "128Gi"}
    config(document)[P + "scheduling"]["allowOvercommit"] = True
    result = run(tmp_path, document)
    findings = only(check_node_fit, result)
    assert findings.errors == []  # a100 comes first and holds the pod
    assert paths(findings.warnings) == ["cluster.gpuPools[1].vmSize"]
    assert "when a100 is full" in findings.warnings[0].message


# --------------------------------------------------------------------------------------------
# Admission: Kueue gangs, KAI quota
# --------------------------------------------------------------------------------------------


def _qwen(document: dict[str, Any], workers: int) -> None:
    config(document)[P + "workloads"]["qwen-lora"] = {
        "enabled": True,
        "team": "team-a",
        "workers": workers,
    }


def test_a_gang_larger_than_quota_plus_borrowable(tmp_path: Path) -> None:
    document = minimal()
    _qwen(document, 3)  # 3 one-GPU workers; team-a has 2 GPUs and no one to borrow from
    findings = only(check_gang_admission, run(tmp_path, document))
    assert paths(findings.errors) == ["workloads.qwen-lora.workers"]
    message = findings.errors[0].message
    assert "its 3 gpu workers need 3 GPUs at once" in message
    assert "(a100: quota 2 GPUs + borrowable 0 GPUs" in message
    assert message.endswith(
        "lower workers to 2 or raise scheduling.departments[0].teams[0].quota.a100.gpu"
    )


def test_qwen_lora_on_h100_needs_more_cpu_than_the_gpu_share(tmp_path: Path) -> None:
    # Standard_ND96isr_H100_v5: 94940m allocatable CPU for 8 GPUs, 11867m per GPU, while
    # LLaMA-Factory's workers ask for 12 CPU each. A team whose H100 quota is exactly the gang
    # (4 GPUs, CPU derived from the GPU share) can never admit it; one node holds 7 of the pods.
    def qwen_on_training(cfg: dict[str, Any]) -> None:
        applied = cfg[P + "scheduling"]["departments"][1]["teams"]
        applied[1]["quota"]["h100"]["gpu"] = 4
        applied[1]["lendingLimit"] = {"h100": {"gpu": 4}}
        cfg[P + "workloads"]["qwen-lora"]["team"] = "training"
        cfg[P + "workloads"]["vllm-batch"]["team"] = "nlp"

    document = stack_document("prod")
    qwen_on_training(document["config"])
    subject = plan(run(tmp_path, document))
    findings = only(check_gang_admission, subject)
    assert paths(findings.errors) == ["scheduling.departments[1].teams[1].quota.h100.cpu"]
    assert "4 gpu workers need 48 CPU at once" in findings.errors[0].message
    assert "at most 47.468 CPU" in findings.errors[0].message
    qwen = next(w for w in subject.workloads if w.spec.name == "qwen-lora")
    assert pods_per_node(qwen.pod_sets[1].pod_set, "Standard_ND96isr_H100_v5") == 7


def _two_teams(document: dict[str, Any], *, lend: int | None) -> None:
    config(document)[P + "cluster"]["gpuPools"][0]["maxCount"] = 4
    team_b: dict[str, Any] = {"name": "team-b", "quota": {"a100": {"gpu": 2}}}
    if lend is not None:
        team_b["lendingLimit"] = {"a100": {"gpu": lend}}
    teams(document).append(team_b)
    _qwen(document, 3)


def test_a_gang_admitted_by_borrowing_from_its_cohort(tmp_path: Path) -> None:
    document = minimal()
    _two_teams(document, lend=None)  # team-b lends its 2 idle GPUs: 2 + 2 >= 3
    result = run(tmp_path, document)
    assert only(check_gang_admission, result).errors == []
    qwen = next(w for w in plan(result).workloads if w.spec.name == "qwen-lora")
    assert qwen.headroom[("a100", "nvidia.com/gpu")] == 4


def test_borrowable_is_what_the_cohort_lends(tmp_path: Path) -> None:
    document = minimal()
    _two_teams(document, lend=0)  # team-b keeps its GPUs
    findings = only(check_gang_admission, run(tmp_path, document))
    assert paths(findings.errors) == ["workloads.qwen-lora.workers"]
    document = minimal()
    _two_teams(document, lend=None)
    teams(document)[0]["borrowingLimit"] = {"a100": {"gpu": 0}}  # team-a may borrow nothing
    findings = only(check_gang_admission, run(tmp_path, document))
    assert paths(findings.errors) == ["workloads.qwen-lora.workers"]


# --------------------------------------------------------------------------------------------
# The endpoint is never evicted (KubeRay 1.7 ignores Kueue's suspend of a running RayService)
# --------------------------------------------------------------------------------------------


def test_an_endpoint_that_may_borrow_is_refused(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["maxCount"] = 4
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": 2}}})
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert paths(findings.errors) == [
        "scheduling.departments[0].teams[0].borrowingLimit.a100",
    ]
    assert "set it to {gpu: 0}" in findings.errors[0].message
    # ... and accepted once it borrows nothing (team-b lends nothing on cpu: no cpu limit due).
    teams(document)[0]["borrowingLimit"] = {"a100": {"gpu": 0}}
    assert only(check_services_never_evicted, run(tmp_path, document)).errors == []


def test_an_endpoint_on_borrowed_cpu_quota_is_refused(tmp_path: Path) -> None:
    document = minimal()
    teams(document).append({"name": "team-b", "quota": {"cpu": {"cpu": 4, "memory": "16Gi"}}})
    config(document)[P + "cluster"]["cpuPool"]["maxCount"] = 3
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert paths(findings.errors) == ["scheduling.departments[0].teams[0].borrowingLimit.cpu"]
    assert "set it to {cpu: 0, memory: 0}" in findings.errors[0].message


def test_an_endpoint_outranked_in_its_team_is_refused(tmp_path: Path) -> None:
    document = minimal()
    workloads = config(document)[P + "workloads"]
    workloads["llm-serve"]["priority"] = "train"
    workloads["qwen-lora"] = {"enabled": True, "team": "team-a", "workers": 1, "priority": "build"}
    config(document)[P + "storage"] = {"enabled": True}
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert findings.errors[0].message.startswith("qwen-lora outranks llm-serve in team team-a")


def test_a_head_without_cpu_quota_is_named_by_the_cpu_quota(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["cpu"] = {"cpu": 1, "memory": "16Gi"}  # a head asks for 2
    findings = only(check_gang_admission, run(tmp_path, document))
    assert paths(findings.errors) == ["scheduling.departments[0].teams[0].quota.cpu.cpu"]
    assert "its head needs 2 CPU at once" in findings.errors[0].message


def test_non_preemptible_work_beyond_the_kai_quota(tmp_path: Path) -> None:
    # team-a owns no GPU: Kueue admits the endpoint by borrowing team-b's idle GPU, but KAI
    # runs an `inference` (125) workload only within team-a's own quota.
    document = minimal()
    teams(document)[0]["quota"]["a100"] = {"gpu": 0}
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": 2}}})
    result = run(tmp_path, document)
    assert only(check_gang_admission, result).errors == []
    findings = only(check_kai_quota, result)
    assert paths(findings.errors) == ["scheduling.departments[0].teams[0].quota.a100.gpu"]
    message = findings.errors[0].message
    assert message.startswith("llm-serve has priority inference (125 >= 100: non-preemptible)")
    assert "gpu 1 > 0" in message
    # the same workload at a preemptible priority may run over quota: no error
    config(document)[P + "workloads"]["llm-serve"]["priority"] = "build-preemptible"
    assert only(check_kai_quota, run(tmp_path, document)).errors == []


def _with_kai_quota(subject: Plan, queue: str, resource: str, quota: int) -> Plan:
    queues = copy.deepcopy(dict(subject.registered.kai_queues))
    queues[queue]["spec"]["resources"][resource]["quota"] = quota
    return dataclasses.replace(
        subject, registered=dataclasses.replace(subject.registered, kai_queues=queues)
    )


def test_non_preemptible_work_beyond_the_department_kai_quota() -> None:
    # The department queue is the sum of its teams' by construction (manifests/kai.py); the
    # check reads the registered queues, so a smaller parent is caught at that level too.
    doctored = _with_kai_quota(plan(planned("dev+run")), "research", "gpu", 0)
    findings = only(check_kai_quota, doctored)
    assert paths(findings.errors) == ["scheduling.departments[0]"]
    assert "its parent KAI queue research" in findings.errors[0].message


def test_kai_children_above_their_parent() -> None:
    subject = plan(planned("prod"))
    assert only(check_kai_hierarchy, subject).errors == []
    doctored = _with_kai_quota(subject, "applied", "gpu", 23)  # serving 16 + training 24
    findings = only(check_kai_hierarchy, doctored)
    assert paths(findings.errors) == ["scheduling.departments[1]"]
    assert "gpu 40 > 23" in findings.errors[0].message
    unlimited_child = _with_kai_quota(subject, "nlp", "cpu", -1)
    assert paths(only(check_kai_hierarchy, unlimited_child).errors) == ["scheduling.departments[0]"]


# --------------------------------------------------------------------------------------------
# Both schedulers' vocabulary, read from the registered objects and releases
# --------------------------------------------------------------------------------------------


def _replaced(
    result: RunResult,
    match: Callable[[RecordedResource], bool],
    edit: Callable[[dict[str, Any]], dict[str, Any]],
) -> RunResult:
    """A copy of a run whose matching resources have edited (deep-copied) inputs."""
    return dataclasses.replace(
        result,
        resources=[
            dataclasses.replace(r, inputs=edit(copy.deepcopy(r.inputs))) if match(r) else r
            for r in result.resources
        ],
    )


def _release(name: str) -> Callable[[RecordedResource], bool]:
    return lambda r: r.type == HELM_RELEASE and r.inputs.get("name") == name


def test_a_priority_class_missing_in_kueue(tmp_path: Path) -> None:
    result = run(tmp_path, minimal())
    without = dataclasses.replace(
        result,
        resources=[
            r
            for r in result.resources
            if not (r.type.endswith(":WorkloadPriorityClass") and r.name.endswith("-inference"))
        ],
    )
    findings = only(check_priority_classes, without)
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert "has no Kueue WorkloadPriorityClass" in findings.errors[0].message


def test_a_priority_class_missing_in_kai(tmp_path: Path) -> None:
    def no_default_classes(inputs: dict[str, Any]) -> dict[str, Any]:
        inputs["values"]["defaultPriorityClasses"]["enabled"] = False
        return inputs

    result = run(tmp_path, minimal())
    doctored = _replaced(result, _release("kai-scheduler"), no_default_classes)
    assert registered(doctored).kai_priority_classes == frozenset()
    findings = only(check_priority_classes, doctored)
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert "has no KAI PriorityClass" in findings.errors[0].message


def test_a_workload_kind_whose_kueue_integration_is_off() -> None:
    def without_rayservice(inputs: dict[str, Any]) -> dict[str, Any]:
        manager = inputs["values"]["managerConfig"]
        config = yaml.safe_load(manager["controllerManagerConfigYaml"])
        config["integrations"]["frameworks"].remove("ray.io/rayservice")
        manager["controllerManagerConfigYaml"] = yaml.safe_dump(config)
        return inputs

    doctored = _replaced(planned("dev+run"), _release("kueue"), without_rayservice)
    assert registered(doctored).kueue_frameworks == ("ray.io/rayjob",)
    findings = only(check_kueue_integrations, doctored)
    assert paths(findings.errors) == ["workloads.llm-serve.enabled"]  # the one RayService
    assert "does not enable ray.io/rayservice" in findings.errors[0].message


def test_without_installed_operators_the_documented_ones_are_assumed() -> None:
    reg = registered(planned("local"))  # operators.install: false
    assert (reg.installed_kueue, reg.installed_kai) == (False, False)
    assert reg.kueue_frameworks == ("ray.io/rayjob", "ray.io/rayservice")
    assert reg.kai_priority_classes == {"train", "build-preemptible", "build", "inference"}
    data = summary(plan(planned("local")), critical_path(planned("local")))
    assert data["schedulers"]["installedByStack"] is False
    # Kueue's WorkloadPriorityClasses are the stack's own even then
    assert reg.kueue_priority_classes == {"train", "build-preemptible", "build", "inference"}


# --------------------------------------------------------------------------------------------
# Warnings
# --------------------------------------------------------------------------------------------


def test_idle_gpu_nodes(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["minCount"] = 1
    findings = only(check_idle_gpus, run(tmp_path, document))
    assert findings.errors == []
    assert paths(findings.warnings) == ["cluster.gpuPools[0].minCount"]
    assert "keeps 1 Standard_NC24ads_A100_v4 node (1 GPU, A100 80GB PCIe)" in (
        findings.warnings[0].message
    )


def test_a_team_without_workloads(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["maxCount"] = 3
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": 1}}})
    findings = only(check_unused_quota, run(tmp_path, document))
    assert paths(findings.warnings) == ["scheduling.departments[0].teams[1].quota"]
    assert findings.warnings[0].message.startswith("team team-b holds quota (a100: 1 GPU, ")


def test_a_flavor_quota_no_pod_of_the_team_fits(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"].append(
        {"name": "spare", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 1}
    )
    # a GPU, but 1 CPU: the endpoint's GPU worker asks for 8
    teams(document)[0]["quota"]["spare"] = {"gpu": 1, "cpu": 1, "memory": "1Gi"}
    findings = only(check_unused_quota, run(tmp_path, document))
    assert paths(findings.warnings) == ["scheduling.departments[0].teams[0].quota.spare"]


# --------------------------------------------------------------------------------------------
# The summary: dev's numbers
# --------------------------------------------------------------------------------------------


def _dev_summary() -> dict[str, Any]:
    result = planned("dev")
    data: dict[str, Any] = summary(plan(result), critical_path(result))
    return data


def test_dev_pools() -> None:
    assert _dev_summary()["pools"] == [
        {
            "pool": "cpu",
            "flavor": "cpu",
            "vmSize": "Standard_D8ds_v6",
            "gpuModel": None,
            "gpusPerNode": 0,
            "minCount": 1,
            "maxCount": 3,
            "spot": False,
            "maxGpus": 0,
            "idleGpuNodes": 0,
            "idleGpus": 0,
            # 8 vCPU - 180m; 32 GiB - (20 MiB x 250 + 50 MiB) - 100 MiB
            "nodeAllocatable": {"gpu": 0, "cpu": "7820m", "memory": "27618Mi"},
        },
        {
            "pool": "a100",
            "flavor": "a100",
            "vmSize": "Standard_NC24ads_A100_v4",
            "gpuModel": "A100 80GB PCIe",
            "gpusPerNode": 1,
            "minCount": 0,
            "maxCount": 5,
            "spot": False,
            "maxGpus": 5,
            "idleGpuNodes": 0,
            "idleGpus": 0,
            # 24 vCPU - 340m; 220 GiB - 5050 MiB - 100 MiB
            "nodeAllocatable": {"gpu": 1, "cpu": "23660m", "memory": "220130Mi"},
        },
    ]


def test_dev_queues() -> None:
    kai_memory_mb = math.ceil((32 * GIB + 5 * 220130 * MIB) / 10**6)
    assert kai_memory_mb == 1188475
    assert _dev_summary()["queues"] == [
        {
            "team": "team-a",
            "department": "research",
            "cohort": "research",
            "namespace": "team-a",
            "localQueue": "team-a",
            "flavors": [
                {
                    "flavor": "cpu",
                    "nominal": {"cpu": "8", "memory": "32Gi", "gpu": 0},
                    "borrowingLimit": {"gpu": 0},  # the CPU flavor never borrows GPUs
                    "lendingLimit": None,
                },
                {
                    "flavor": "a100",
                    "nominal": {"cpu": "118300m", "memory": "1100650Mi", "gpu": 5},
                    "borrowingLimit": None,
                    "lendingLimit": None,
                },
            ],
            "kai": {
                "queue": "team-a",
                "parent": "research",
                "quota": {"cpu": 8000 + 5 * 23660, "gpu": 5, "memory": kai_memory_mb},
                "limit": {"cpu": -1, "gpu": -1, "memory": -1},
                "overQuotaWeight": 1,
            },
        }
    ]


def test_dev_workloads() -> None:
    head = {
        "name": "head",
        "count": 1,
        "requests": {"gpu": 0, "cpu": "2", "memory": "8Gi"},
        "nodeSelector": {"kubernetes.azure.com/agentpool": "cpu"},
        "flavor": "cpu",
        "mayUse": ["cpu"],
        "vmSize": "Standard_D8ds_v6",
        "podsPerNode": {"cpu": 3},  # 7820m / 2000m and 27618Mi / 8Gi
        "fitsNode": True,
    }

    def gpu(count: int, cpu: str, memory: str) -> dict[str, Any]:
        return {
            "name": "gpu",
            "count": count,
            "requests": {"gpu": 1, "cpu": cpu, "memory": memory},
            "nodeSelector": {},
            "flavor": "a100",
            "mayUse": ["a100"],
            "vmSize": "Standard_NC24ads_A100_v4",
            "podsPerNode": {"a100": 1},
            "fitsNode": True,
        }

    def workload(name: str, kind: str, priority: str, value: int, workers: int) -> dict[str, Any]:
        return {
            "workload": name,
            "team": "team-a",
            "kind": kind,
            "priority": priority,
            "priorityValue": value,
            "nonPreemptible": value >= 100,
            "gangPods": 1 + workers,
            "gangGpus": workers,
            # dev stages its jobs (no `run` yet); the endpoint is deployed.
            "status": "staged" if kind == "RayJob" else "deployed",
            "admissible": True,
            "podSets": [
                head,
                gpu(workers, "12", "96Gi") if name == "qwen-lora" else gpu(1, "8", "64Gi"),
            ],
        }

    # dev ships its endpoint off: only the three (staged) jobs are planned.
    assert _dev_summary()["workloads"] == [
        workload("aurora-finetune", "RayJob", "train", 50, 1),
        workload("qwen-lora", "RayJob", "train", 50, 4),
        workload("vllm-batch", "RayJob", "train", 50, 1),
    ]


def test_summary_text_shows_the_same_numbers() -> None:
    text = "\n".join(summary_lines(_dev_summary()))
    assert "a100  Standard_NC24ads_A100_v4  A100 80GB PCIe  1          0..5   no    5" in text
    assert "team-a  research  a100    5            118300m      1100650Mi" in text
    assert "team-a  research  5 / 126300 / 1188475  -1 / -1 / -1  1" in text
    assert "qwen-lora        staged  team-a  RayJob  train 50  5 / 4" in text
    assert "gpu      4     gpu 1, cpu 12, memory 96Gi  a100    yes (1 per Standard_NC24ads" in text


# --------------------------------------------------------------------------------------------
# The deploy critical path
# --------------------------------------------------------------------------------------------


def test_dev_critical_path() -> None:
    result = planned("dev")
    path = critical_path(result)
    assert path.names == [
        "aksray-cluster-rg",
        "aksray-cluster-aks",
        "aksray-cluster-pool-cpu",  # the Kubernetes provider waits for the CPU pool
        "aksray-cluster-k8s",
        "aksray-operators-kuberay-operator-namespace",
        "aksray-operators-kuberay-operator",
        "aksray-operators-kueue",  # Kueue's release waits for KubeRay's CRDs
        "aksray-queues-flavor-cpu",
        "aksray-queues-cq-team-a",
        "aksray-queues-lq-team-a",  # dev's jobs are staged and its endpoint off: no Ray object
    ]
    assert path.estimated_seconds == 5 + 480 + 240 + 1 + 2 + 120 + 120 + 3 * 2
    types = {r.type for r in path.resources}
    assert "azure-native:containerservice:ManagedCluster" in types
    assert "kubernetes:helm.sh/v3:Release" in types
    assert not any(
        t.startswith(("azure-native:storage:", "azure-native:managedidentity:")) for t in types
    )
    assert not any("-storage-" in name for name in path.names)


def test_prod_critical_path_is_the_serial_node_pools() -> None:
    # AKS changes one agent pool at a time: the pools are chained, and three GPU pools take
    # longer than the operators and queues after the CPU pool.
    assert critical_path(planned("prod")).names == [
        "aksray-cluster-rg",
        "aksray-cluster-aks",
        "aksray-cluster-pool-cpu",
        "aksray-cluster-pool-a100",
        "aksray-cluster-pool-h100",
        "aksray-cluster-pool-a100spot",
    ]


def _resource(name: str, *, depends_on: tuple[str, ...] = (), **fields: Any) -> RecordedResource:
    values: dict[str, Any] = {
        "urn": f"urn:{name}",
        "type": "kubernetes:core/v1:ConfigMap",
        "name": name,
        "custom": True,
        "parent": None,
        "inputs": {},
        "depends_on": depends_on,
        "property_dependencies": {},
        "provider": None,
        "protect": False,
        "retain_on_delete": False,
        "delete_before_replace": False,
        "ignore_changes": (),
        "replace_on_changes": (),
        "remote": False,
    }
    values.update(fields)
    return RecordedResource(**values)


def test_edges_are_dependencies_providers_and_custom_parents_only() -> None:
    resources = [
        _resource("component", custom=False),
        _resource("provider", type="pulumi:providers:kubernetes"),
        _resource("a", provider="urn:provider::id-1", parent="urn:component"),
        _resource("b", depends_on=("urn:a", "urn:component"), parent="urn:a"),
    ]
    assert waits_for(resources) == {
        "urn:provider": (),
        "urn:a": ("urn:provider",),  # its component parent adds nothing
        "urn:b": ("urn:a",),
    }


def test_longest_chain_by_weight_and_cycles() -> None:
    edges = {"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")}
    assert longest_chain(edges, {"a": 1, "b": 5, "c": 2, "d": 1}) == (["a", "b", "d"], 7)
    assert longest_chain({}, {}) == ([], 0)
    with pytest.raises(ValueError, match="cycle"):
        longest_chain({"a": ("b",), "b": ("a",)}, {"a": 1, "b": 1})


def test_estimates_live_in_one_table() -> None:
    assert estimated_seconds("azure-native:containerservice:ManagedCluster") == 480
    assert estimated_seconds("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue") == 2
    assert estimated_seconds("pulumi:providers:kubernetes") == 1
    assert all(seconds >= 0 for seconds in ESTIMATED_SECONDS.values())


# --------------------------------------------------------------------------------------------
# Paths are the settings' own
# --------------------------------------------------------------------------------------------


def test_team_and_pool_paths_are_the_ones_settings_reports() -> None:
    document = stack_document("prod")
    raw = {key.removeprefix(P): value for key, value in document["config"].items()}
    raw["scheduling"]["departments"][1]["teams"][1]["quota"]["h100"]["gpu"] = -1
    raw["cluster"]["gpuPools"][2]["maxCount"] = 0
    with pytest.raises(SettingsError) as error:
        parse_settings(raw, stack="prod")
    reported = {problem.path for problem in error.value.problems}
    settings = planned("prod").settings
    assert f"{settings.scheduling.team_path('training')}.quota.h100.gpu" in reported
    assert f"{settings.cluster.pool_path('a100spot')}.maxCount" in reported
    assert settings.cluster.pool_path("cpu") == "cluster.cpuPool"
    assert settings.scheduling.department_path("applied") == "scheduling.departments[1]"


# --------------------------------------------------------------------------------------------
# The CLI
# --------------------------------------------------------------------------------------------


def test_plan_prints_the_summary_and_the_checks() -> None:
    run = cli("plan", "--stack", "dev")
    assert run.code == 0 and run.stderr == ""
    for heading in ("Pools (", "Queues (", "KAI queues", "Workloads (", "Deploy critical path ("):
        assert heading in run.stdout
    assert "aksray-cluster-rg → aksray-cluster-aks → aksray-cluster-pool-cpu" in run.stdout
    assert run.stdout.rstrip().endswith("Checks: 0 errors, 0 warnings")


def test_a_failed_check_exits_one_with_one_line(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 1
    assert "Traceback" not in run.output
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith("error: cluster.gpuPools[0].maxCount: the team quotas")
    assert "Checks: 1 error, 0 warnings" in run.stdout


def test_warnings_do_not_fail(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["minCount"] = 1
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 0
    assert run.stderr.splitlines() == [
        line for line in run.stderr.splitlines() if line.startswith("warning: ")
    ]
    assert run.stderr.startswith("warning: cluster.gpuPools[0].minCount: pool a100 keeps 1 ")


def test_json_carries_the_summary_and_the_checks(tmp_path: Path) -> None:
    run = cli("plan", "--stack", "dev", "--json")
    assert run.code == 0
    document = json.loads(run.stdout)
    assert document["summary"] == json.loads(json.dumps(_dev_summary()))
    assert document["checks"] == {"errors": [], "warnings": []}
    assert document["summary"]["criticalPath"]["estimatedSeconds"] == 974

    bad = minimal()
    teams(bad)[0]["quota"]["a100"]["gpu"] = 3
    failed = cli("plan", "--config", write_stack(tmp_path, bad), "--json")
    assert failed.code == 1
    assert [e["path"] for e in json.loads(failed.stdout)["checks"]["errors"]] == [
        "cluster.gpuPools[0].maxCount"
    ]
    assert len(failed.error_lines) == 1


# --------------------------------------------------------------------------------------------
# Scale: the benchmark's generated stacks plan clean, and grow linearly
# --------------------------------------------------------------------------------------------


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_plan", PROJECT_ROOT / "scripts" / "bench_plan.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_stacks_plan_without_errors_and_grow_linearly(tmp_path: Path) -> None:
    bench = _bench()
    counts = {}
    for size in (1, 12):
        result = run(tmp_path, bench.generate_stack(size))
        findings = run_checks(plan(result))
        assert findings.errors == []
        # every team but the four that run the workloads holds quota nobody in the stack uses
        assert len(findings.warnings) == max(0, size - 4)
        counts[size] = len(result.resources)
    # per team: namespace, service account, ClusterQueue, LocalQueue, KAI leaf queue, identity,
    # federated credential, role assignment; per department: a cohort and a KAI parent queue
    assert counts[12] - counts[1] == 11 * 8 + 2
