"""`aksray plan --format markdown`: the plan as a pull-request comment.

A reviewer reads, in this order: one summary line (resources to create, GPUs at most, the monthly
cost at most if every pool ran full, the checks), the errors and warnings, the organisation tree
with its quotas (Mermaid), the summary's tables, the deploy critical path (Mermaid) and the cost
estimate behind the summary line. GitHub and Azure DevOps render the Mermaid blocks. Every table
and diagram is folded (`<details>`), and the comment fits a pull-request comment at any size
(aksray/plan/report/folding.py): past its budget it shows the queues per department
(aksray/plan/report/departments.py),
then leaves out and cuts what it must, saying so; with no budget it is the whole plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aksray.plan.report import mermaid
from aksray.plan.report.cluster_summary import cluster_lines
from aksray.plan.report.critical_path import critical_path_total
from aksray.plan.report.departments import departments, quota_text
from aksray.plan.report.folding import (
    COMMENT_BUDGET,
    Block,
    Chart,
    Problem,
    Table,
    Variant,
    fit,
    fit_problems,
)
from aksray.plan.report.storage_summary import storage_lines
from aksray.plan.report.summary import (
    kai_queues_table,
    pod_sets_table,
    pools_table,
    queues_table,
    workloads_table,
)
from aksray.plan.report.tables import markdown_cell, markdown_table


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _cost_phrase(cost: Mapping[str, Any]) -> str:
    if not cost["createsNodes"]:
        return "no nodes of its own (an existing cluster)"
    usd = _usd(cost["usdPerMonthAtMost"])
    if not cost["unpriced"]:
        return f"at most {usd} a month if every pool ran full (estimate)"
    # The price table has GPU sizes only: the figure bounds the pools it prices, and says so.
    unpriced = ", ".join(cost["unpriced"])
    return (
        f"at most {usd} a month for the priced pools if they ran full "
        f"(estimate; not counted, no price in the table: {unpriced})"
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


def _problems(checks: Mapping[str, list[Mapping[str, str]]], notes: Sequence[str]) -> list[Problem]:
    """Errors first: a comment cut short still lists what fails the plan."""
    return [
        *(
            Problem("error", f"- **error** `{p['path']}`: {markdown_cell(p['message'])}")
            for p in checks["errors"]
        ),
        *(
            Problem("warning", f"- **warning** `{p['path']}`: {markdown_cell(p['message'])}")
            for p in checks["warnings"]
        ),
        *(Problem("warning", f"- **warning** {markdown_cell(note)}") for note in notes),
    ]


def _problems_section(lines: Sequence[str]) -> list[str]:
    return ["### Errors and warnings", "", *(lines or ["None."])]


def _organisation(stack: str, data: Mapping[str, Any], *, per_team: bool) -> Chart:
    """The organisation chart: per team while Mermaid draws it (and `per_team`), else per
    department; left out, saying why, when Mermaid would refuse that too."""
    queues = data["queues"]
    groups = departments(queues)
    size = f"{_count(len(groups), 'department')}, {_count(len(queues), 'team')}"
    note = ""
    if per_team:
        chart = mermaid.organisation(stack, queues)
        refused = chart.refusal()
        if refused is None:
            return Chart(f"Organisation chart: {size}", tuple(chart.block()))
        note = f"Drawn per department: team by team, the chart has {refused}."
    chart = mermaid.organisation_by_department(stack, groups)
    refused_too = chart.refusal()
    if refused_too is None:
        return Chart(f"Organisation chart per department: {size}", tuple(chart.block()), note)
    return Chart(
        "",
        None,
        f"The organisation chart ({size}) is left out: Mermaid would refuse it, "
        f"{'team by team and ' if per_team else ''}per department: {refused_too}.",
    )


def _queues(data: Mapping[str, Any], *, per_team: bool) -> list[Table]:
    """The Kueue queues and the KAI queues, per team or per department."""
    queues, kai = data["queues"], data["kaiQueues"]
    actions = data["schedulers"]["kaiActions"]
    groups = departments(queues)
    if per_team:
        return [
            Table.of(
                queues_table(queues, markdown_table),
                f"{_count(len(queues), 'team')} in {_count(len(groups), 'department')}: "
                "a row per team and flavor",
            ),
            Table.of(kai_queues_table(kai, actions, markdown_table), _count(len(kai), "KAI queue")),
        ]
    rows = ((g.name, g.cohort, len(g.teams), g.gpus, quota_text(g) or None) for g in groups)
    teams = {q["kai"]["queue"] for q in queues}
    parents = [q for q in kai if q["queue"] not in teams]
    return [
        Table.of(
            markdown_table(
                "Queues per department (Kueue cohort; quota: its teams' nominal quotas added up)",
                ("department", "cohort", "teams", "nominal gpus", "quota per flavor"),
                rows,
            ),
            f"{_count(len(groups), 'department')}, {_count(len(queues), 'team')}",
        ),
        Table.of(
            kai_queues_table(parents, actions, markdown_table),
            f"{_count(len(parents), 'KAI queue')} above the teams' "
            f"{_count(len(kai) - len(parents), 'leaf queue')}",
        ),
    ]


def _cost(cost: Mapping[str, Any]) -> list[Block]:
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
    note = (
        f"An estimate, not a quote: {cost['source']} (catalog/prices.py), "
        f"{cost['hoursPerMonth']} hours a month; the stack is in {cost['region']}, priced at "
        f"{', '.join(regions) or 'no'} prices. Spot pools are counted at the pay-as-you-go "
        "price; discounts, disks, storage and network are not counted."
    )
    table = markdown_table("Every pool at its largest, all month", header, rows)
    priced = len(rows) - len(cost["unpriced"])
    of = f" for the {priced} priced" if cost["unpriced"] else ""
    summary = f"{_count(len(rows), 'pool')}: at most {_usd(cost['usdPerMonthAtMost'])} a month{of}"
    return [["### Cost estimate"], Table.of(table, summary, note)]


def _storage(storage: Mapping[str, Any]) -> Block:
    lines = storage_lines(storage, markdown_table)
    if not storage["enabled"]:
        return lines
    return Table.of(lines, _count(len(storage["containers"]), "Blob container"))


def _body(
    stack: str, data: Mapping[str, Any], cost: Mapping[str, Any], *, per_team: bool
) -> list[Block]:
    """The tables and diagrams, in the order a reviewer reads them."""
    path = data["criticalPath"]
    workloads = data["workloads"]
    steps = (
        f"{_count(len(path['resources']), 'resource')} one after another, "
        f"{critical_path_total(path)}"
    )
    chain = mermaid.critical_path(path)
    refused = chain.refusal()
    path_chart = Chart(
        f"The chain of {_count(len(path['resources']), 'resource')}",
        None if refused else tuple(chain.block()),
        f"The chain is left out: Mermaid would refuse it, {refused}." if refused else "",
        rank=2,
    )
    body: list[Block] = [
        ["### Organisation and quotas"],
        _organisation(stack, data, per_team=per_team),
        ["### Summary"],
        cluster_lines(data["cluster"]),
        Table.of(pools_table(data["pools"], markdown_table), _count(len(data["pools"]), "pool")),
        _storage(data["storage"]),
        *_queues(data, per_team=per_team),
        Table.of(workloads_table(workloads, markdown_table), _count(len(workloads), "workload")),
        Table.of(
            pod_sets_table(workloads, markdown_table),
            _count(sum(len(w["podSets"]) for w in workloads), "pod set"),
        ),
        [
            "### Deploy critical path",
            "",
            (
                f"{steps} (estimates: aksray/plan/model/graph.py; an awaited run counts at the "
                "most `pulumi up` waits for it: aksray/plan/model/awaits.py):"
                if path["awaitedAtMostSeconds"]
                else f"{steps} by the estimates in aksray/plan/model/graph.py:"
            ),
        ],
        path_chart,
        *_cost(cost),
    ]
    return body


def full_plan_reference(label: str | None, url: str | None) -> str:
    """Where a comment cut short says the whole plan is: a link to the file, or how to write
    one."""
    if label is None or url is None:
        return "`aksray plan --format markdown --full-plan FILE` writes it"
    target = f"<{url}>" if any(c in url for c in " ()") else url
    return f"[{markdown_cell(label)}]({target})"


def plan_markdown(
    stack: str,
    *,
    resources: int,
    data: Mapping[str, Any],
    checks: Mapping[str, list[Any]],
    notes: Sequence[str],
    cost: Mapping[str, Any],
    budget: int | None = COMMENT_BUDGET,
    where: str = full_plan_reference(None, None),
) -> str:
    """The comment, within `budget` characters (None: the whole plan, nothing left out).
    `notes`: the program's own log warnings; `where`: where the whole plan is
    (`full_plan_reference`)."""
    head = [f"## aksray plan: `{stack}`", "", summary_line(resources, data, checks, cost)]
    variants = [
        Variant(_body(stack, data, cost, per_team=True)),
        Variant(
            _body(stack, data, cost, per_team=False),
            "the queues, KAI queues and organisation chart per department, not per team",
        ),
    ]
    return fit(
        head,
        _problems(checks, notes),
        variants,
        section=_problems_section,
        budget=budget,
        where=where,
    )


def invalid_markdown(
    stack: str,
    problems: Sequence[str],
    *,
    budget: int | None = COMMENT_BUDGET,
    where: str = full_plan_reference(None, None),
) -> str:
    """A stack that does not validate has no plan: the comment says why, one line per error
    (as many as fit in `budget`, then how many more)."""
    head = [
        f"## aksray plan: `{stack}`",
        "",
        f"**The configuration does not validate: {_count(len(problems), 'error')}; nothing "
        "was planned.**",
        "",
    ]
    items = [Problem("error", f"- **error** {markdown_cell(problem)}") for problem in problems]
    room = None if budget is None else budget - len("\n".join(head)) - 1
    lines, _ = fit_problems(items, room, where)
    return "\n".join([*head, *lines]) + "\n"
