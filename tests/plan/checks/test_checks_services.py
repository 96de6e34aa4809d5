"""`aksray plan`'s endpoint checks: an endpoint is never outranked in its team, and one that may
borrow is warned about what reclaim costs it."""

from __future__ import annotations

from pathlib import Path

from aksray.offline.runner import PROJECT_ROOT
from aksray.plan.checks.gangs import check_gang_admission
from aksray.plan.checks.services import check_services_never_evicted
from tests.support.checks import only, paths
from tests.support.harness import P, cli
from tests.support.minimal_stack import config, minimal, run, teams

# --------------------------------------------------------------------------------------------
# An endpoint on borrowed quota: reclaimed whole (played on the rig with KubeRay 1.6.2: its Ray
# cluster is suspended in place and its GPUs go to the lender; `endpoint-reclaimed`); outranked
# in its own team: refused
# --------------------------------------------------------------------------------------------

RECLAIM_COST = (
    "when a team that lent it needs its quota back, Kueue reclaims by evicting the whole "
    "endpoint, not only what it borrowed (KubeRay 1.6.2 suspends its Ray cluster in place and its "
    "GPUs go to the lender), and it stays down until its team's quota plus what the cohort lends "
    "fits it again"
)


def test_an_endpoint_that_may_borrow_is_warned_with_what_reclaim_costs(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["maxCount"] = 4
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": 2}}})
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert findings.errors == []
    assert paths(findings.warnings) == ["scheduling.departments[0].teams[0].borrowingLimit.a100"]
    assert findings.warnings[0].message == (
        "team team-a runs llm-serve and may borrow cpu/memory/gpu of flavor a100 from its "
        f"cohort: {RECLAIM_COST}; set it to {{gpu: 0}} to keep the endpoint on its own quota"
    )
    # ... and nothing once it borrows nothing (team-b lends nothing on cpu: no cpu limit due).
    teams(document)[0]["borrowingLimit"] = {"a100": {"gpu": 0}}
    assert only(check_services_never_evicted, run(tmp_path, document)).warnings == []


def test_an_endpoint_on_borrowed_cpu_quota_is_warned(tmp_path: Path) -> None:
    document = minimal()
    teams(document).append({"name": "team-b", "quota": {"cpu": {"cpu": 4, "memory": "16Gi"}}})
    config(document)[P + "cluster"]["cpuPool"]["maxCount"] = 3
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert findings.errors == []
    assert paths(findings.warnings) == ["scheduling.departments[0].teams[0].borrowingLimit.cpu"]
    assert findings.warnings[0].message.endswith(
        "set it to {cpu: 0, memory: 0} to keep the endpoint on its own quota"
    )


def test_the_team_queues_demo_with_an_endpoint_plans(tmp_path: Path) -> None:
    """The issue's stack (the AKS team-queues demo, team-a serving on borrowed quota): no
    longer refused; the plan warns what reclaim costs it."""
    stack = PROJECT_ROOT / "tests" / "stacks" / "serving-borrows.yaml"
    done = cli("plan", "--config", stack)
    assert done.code == 0, done.stderr
    assert [line.split(": ")[1] for line in done.warning_lines if RECLAIM_COST in line] == [
        "scheduling.departments[0].teams[0].borrowingLimit.cpu",
        "scheduling.departments[0].teams[0].borrowingLimit.gpu",
    ]


def test_an_endpoint_outranked_in_its_team_is_refused(tmp_path: Path) -> None:
    document = minimal()
    workloads = config(document)[P + "workloads"]
    workloads["llm-serve"]["priority"] = "train"
    workloads["qwen-lora"] = {"enabled": True, "team": "team-a", "workers": 1, "priority": "build"}
    config(document)[P + "storage"] = {"enabled": True}
    findings = only(check_services_never_evicted, run(tmp_path, document))
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert findings.errors[0].message == (
        "qwen-lora outranks llm-serve in team team-a and would preempt it: Kueue evicts the "
        "whole endpoint (KubeRay 1.6.2 suspends its Ray cluster in place and deletes its pods) "
        "and it stays down while they run: give it the team's highest priority (inference)"
    )


def test_a_head_without_cpu_quota_is_named_by_the_cpu_quota(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["cpu"] = {"cpu": 1, "memory": "16Gi"}  # a head asks for 2
    findings = only(check_gang_admission, run(tmp_path, document))
    assert paths(findings.errors) == ["scheduling.departments[0].teams[0].quota.cpu.cpu"]
    assert "its head needs 2 CPU at once" in findings.errors[0].message
