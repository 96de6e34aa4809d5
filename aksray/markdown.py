"""`aksray plan --format markdown`: the plan as a pull-request comment.

A reviewer reads, in this order: one summary line (resources to create, GPUs at most, the monthly
cost at most if every pool ran full, the checks), the errors and warnings, the organisation tree
with its quotas (Mermaid), the summary's tables, the deploy critical path (Mermaid) and the cost
estimate behind the summary line. GitHub and Azure DevOps render the Mermaid blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aksray import mermaid
from aksray.cluster_summary import cluster_lines
from aksray.graph import format_duration
from aksray.report import (
    kai_queues_table,
    pod_sets_table,
    pools_table,
    queues_table,
    workloads_table,
)
from aksray.storage_summary import storage_lines
from aksray.tables import markdown_cell, markdown_table


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _cost_phrase(cost: Mapping[str, Any]) -> str:
    if not cost["createsNodes"]:
        return "no nodes of its own (an existing cluster)"
    unpriced = f"; unpriced: {', '.join(cost['unpriced'])}" if cost["unpriced"] else ""
    return (
        f"at most {_usd(cost['usdPerMonthAtMost'])} a month if every pool ran full "
        f"(estimate{unpriced})"
    )


def summary_line(
    resources: int,
    data: Mapping[str, Any],
    checks: Mapping[str, list[Any]],
    cost: Mapping[str, Any],
) -> str:
    gpus = sum(pool["maxGpus"] for pool in data["pools"])
    errors, warnings = len(checks["errors"]), len(checks["warnings"])
    verdict = "checks failed" if errors else "checks passed"
    return (
        f"**{_count(resources, 'resource')} to create · at most {_count(gpus, 'GPU')} · "
        f"{_cost_phrase(cost)} · {verdict}: {_count(errors, 'error')}, "
        f"{_count(warnings, 'warning')}**"
    )


def _problems(checks: Mapping[str, list[Mapping[str, str]]], notes: Sequence[str]) -> list[str]:
    lines = [
        *(f"- **error** `{p['path']}`: {markdown_cell(p['message'])}" for p in checks["errors"]),
        *(
            f"- **warning** `{p['path']}`: {markdown_cell(p['message'])}"
            for p in checks["warnings"]
        ),
        *(f"- **warning** {markdown_cell(note)}" for note in notes),
    ]
    return ["### Errors and warnings", "", *(lines or ["None."])]


def _cost_table(cost: Mapping[str, Any]) -> list[str]:
    if not cost["createsNodes"]:
        return []
    rows = [
        (
            p["pool"],
            p["vmSize"],
            p["nodesAtMost"],
            f"${p['usdPerNodeHour']}" if p["usdPerNodeHour"] is not None else "unpriced",
            _usd(p["usdPerMonthAtMost"]) if p["usdPerMonthAtMost"] is not None else "unpriced",
        )
        for p in cost["pools"]
    ]
    header = ("pool", "vm size", "nodes at most", "USD per node-hour", "USD per month at most")
    regions = sorted({p["priceRegion"] for p in cost["pools"] if p["priceRegion"]})
    return [
        "### Cost estimate",
        "",
        *markdown_table("Every pool at its largest, all month", header, rows),
        "",
        f"An estimate, not a quote: {cost['source']} (catalog/prices.py), "
        f"{cost['hoursPerMonth']} hours a month; the stack is in {cost['region']}, priced at "
        f"{', '.join(regions) or 'no'} prices. Spot pools are counted at the pay-as-you-go "
        "price; discounts, disks, storage and network are not counted.",
    ]


def plan_markdown(
    stack: str,
    *,
    resources: int,
    data: Mapping[str, Any],
    checks: Mapping[str, list[Any]],
    notes: Sequence[str],
    cost: Mapping[str, Any],
) -> str:
    """The whole comment. `notes`: the program's own log warnings."""
    path = data["criticalPath"]
    lines = [
        f"## aksray plan: `{stack}`",
        "",
        summary_line(resources, data, checks, cost),
        "",
        *_problems(checks, notes),
        "",
        "### Organisation and quotas",
        "",
        *mermaid.organisation(stack, data["queues"]).block(),
        "",
        "### Summary",
    ]
    for part in (
        cluster_lines(data["cluster"]),
        pools_table(data["pools"], markdown_table),
        storage_lines(data["storage"], markdown_table),
        queues_table(data["queues"], markdown_table),
        kai_queues_table(data["kaiQueues"], data["schedulers"]["kaiActions"], markdown_table),
        workloads_table(data["workloads"], markdown_table),
        pod_sets_table(data["workloads"], markdown_table),
    ):
        lines += ["", *part]
    lines += [
        "",
        "### Deploy critical path",
        "",
        f"{_count(len(path['resources']), 'resource')} one after another, about "
        f"{format_duration(path['estimatedSeconds'])} by the estimates in aksray/graph.py:",
        "",
        *mermaid.critical_path(path).block(),
    ]
    cost_lines = _cost_table(cost)
    return "\n".join([*lines, *(["", *cost_lines] if cost_lines else [])]) + "\n"


def invalid_markdown(stack: str, problems: Sequence[str]) -> str:
    """A stack that does not validate has no plan: the comment says why, one line per error."""
    lines = [
        f"## aksray plan: `{stack}`",
        "",
        f"**The configuration does not validate: {_count(len(problems), 'error')}; nothing "
        "was planned.**",
        "",
        *(f"- **error** {markdown_cell(problem)}" for problem in problems),
    ]
    return "\n".join(lines) + "\n"
