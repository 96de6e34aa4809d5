"""aksray/plan/report/departments.py: the organisation per department, as the Markdown plan shows a
stack
too large to show team by team, and its Mermaid chart."""

from __future__ import annotations

from typing import Any

from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import plan
from aksray.plan.report import mermaid as charts
from aksray.plan.report.departments import departments, flavor_quota_text, quota_text
from aksray.plan.report.summary import summary
from catalog.quantities import parse_cpu_millis, parse_memory_bytes
from tests.support import mermaid
from tests.support.harness import planned


def _queues(stack: str) -> list[dict[str, Any]]:
    result = planned(stack)
    queues: list[dict[str, Any]] = summary(plan(result), critical_path(result))["queues"]
    return queues


def test_prod_s_departments_add_up_their_teams_quotas() -> None:
    found = departments(_queues("prod"))
    assert [(d.name, d.cohort, d.teams) for d in found] == [
        ("research", "research", ["nlp", "vision"]),
        ("applied", "applied", ["serving", "training"]),
    ]
    research, applied = found
    # nlp and vision hold 12 a100 and 8 a100spot GPUs each, and 16 CPUs and 64Gi on cpu.
    assert quota_text(research) == "cpu: cpu 32, memory 128Gi; a100: gpu 24; a100spot: gpu 16"
    assert quota_text(applied) == "cpu: cpu 24, memory 96Gi; a100: gpu 8; h100: gpu 32"
    assert (research.gpus, applied.gpus) == (40, 40)
    # The sums are the ClusterQueues' own amounts, in canonical units.
    nlp, vision = (q for q in _queues("prod") if q["department"] == "research")
    a100 = [next(f for f in q["flavors"] if f["flavor"] == "a100") for q in (nlp, vision)]
    assert research.nominal["a100"] == {
        "cpu": sum(parse_cpu_millis(f["nominal"]["cpu"]) for f in a100),
        "memory": sum(parse_memory_bytes(f["nominal"]["memory"]) for f in a100),
        "gpu": 24,
    }


def test_a_flavor_is_shown_by_its_gpus_or_else_by_cpu_and_memory() -> None:
    assert flavor_quota_text("a100", {"cpu": 1500, "memory": 2**30, "gpu": 4}) == "a100: gpu 4"
    assert (
        flavor_quota_text("cpu", {"cpu": 1500, "memory": 3 * 2**30, "gpu": 0})
        == "cpu: cpu 1500m, memory 3Gi"
    )


def test_the_chart_per_department_parses_and_hangs_every_department_off_the_stack() -> None:
    chart = charts.organisation_by_department("prod", departments(_queues("prod")))
    assert chart.refusal() is None
    block = "\n".join(chart.lines)
    assert mermaid.problems(block) == []
    labels = mermaid.labels(block)
    assert list(labels.values()) == [
        "stack prod",
        "department research<br/>Kueue cohort research<br/>2 teams, together:"
        "<br/>cpu: cpu 32, memory 128Gi<br/>a100: gpu 24<br/>a100spot: gpu 16",
        "department applied<br/>Kueue cohort applied<br/>2 teams, together:"
        "<br/>cpu: cpu 24, memory 96Gi<br/>a100: gpu 8<br/>h100: gpu 32",
    ]
    assert mermaid.edges(block) == [("n0", "n1"), ("n0", "n2")]
