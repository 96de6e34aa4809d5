"""`aksray plan`'s gang admission: a gang fits its team's quota plus what its cohort lends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aksray.plan.checks.gangs import check_gang_admission
from aksray.plan.model.plan import plan, pods_per_node
from tests.support.checks import only, paths, qwen_lora
from tests.support.harness import P, stack_document
from tests.support.minimal_stack import config, minimal, run, teams


def test_a_gang_larger_than_quota_plus_borrowable(tmp_path: Path) -> None:
    document = minimal()
    qwen_lora(document, 3)  # 3 one-GPU workers; team-a has 2 GPUs and no one to borrow from
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
    qwen_lora(document, 3)


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
