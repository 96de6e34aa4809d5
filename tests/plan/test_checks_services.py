"""`aksray plan`'s endpoint checks: an endpoint borrows no quota and is never outranked."""

from __future__ import annotations

from pathlib import Path

from aksray.plan.checks.gangs import check_gang_admission
from aksray.plan.checks.services import check_services_never_evicted
from tests.support.checks import only, paths
from tests.support.harness import P
from tests.support.minimal_stack import config, minimal, run, teams

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
