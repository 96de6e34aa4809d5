"""Mermaid flowcharts for the Markdown plan: the organisation tree with its quotas (per team, or
per department for a large organisation), and the deploy critical path.

Written in a small subset of Mermaid that always parses (tests/support/mermaid.py checks it):
a `flowchart TD` header, nodes `id["label"]` with generated ids (`n0`, `n1`, ...: never a word
Mermaid reserves), edges `a --> b`. Labels are quoted; `"`, `#`, `&`, `<`, `>` and the backtick
are written as Mermaid entity codes (`#34;` ...) and a label's lines are joined by `<br/>`.

A chart Mermaid would refuse is never written: `Flowchart.refusal()` says why it would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aksray.plan.model.graph import format_duration
from aksray.plan.report.departments import Department, flavor_quota_text, shown_resources

# Mermaid's own defaults (mermaid-js/mermaid, packages/mermaid/src/schemas/config.schema.yaml:
# `maxEdges` 500, `maxTextSize` 50000). GitHub and Azure DevOps render with them, and a diagram
# cannot raise either (both are in the `secure` list). Mermaid's flowchart parser stops at the
# 501st edge ("Edge limit exceeded"); a diagram text longer than maxTextSize (in JavaScript string
# length: UTF-16 code units) is drawn as "Maximum text size in diagram exceeded" instead.
MAX_EDGES: Final = 500
MAX_TEXT_SIZE: Final = 50_000

HEADER: Final = "flowchart TD"
LINE_BREAK: Final = "<br/>"
ENTITIES: Final = {"#": "#35;", '"': "#34;", "&": "#38;", "<": "#60;", ">": "#62;", "`": "#96;"}


def label(*lines: str) -> str:
    """A quoted label: each line's special characters as entity codes, lines joined by <br/>."""
    escaped = ("".join(ENTITIES.get(c, c) for c in " ".join(line.split())) for line in lines)
    return '"' + LINE_BREAK.join(escaped) + '"'


class Flowchart:
    """Nodes and edges in the order they were added; ids are generated."""

    def __init__(self) -> None:
        self.lines = [HEADER]
        self._count = 0
        self.edges = 0

    def node(self, *lines: str) -> str:
        node_id = f"n{self._count}"
        self._count += 1
        self.lines.append(f"  {node_id}[{label(*lines)}]")
        return node_id

    def edge(self, source: str, target: str) -> None:
        self.lines.append(f"  {source} --> {target}")
        self.edges += 1

    def text_size(self) -> int:
        """The chart's text as Mermaid measures it (JavaScript string length)."""
        return len("\n".join(self.lines).encode("utf-16-le")) // 2

    def refusal(self) -> str | None:
        """Why Mermaid would refuse to draw the chart; None when it draws it."""
        if self.edges > MAX_EDGES:
            return f"{self.edges:,} edges, more than the {MAX_EDGES} Mermaid draws (maxEdges)"
        size = self.text_size()
        if size > MAX_TEXT_SIZE:
            return (
                f"{size:,} characters, more than the {MAX_TEXT_SIZE:,} Mermaid reads (maxTextSize)"
            )
        return None

    def block(self) -> list[str]:
        """The chart as a fenced Markdown block."""
        return ["```mermaid", *self.lines, "```"]


def _amounts(values: Mapping[str, Any] | None, keys: Sequence[str]) -> str:
    return ", ".join(f"{key} {values[key]}" for key in keys if values and key in values)


def _flavor_quota(flavor: Mapping[str, Any]) -> str:
    """`a100: gpu 5`, `cpu: cpu 8, memory 32Gi`, with the limits a team has on top."""
    keys = shown_resources(flavor["nominal"])
    text = f"{flavor['flavor']}: {_amounts(flavor['nominal'], keys)}"
    for limit, verb in (("borrowingLimit", "borrows"), ("lendingLimit", "lends")):
        amounts = _amounts(flavor[limit], keys)
        if amounts:
            text += f"; {verb} at most {amounts}"
    return text


def organisation(stack: str, queues: Sequence[Mapping[str, Any]]) -> Flowchart:
    """stack -> departments (a Kueue cohort and a KAI parent queue each) -> teams with their
    quota per flavor, as their ClusterQueues hold it."""
    chart = Flowchart()
    root = chart.node(f"stack {stack}")
    departments: dict[str, str] = {}
    for queue in queues:
        department = queue["department"]
        if department not in departments:
            departments[department] = chart.node(
                f"department {department}", f"Kueue cohort {queue['cohort']}"
            )
            chart.edge(root, departments[department])
        team = chart.node(
            f"team {queue['team']}",
            f"namespace {queue['namespace']}, LocalQueue {queue['localQueue']}",
            *(_flavor_quota(flavor) for flavor in queue["flavors"]),
        )
        chart.edge(departments[department], team)
    return chart


def organisation_by_department(stack: str, departments: Sequence[Department]) -> Flowchart:
    """stack -> departments, each with its number of teams and the sum of their quotas per
    flavor: the organisation of a stack too large to draw team by team."""
    chart = Flowchart()
    root = chart.node(f"stack {stack}")
    for department in departments:
        teams = len(department.teams)
        node = chart.node(
            f"department {department.name}",
            f"Kueue cohort {department.cohort}",
            f"{teams} team{'' if teams == 1 else 's'}, together:",
            *(flavor_quota_text(flavor, sums) for flavor, sums in department.nominal.items()),
        )
        chart.edge(root, node)
    return chart


def _kind(type_token: str) -> str:
    """`ManagedCluster` of `azure-native:containerservice:ManagedCluster`; a provider says so."""
    provider = type_token.removeprefix("pulumi:providers:")
    return f"{provider} provider" if provider != type_token else type_token.rpartition(":")[2]


def _figure(step: Mapping[str, Any]) -> str:
    seconds = format_duration(step["seconds"])
    return f"awaited run, at most {seconds}" if step["bound"] else seconds


def critical_path(path: Mapping[str, Any]) -> Flowchart:
    """The chain, first created first, each step with its type and its figure (an estimated
    duration, or the bound of a run `pulumi up` awaits)."""
    chart = Flowchart()
    previous: str | None = None
    for name, kind, figure in zip(path["resources"], path["types"], path["steps"], strict=True):
        step = chart.node(name, f"{_kind(kind)}, {_figure(figure)}")
        if previous is not None:
            chart.edge(previous, step)
        previous = step
    return chart
