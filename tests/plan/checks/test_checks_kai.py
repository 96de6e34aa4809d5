"""`aksray plan`'s KAI checks: Kueue admits and evicts, KAI only places and never evicts."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aksray.offline.runner import RunResult
from aksray.plan.checks.kai import (
    check_kai_never_evicts,
    check_kai_queues_unlimited,
    check_over_quota_weight,
)
from aksray.plan.checks.run import run_checks
from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import Plan, plan, registered
from aksray.plan.report.summary import kai_queues_table, summary
from tests.support.checks import is_release, only, paths, replaced
from tests.support.harness import P, planned
from tests.support.minimal_stack import config, minimal, run, teams


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
    return replaced(result, is_release("kai-scheduler"), _kai_actions(edit))


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
