"""`aksray plan`'s checks: each fires once, naming the config path, on a minimal stack that
violates it, and is silent on the project stacks; generated stacks plan clean and grow
linearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.plan.checks.capacity import check_gang_fits_pool, check_node_fit, check_pool_capacity
from aksray.plan.checks.gangs import check_gang_admission
from aksray.plan.checks.run import CHECKS, run_checks
from aksray.plan.checks.waste import check_idle_gpus, check_unused_quota
from aksray.plan.model.plan import plan
from catalog.azure import MAX_POOL_NODES
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.checks import Check, only, paths, qwen_lora
from tests.support.harness import STACKS, P, planned, stack_document
from tests.support.minimal_stack import config, minimal, run, teams
from tests.support.scripts import load_script


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
    assert "cpu 69.705 CPU > 46.47 CPU" in message  # 3 and 2 x (23660m - 425m)

    config(document)[P + "scheduling"]["allowOvercommit"] = True
    allowed = only(check_pool_capacity, run(tmp_path, document))
    assert allowed.errors == []
    assert paths(allowed.warnings) == ["cluster.gpuPools[0].maxCount"]


def test_a_quota_no_pool_size_can_hold_is_not_fixed_by_maxcount(tmp_path: Path) -> None:
    """A sum above what any pool may hold (AKS: 1000 nodes) is not told to raise maxCount past
    what the next run refuses: the message says no maxCount holds it."""
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = MAX_POOL_NODES + 1  # one GPU a node
    findings = only(check_pool_capacity, run(tmp_path, document))
    (message,) = [e.message for e in findings.errors]
    assert "raise maxCount" not in message
    assert message.endswith(
        f"no maxCount holds it (a pool has at most {MAX_POOL_NODES} nodes, it needs "
        f"{MAX_POOL_NODES + 1}): lower the teams' quota.a100, move some of it to another pool, "
        "or set scheduling.allowOvercommit: true"
    )


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
    assert "Standard_NC4as_T4_v3 node of pool t4 offers 1 GPU, 3.435 CPU" in message
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
    return load_script("bench_stack")


def test_generated_stacks_plan_without_errors_and_grow_linearly(tmp_path: Path) -> None:
    bench = _bench()
    counts = {}
    for size in (1, 12):
        result = run(tmp_path, bench.generate_stack(size))
        findings = run_checks(plan(result))
        assert findings.errors == []
        # every team but the four that run the workloads holds quota nobody in the stack uses;
        # past 10 GPU nodes (a node of each of two pools per team), Docker Hub's pull limit
        image_pulls = [w for w in findings.warnings if w.path == "cluster.imageCache.enabled"]
        assert len(image_pulls) == (1 if 2 * size > 10 else 0)
        assert len(findings.warnings) == max(0, size - 4) + len(image_pulls)
        counts[size] = len(result.resources)
    # per team: namespace, service account, ClusterQueue, LocalQueue, KAI leaf queue, identity,
    # federated credential, its own Blob container, its one Blob role assignment (whose
    # condition also names the adapter another team reads), its members' RoleBinding and their
    # group's kubeconfig role; per department: a cohort and a KAI parent queue
    assert counts[12] - counts[1] == 11 * 11 + 2


def test_a_gang_larger_than_its_pool_at_max_size_even_with_overcommit(tmp_path: Path) -> None:
    # Overcommit lets the teams' quota exceed the pool (jobs wait for nodes); it can never let a
    # gang of 3 one-GPU workers run on a pool of at most 2 one-GPU nodes.
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    config(document)[P + "scheduling"]["allowOvercommit"] = True
    qwen_lora(document, 3)
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

    qwen_lora(document, 2)
    assert only(check_gang_fits_pool, run(tmp_path, document)).errors == []


def test_a_gang_no_pool_size_can_hold_is_not_fixed_by_maxcount(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = MAX_POOL_NODES + 1
    config(document)[P + "scheduling"]["allowOvercommit"] = True
    qwen_lora(document, MAX_POOL_NODES + 1)
    findings = only(check_gang_fits_pool, run(tmp_path, document))
    (message,) = [e.message for e in findings.errors]
    assert message.endswith(
        f"no pool holds {MAX_POOL_NODES + 1} nodes (at most {MAX_POOL_NODES}): lower workers to "
        f"{MAX_POOL_NODES} with maxCount {MAX_POOL_NODES}, or use a VM size with more GPUs per node"
    )
