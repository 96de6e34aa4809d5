"""`aksray plan` of a stack with `multikueue`: clusters, regions, quota per team per worker and
the manager's sum, where workloads run; errors for what no worker can ever run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import run_program, stack_file
from aksray.plan.checks.multikueue import federated_credentials
from catalog.prices import HOURS_PER_MONTH, USD_PER_HOUR
from tests.support.harness import P, cli, stack_document, write_stack


def _document() -> dict[str, Any]:
    return stack_document("multiregion")


def test_the_example_stack_plans_clean_and_shows_where_quota_lies() -> None:
    run = cli("plan", "--stack", "multiregion")
    assert run.code == 0, run.output
    assert run.error_lines == []
    lines = run.stdout.splitlines()
    start = lines.index("GPU quota per team (the manager's is the sum of the workers'):")
    assert [line.split() for line in lines[start + 1 : start + 4]] == [
        ["team", "flavor", "weu", "sce", "manager"],
        ["team-a", "a100", "4", "4", "8"],
        ["team-a", "cpu", "0", "0", "0"],
    ]
    assert any(line.split()[:3] == ["weu", "worker", "westeurope"] for line in lines)
    assert any(line.split()[:3] == ["sce", "worker", "swedencentral"] for line in lines)
    assert any(line.split() == ["vllm-batch", "team-a", "regional", "weu"] for line in lines)
    assert any(
        line.split() == ["qwen-lora", "team-a", "multikueue", "weu,", "sce"] for line in lines
    )


def test_markdown_is_the_text_report_fenced_and_the_full_plan_the_same(tmp_path: Path) -> None:
    """No Markdown layout for several clusters yet: a pipeline passing --full-plan still gets
    its file, the same fenced text report (docs/ci.md)."""
    text = cli("plan", "--stack", "multiregion")
    full = tmp_path / "plans" / "full.md"
    run = cli("plan", "--stack", "multiregion", "--format", "markdown", "--full-plan", full)
    assert run.code == 0, run.output
    assert run.stdout == f"```text\n{text.stdout}```\n"
    assert full.read_text(encoding="utf-8") == run.stdout


def test_json_has_gpu_demand_and_cost_per_region() -> None:
    run = cli("plan", "--stack", "multiregion", "--json")
    assert run.code == 0, run.output
    clusters = json.loads(run.stdout)["summary"]["clusters"]
    by_name = {c["cluster"]: c for c in clusters}
    assert by_name["weu"]["region"] == "westeurope"
    assert by_name["weu"]["poolGpus"] == 4
    # weu: qwen-lora 4 + aurora-finetune 1 + model-stage 0 + vllm-batch at its maximum 2.
    assert by_name["weu"]["worstCaseGpus"] == 7
    assert by_name["sce"]["worstCaseGpus"] == 5
    assert by_name["manager"]["poolGpus"] == 0
    # The price table holds East US list prices: the figure says whose they are.
    assert by_name["weu"]["priceRegions"] == ["eastus"]
    assert by_name["weu"]["usdPerMonthAtMost"] == round(
        4 * USD_PER_HOUR["Standard_NC24ads_A100_v4"] * HOURS_PER_MONTH, 2
    )


def test_a_gang_no_worker_can_admit_is_an_error_naming_each_worker(tmp_path: Path) -> None:
    document = _document()
    document["config"][P + "workloads"]["qwen-lora"]["workers"] = 6  # 6 GPUs > 4 in each
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 1, run.output
    refused = [line for line in run.error_lines if line.startswith("error: workloads.qwen-lora: ")]
    assert len(refused) == 1, run.error_lines
    assert "no worker can ever admit it" in refused[0]
    assert "weu: " in refused[0] and "sce: " in refused[0]
    # The fix is named where the stack file has it: the team's quota in each worker.
    assert "raise multikueue.workers[0].quota.team-a.a100.gpu" in refused[0]
    assert "raise multikueue.workers[1].quota.team-a.a100.gpu" in refused[0]
    assert "scheduling.departments" not in refused[0]


def test_a_worker_pool_too_small_for_its_quota_is_reported_at_the_worker(tmp_path: Path) -> None:
    document = _document()
    document["config"][P + "multikueue"]["workers"][0]["cluster"]["gpuPools"][0]["maxCount"] = 3
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 1
    assert any(
        line.startswith("error: multikueue.workers[0].cluster.gpuPools[0].maxCount: in worker weu:")
        for line in run.error_lines
    ), run.error_lines


def test_a_gang_one_worker_can_admit_is_dispatched_there(tmp_path: Path) -> None:
    document = _document()
    workers = document["config"][P + "multikueue"]["workers"]
    workers[1]["cluster"]["gpuPools"][0]["maxCount"] = 6
    workers[1]["quota"]["team-a"]["a100"]["gpu"] = 6
    document["config"][P + "workloads"]["qwen-lora"]["workers"] = 6
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert not [line for line in run.error_lines if "workloads.qwen-lora" in line], run.output


def test_a_team_without_quota_in_any_worker_cannot_dispatch(tmp_path: Path) -> None:
    document = _document()
    teams = document["config"][P + "scheduling"]["departments"][0]["teams"]
    teams.append({"name": "team-b"})
    document["config"][P + "workloads"]["aurora-finetune"]["team"] = "team-b"
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 1
    assert any(
        line.startswith("error: workloads.aurora-finetune: team team-b has quota in no worker")
        for line in run.error_lines
    ), run.output


def test_federated_credentials_are_counted_per_cluster() -> None:
    settings = run_program(stack_file("multiregion"), stack="multiregion").settings
    # weu 2 (ray-workload, ray-elastic-head for vllm-batch); sce 1; the manager none (no team
    # pod runs there).
    assert federated_credentials(settings) == {"team-a": 3}


def test_more_credentials_than_azure_allows_is_an_error(tmp_path: Path) -> None:
    document = _document()
    mk = document["config"][P + "multikueue"]
    template = mk["workers"][1]
    mk["workers"] = [mk["workers"][0]] + [
        {**template, "name": f"w{i}", "location": "swedencentral"} for i in range(19)
    ]  # weu 2 credentials, 19 workers 1 each
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 1
    assert any(
        line.startswith(
            "error: scheduling.departments[0].teams[0]: its Blob identity would "
            "need 21 federated credentials"
        )
        and "Azure allows 20 per identity" in line
        for line in run.error_lines
    ), run.error_lines


def test_the_rehearsal_refuses_a_multikueue_stack_clearly(tmp_path: Path) -> None:
    from aksray.rehearse.run import InvalidConfigError, validate

    config = _document()["config"]
    stack = {key.removeprefix(P): value for key, value in config.items()}
    with pytest.raises(InvalidConfigError) as refused:
        validate(stack, tmp_path, "multiregion")
    assert "one-cluster rehearsal cannot play a MultiKueue manager" in str(refused.value)
    assert "the `multikueue` scenario" in str(refused.value)


def test_render_writes_one_folder_per_cluster(tmp_path: Path) -> None:
    run = cli("render", "--stack", "multiregion", "--out", tmp_path)
    assert run.code == 0, run.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manager", "sce", "weu"]

    def gpus(cluster: str) -> int:
        queue = yaml.safe_load(
            (tmp_path / cluster / "kubernetes" / "clusterqueue-team-a.yaml").read_text()
        )
        a100 = next(f for f in queue["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "a100")
        return int(
            next(r["nominalQuota"] for r in a100["resources"] if r["name"] == "nvidia.com/gpu")
        )

    assert (gpus("manager"), gpus("weu"), gpus("sce")) == (8, 4, 4)
    manager = {p.name for p in (tmp_path / "manager" / "kubernetes").iterdir()}
    assert "multikueuecluster-weu.yaml" in manager
    assert "clusterrole-aksray-multikueue-worker.yaml" not in manager


def test_the_plan_has_a_summary_with_the_whole_stack_s_critical_path() -> None:
    """A multiregion plan summarises like a one-cluster plan: `summary` in JSON (the
    clusters, quotas, placements and the deploy critical path of the one `pulumi up` that
    builds the manager and every worker), and the critical path in the text report."""
    run = cli("plan", "--stack", "multiregion", "--json")
    document = json.loads(run.stdout)
    assert set(document) == {"stack", "resources", "outputs", "warnings", "summary", "checks"}
    summary = document["summary"]
    assert set(summary) == {
        "clusters", "quotas", "workloads", "federatedCredentials", "criticalPath"
    }  # fmt: skip
    path = summary["criticalPath"]
    assert path["resources"][:2] == ["aksray-weu-cluster-rg", "aksray-weu-cluster-aks"]
    assert path["estimatedSeconds"] == sum(s["seconds"] for s in path["steps"])
    text = cli("plan", "--stack", "multiregion").stdout
    assert f"Deploy critical path ({len(path['resources'])} resources, about " in text
