"""`aksray plan`'s checks: each fires once, naming the config path, on a minimal stack that
violates it, and is silent on the project stacks; generated stacks plan clean and grow
linearly."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.checks import CHECKS, run_checks
from aksray.checks.capacity import check_gang_fits_pool, check_node_fit, check_pool_capacity
from aksray.checks.findings import Findings
from aksray.checks.gangs import check_gang_admission
from aksray.checks.kai import (
    check_kai_never_evicts,
    check_kai_queues_unlimited,
    check_over_quota_weight,
)
from aksray.checks.schedulers import check_kueue_integrations, check_priority_classes
from aksray.checks.services import check_services_never_evicted
from aksray.checks.waste import check_idle_gpus, check_unused_quota
from aksray.graph import (
    critical_path,
)
from aksray.model import HELM_RELEASE, Plan, plan, pods_per_node, registered
from aksray.report import kai_queues_table, summary
from aksray.runner import RecordedResource, RunResult
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import STACKS, P, planned, stack_document
from tests.support.minimal_stack import config, minimal, run, teams
from tests.support.scripts import load_script

Check = Callable[[Plan, Findings], None]


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


def test_qwen_lora_on_h100_runs_on_its_teams_gpu_share(tmp_path: Path) -> None:
    # Standard_ND96isr_H100_v5: 94940m allocatable CPU for 8 GPUs, 11867m per GPU. qwen-lora's
    # workers ask 11 CPU per GPU (their minimum), so a team whose H100 quota is exactly the gang
    # (4 GPUs, CPU and memory derived from the GPU share) admits it, and one node holds all 8.
    def qwen_on_training(cfg: dict[str, Any]) -> None:
        applied = cfg[P + "scheduling"]["departments"][1]["teams"]
        applied[1]["quota"]["h100"]["gpu"] = 4
        applied[1]["lendingLimit"] = {"h100": {"gpu": 4}}
        cfg[P + "workloads"]["qwen-lora"]["team"] = "training"
        cfg[P + "workloads"]["vllm-batch"]["team"] = "nlp"

    document = stack_document("prod")
    qwen_on_training(document["config"])
    subject = plan(run(tmp_path, document))
    assert only(check_gang_admission, subject).errors == []
    qwen = next(w for w in subject.workloads if w.spec.name == "qwen-lora")
    assert pods_per_node(qwen.pod_sets[1].pod_set, "Standard_ND96isr_H100_v5") == 8
    assert (
        qwen.headroom[("h100", "cpu")] >= qwen.total("cpu") - qwen.pod_sets[0].pod_set.total["cpu"]
    )


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


# --------------------------------------------------------------------------------------------
# One scheduling authority: Kueue admits and evicts, KAI only places
# --------------------------------------------------------------------------------------------


def test_work_kueue_admits_on_borrowed_quota_is_never_held_back_by_kai(tmp_path: Path) -> None:
    # team-a owns no GPU: Kueue admits a `build` (100) job by borrowing team-b's idle GPU. KAI
    # once ran priority >= 100 only within its own queue's quota (a second gate that left the
    # admitted gang Pending); with unlimited KAI queues nothing of that is left to check.
    document = minimal()
    teams(document)[0]["quota"]["a100"] = {"gpu": 0}
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": 2}}})
    workloads = config(document)[P + "workloads"]
    workloads["llm-serve"] = {"enabled": False}
    workloads["qwen-lora"] = {"enabled": True, "team": "team-a", "workers": 1, "priority": "build"}
    config(document)[P + "storage"] = {"enabled": True}
    subject = plan(run(tmp_path, document))
    qwen = next(w for w in subject.workloads if w.spec.name == "qwen-lora")
    assert qwen.inadmissible is None and qwen.headroom[("a100", "nvidia.com/gpu")] == 2
    leaf = subject.registered.kai_queues["team-a"]["spec"]["resources"]["gpu"]
    assert (leaf["quota"], leaf["limit"]) == (-1, -1)
    findings = run_checks(subject)
    assert (findings.errors, paths(findings.warnings)) == (
        [],
        ["scheduling.departments[0].teams[1].quota"],  # team-b runs nothing: unused quota
    )


def _with_kai_queue(subject: Plan, queue: str, resource: str, key: str, value: int | None) -> Plan:
    queues = copy.deepcopy(dict(subject.registered.kai_queues))
    amounts = queues[queue]["spec"]["resources"][resource]
    if value is None:
        del amounts[key]
    else:
        amounts[key] = value
    return dataclasses.replace(
        subject, registered=dataclasses.replace(subject.registered, kai_queues=queues)
    )


def test_a_kai_queue_with_a_quota_or_limit_of_its_own() -> None:
    # No stack file can give a KAI queue a quota (manifests/kai.py writes -1 everywhere); the
    # check guards the builder, on the registered queues.
    subject = plan(planned("prod"))
    assert only(check_kai_queues_unlimited, subject).errors == []
    team_quota = only(
        check_kai_queues_unlimited, _with_kai_queue(subject, "nlp", "gpu", "quota", 12)
    )
    assert paths(team_quota.errors) == ["scheduling.departments[0].teams[0]"]
    assert team_quota.errors[0].message.startswith(
        "KAI queue nlp is not unlimited (gpu quota 12): "
    )
    department_limit = _with_kai_queue(subject, "applied", "memory", "limit", 0)
    findings = only(check_kai_queues_unlimited, department_limit)
    assert paths(findings.errors) == ["scheduling.departments[1]"]
    assert "(memory limit 0)" in findings.errors[0].message
    without_limit = _with_kai_queue(subject, "serving", "cpu", "limit", None)
    no_limit = only(check_kai_queues_unlimited, without_limit)
    assert paths(no_limit.errors) == ["scheduling.departments[1].teams[0]"]
    assert "(cpu limit missing)" in no_limit.errors[0].message
    assert "a limit left out counts as 0" in no_limit.errors[0].message
    # the summary still shows such a queue, the missing amount as -
    data = summary(without_limit, critical_path(planned("prod")))
    serving = next(row for row in data["kaiQueues"] if row["queue"] == "serving")
    assert serving["limit"] == {"cpu": None, "gpu": -1, "memory": -1}
    table = kai_queues_table(data["kaiQueues"], data["schedulers"]["kaiActions"])
    assert "  serving   applied   unlimited  -1 / - / -1" in table


def _kai_actions(
    edit: Callable[[dict[str, Any]], None],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def on_values(inputs: dict[str, Any]) -> dict[str, Any]:
        edit(inputs["values"])
        return inputs

    return on_values


def _kai_release(result: RunResult, edit: Callable[[dict[str, Any]], None]) -> RunResult:
    return _replaced(result, _release("kai-scheduler"), _kai_actions(edit))


def test_a_kai_release_that_keeps_an_eviction_action(tmp_path: Path) -> None:
    result = run(tmp_path, minimal())
    assert registered(result).kai_actions == ("allocate",)
    kept = _kai_release(result, lambda v: v["scheduler"]["actions"].pop("preempt"))
    assert registered(kept).kai_actions == ("allocate", "preempt")
    findings = only(check_kai_never_evicts, kept)
    assert (paths(findings.errors), findings.warnings) == (["operators"], [])
    message = findings.errors[0].message
    assert message.startswith("the KAI release's scheduler runs preempt, which evicts running ")
    assert message.endswith(
        "set scheduler.actions.consolidation.enabled: false, "
        "scheduler.actions.reclaim.enabled: false, scheduler.actions.preempt.enabled: false, "
        "scheduler.actions.stalegangeviction.enabled: false in its values"
    )


def test_a_misspelt_kai_action_leaves_the_real_one_on(tmp_path: Path) -> None:
    def misspelt(values: dict[str, Any]) -> None:
        actions = values["scheduler"]["actions"]
        actions["stalegangevictions"] = actions.pop("stalegangeviction")

    doctored = _kai_release(run(tmp_path, minimal()), misspelt)
    assert registered(doctored).kai_actions == ("allocate", "stalegangeviction")
    assert registered(doctored).kai_unknown_actions == ("stalegangevictions",)
    findings = only(check_kai_never_evicts, doctored)
    assert paths(findings.errors) == ["operators"]
    assert "scheduler.actions names stalegangevictions, no KAI action: a misspelt name" in (
        findings.errors[0].message
    )


def test_without_allocate_kai_runs_every_action(tmp_path: Path) -> None:
    # An empty action list makes KAI's scheduler fall back to all five.
    def no_allocate(values: dict[str, Any]) -> None:
        values["scheduler"]["actions"]["allocate"] = {"enabled": False}

    doctored = _kai_release(run(tmp_path, minimal()), no_allocate)
    assert registered(doctored).kai_actions == (
        "allocate",
        "consolidation",
        "reclaim",
        "preempt",
        "stalegangeviction",
    )
    findings = only(check_kai_never_evicts, doctored)
    assert paths(findings.errors) == ["operators"]
    assert "runs consolidation, reclaim, preempt, stalegangeviction, which evict " in (
        findings.errors[0].message
    )


def test_a_kai_release_without_its_default_shard(tmp_path: Path) -> None:
    doctored = _kai_release(
        run(tmp_path, minimal()), lambda v: v["defaultShard"].update(enabled=False)
    )
    assert registered(doctored).kai_actions is None
    findings = only(check_kai_never_evicts, doctored)
    assert paths(findings.errors) == ["operators"]
    assert "renders no default SchedulingShard" in findings.errors[0].message


def test_an_existing_clusters_kai_actions_are_declared_or_warned_about(tmp_path: Path) -> None:
    document = minimal()
    # An existing cluster runs its own operators (a new AKS cluster has none: refused).
    config(document)[P + "cluster"].update(mode="existing", kubeconfigContext="kind-dev")
    config(document)[P + "storage"] = {"enabled": False}
    config(document)[P + "operators"] = {"install": False}
    findings = only(check_kai_never_evicts, run(tmp_path, document))
    assert (findings.errors, paths(findings.warnings)) == ([], ["operators.kaiActions"])
    message = findings.warnings[0].message
    assert message.startswith("the stack does not install KAI (operators.install: false), so it")
    assert message.endswith(
        "(its scheduler then runs allocate alone) and declare operators.kaiActions: [allocate]"
    )

    config(document)[P + "operators"]["kaiActions"] = ["allocate"]
    declared = only(check_kai_never_evicts, run(tmp_path, document))
    assert (declared.errors, declared.warnings) == ([], [])

    config(document)[P + "operators"]["kaiActions"] = ["allocate", "reclaim"]
    evicting = only(check_kai_never_evicts, run(tmp_path, document))
    assert (paths(evicting.errors), evicting.warnings) == (["operators.kaiActions"], [])
    assert evicting.errors[0].message.startswith(
        "the cluster's KAI scheduler, as operators.kaiActions declares it, runs reclaim, "
    )
    assert evicting.errors[0].message.endswith("then declare operators.kaiActions: [allocate]")


def test_an_over_quota_weight_has_no_effect(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["overQuotaWeight"] = 3
    result = run(tmp_path, document)
    # KAI still gets the weight (its dashboards show it); it divides nothing.
    assert registered(result).kai_queues["team-a"]["spec"]["resources"]["gpu"] == {
        "quota": -1,
        "limit": -1,
        "overQuotaWeight": 3,
    }
    findings = only(check_over_quota_weight, result)
    assert (findings.errors, paths(findings.warnings)) == (
        [],
        ["scheduling.departments[0].teams[0].overQuotaWeight"],
    )
    assert findings.warnings[0].message.startswith(
        "team team-a's overQuotaWeight 3 has no effect: every KAI queue is unlimited"
    )


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
    assert findings.errors[0].message.startswith(
        "priority 'inference' has no KAI PriorityClass: KAI would place it as train, out of "
        "Kueue's order; both schedulers need the class"
    )


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
# Scale: the benchmark's generated stacks plan clean, and grow linearly
# --------------------------------------------------------------------------------------------


def _bench() -> Any:
    return load_script("bench_plan")


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


def test_a_gang_larger_than_its_pool_at_max_size_even_with_overcommit(tmp_path: Path) -> None:
    # Overcommit lets the teams' quota exceed the pool (jobs wait for nodes); it can never let a
    # gang of 3 one-GPU workers run on a pool of at most 2 one-GPU nodes.
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    config(document)[P + "scheduling"]["allowOvercommit"] = True
    _qwen(document, 3)
    result = run(tmp_path, document)
    assert only(check_gang_admission, result).errors == []  # the quota admits it
    findings = only(check_gang_fits_pool, result)
    assert paths(findings.errors) == ["cluster.gpuPools[0].maxCount"]
    message = findings.errors[0].message
    assert message.startswith(
        "qwen-lora can never run: its gang is all-or-nothing and its 3 gpu workers need "
        "3 nodes of pool a100 at once (1 per Standard_NC24ads_A100_v4 node), but the pool has "
        "at most 2 (maxCount)"
    )
    assert "scheduling.allowOvercommit only lets quota exceed the pool" in message
    assert message.endswith("raise maxCount to 3 or lower workers to 2")

    _qwen(document, 2)
    assert only(check_gang_fits_pool, run(tmp_path, document)).errors == []
