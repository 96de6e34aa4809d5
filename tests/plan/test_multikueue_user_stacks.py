"""MultiKueue stack files as users write them, beyond the example: each either plans or is
refused with one clear line at the path that is wrong (never a crash, never advice that
contradicts the manager holding no quota of its own)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.support.harness import P, cli, plan_findings, stack_document, write_stack

Config = dict[str, Any]


def _document() -> dict[str, Any]:
    return stack_document("multiregion")


def _workers(config: Config) -> list[Config]:
    workers: list[Config] = config[P + "multikueue"]["workers"]
    return workers


def _not_about_regions(lines: list[str]) -> list[str]:
    """Warnings left once the region table's 'cannot tell' ones (non-US workers) are out."""
    return [line for line in lines if "cannot tell whether" not in line]


def test_a_worker_whose_teams_run_no_workload_plans(tmp_path: Path) -> None:
    document = _document()
    config = document["config"]
    config[P + "scheduling"]["departments"][0]["teams"].append({"name": "team-b"})
    idle = copy.deepcopy(_workers(config)[1])
    idle.update(name="idle", location="westus3", quota={"team-b": {"a100": {"gpu": 4}}})
    _workers(config).append(idle)
    code, errors, _ = plan_findings(tmp_path, document)
    assert (code, errors) == (0, [])


def test_fifty_workers_plan(tmp_path: Path) -> None:
    """Without Blob (50 clusters are far over Azure's 20 federated credentials per identity)
    and with no workload enabled yet: the fleet itself plans."""
    document = _document()
    config = document["config"]
    template = _workers(config)[0]
    config[P + "multikueue"]["workers"] = [
        {**copy.deepcopy(template), "name": f"w{i}"} for i in range(50)
    ]
    del config[P + "multikueue"]["regional"]
    config[P + "storage"] = {"enabled": False}
    config[P + "workloads"] = {}
    code, errors, _ = plan_findings(tmp_path, document)
    assert (code, errors) == (0, [])


def test_a_cpu_only_worker_beside_a_gpu_worker_plans(tmp_path: Path) -> None:
    """One worker that can admit a job is enough (docs/multikueue.md): the GPU jobs the
    CPU-only worker can never admit are dispatched to the other."""
    document = _document()
    cpu_only = _workers(document["config"])[1]
    cpu_only["cluster"]["gpuPools"] = []
    cpu_only["quota"] = {"team-a": {"cpu": {"cpu": 10, "memory": "40Gi"}}}
    code, errors, _ = plan_findings(tmp_path, document)
    assert (code, errors) == (0, [])


def test_unlimited_in_a_worker_quota_is_that_worker_pool_and_sums_on_the_manager(
    tmp_path: Path,
) -> None:
    document = _document()
    _workers(document["config"])[1]["quota"]["team-a"]["a100"] = {"gpu": "unlimited"}
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 0, run.output
    lines = run.stdout.splitlines()
    start = lines.index("GPU quota per team (the manager's is the sum of the workers'):")
    # sce's pool a100 holds at most 4 nodes of 1 GPU: unlimited there is 4.
    assert lines[start + 2].split() == ["team-a", "a100", "4", "4", "8"]


def test_render_yaml_inside_a_worker_is_refused_at_its_path(tmp_path: Path) -> None:
    document = _document()
    _workers(document["config"])[1]["cluster"]["renderYamlTo"] = "out/sce"
    code, errors, _ = plan_findings(tmp_path, document)
    assert code == 1
    assert [e.split(": ", 2)[1] for e in errors] == [
        "multikueue.workers[1].cluster.renderYamlTo"
    ], errors
    assert "the manager reads a token back from each worker" in errors[0]


def test_a_cpu_per_gpu_no_worker_can_hold_is_one_line_at_cpu_per_gpu(tmp_path: Path) -> None:
    document = _document()
    document["config"][P + "workloads"]["aurora-finetune"]["cpuPerGpu"] = 64
    code, errors, _ = plan_findings(tmp_path, document)
    assert code == 1
    about = [e for e in errors if "aurora-finetune" in e]
    assert len(about) == 1, errors
    assert about[0].startswith(
        "error: workloads.aurora-finetune.cpuPerGpu: no worker can ever admit it"
    ), about
    assert "weu and sce: aurora-finetune asks 64 CPU per GPU" in about[0]


def test_a_borrowing_limit_on_a_manager_team_is_one_line_at_that_key(tmp_path: Path) -> None:
    document = _document()
    team = document["config"][P + "scheduling"]["departments"][0]["teams"][0]
    team["borrowingLimit"] = {"cpu": {"cpu": 4}}
    code, errors, _ = plan_findings(tmp_path, document)
    assert code == 1
    assert len(errors) == 1, errors
    assert errors[0].startswith("error: scheduling.departments[0].teams[0].borrowingLimit: ")
    assert "add quota" not in errors[0]
    assert "the manager holds no quota of its own" in errors[0]


def test_the_example_plans_without_new_warnings(tmp_path: Path) -> None:
    code, errors, warnings = plan_findings(tmp_path, _document())
    assert (code, errors, _not_about_regions(warnings)) == (0, [], [])
