"""The deploy critical path as the plan prints it (aksray/plan/report/critical_path.py): a step
per line with its estimate, the timeout `pulumi up` waits under, an awaited run's bound."""

from __future__ import annotations

from typing import Any

from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import plan
from aksray.plan.report.critical_path import critical_path_lines
from aksray.plan.report.summary import summary
from tests.support.harness import planned


def _summary(stack: str) -> dict[str, Any]:
    result = planned(stack)
    data: dict[str, Any] = summary(plan(result), critical_path(result))
    return data


def test_the_critical_path_is_one_step_per_line_with_its_estimate() -> None:
    lines = critical_path_lines(_summary("dev")["criticalPath"])
    assert lines[0] == (
        "Deploy critical path (10 resources, about 16 min 14 s; estimates from "
        "aksray/plan/model/graph.py):"
    )
    steps = [line.split() for line in lines[1:-1]]
    assert steps[0] == ["aksray-cluster-rg", "5", "s"]
    assert steps[1] == ["→", "aksray-cluster-aks", "8", "min", "00", "s"]
    assert steps[5] == ["→", "aksray-operators-kuberay-operator", "2", "min", "00", "s", "(at",
                        "most", "10", "min", "00", "s)"]  # fmt: skip
    assert [step[1] for step in steps[1:]] == critical_path(planned("dev")).names[1:]
    assert lines[-1] == (
        "  at most: the timeout pulumi up waits under (aksray/plan/model/awaits.py)"
    )


def test_an_awaited_run_is_shown_as_a_bound_with_the_chain_were_it_quick() -> None:
    result = planned("prod")
    lines = critical_path_lines(summary(plan(result), critical_path(result))["criticalPath"])
    assert lines[0] == (
        "Deploy critical path (12 resources, about 16 min 16 s + at most 60 min 00 s awaited):"
    )
    assert lines[11].split() == ["→", "aksray-workloads-model-stage", "at", "most", "60", "min",
                                 "00", "s", "(an", "awaited", "run)"]  # fmt: skip
    assert lines[13:] == [
        "  estimates from aksray/plan/model/graph.py",
        "  at most: the timeout pulumi up waits under (aksray/plan/model/awaits.py)",
        "  aksray-workloads-model-stage waits until .status.jobStatus=SUCCEEDED",
        "  with the awaited runs quick, the longest chain takes about 24 min 05 s",
    ]
