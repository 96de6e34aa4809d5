"""The change of `aksray plan --since OLD` as a person reads it: a line per resource `pulumi up`
touches (text), or the pull-request comment's first section (Markdown), with what the change
does to the running platform."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from aksray.plan.change.describe import label
from aksray.plan.change.model import ACTIONS, ChangePlan, Impact, ResourceChange
from aksray.plan.report.tables import markdown_cell, table

# Changed input paths shown per updated resource before "+N more".
PATHS_SHOWN: Final = 3
# The share of a comment's budget the change may take; the plan of the new stack gets the rest.
CHANGE_SHARE: Final = 0.5


def counts_line(plan: ChangePlan) -> str:
    counts = plan.counts()
    parts = [f"{counts[action]} to {action}" for action in ACTIONS]
    return f"{', '.join(parts)}; {counts['same']} unchanged"


def why(change: ResourceChange) -> str:
    """What changes, in one cell: the inputs that force a replacement (and the rule), the
    changed inputs of an update, what protect or retainOnDelete does."""
    if change.action == "replace":
        forced = ", ".join(dict.fromkeys(f"{r.path} ({r.rule})" for r in change.replace_reasons))
        order = "deleted first" if change.delete_before_replace else "created first"
        text = f"{forced}; {order}"
    elif change.action == "update":
        paths = [p.path for p in change.paths]
        more = f" (+{len(paths) - PATHS_SHOWN} more)" if len(paths) > PATHS_SHOWN else ""
        text = ", ".join(paths[:PATHS_SHOWN]) + more
    else:
        text = ""
    if change.protect:
        text = f"{text}; protected" if text else "protected"
    if change.retain_on_delete and change.action in ("replace", "delete"):
        text = f"{text}; the old one is kept (retainOnDelete)" if text else "kept (retainOnDelete)"
    return text


def change_lines(plan: ChangePlan) -> list[str]:
    """The text section: a heading, one row per change, and how many impacts (the impacts
    themselves go to stderr, one line each)."""
    lines = [f"Change since {plan.old}: {counts_line(plan)}"]
    rows = [(c.action, label(c), why(c)) for c in plan.changes]
    if rows:
        lines += [f"  {line}" for line in table(("action", "resource", "what changes"), rows)]
    errors, warnings = len(plan.errors()), len(plan.warnings())
    verdict = "`pulumi up` would fail or stop halfway" if plan.fails_halfway else "nothing stops it"
    lines.append(f"On the running platform: {errors} error(s), {warnings} warning(s); {verdict}")
    return lines


def impact_line(impact: Impact) -> str:
    """The stderr line of an impact (after `error: ` or `warning: `)."""
    return f"change: {impact.message}"


def change_markdown(plan: ChangePlan, *, budget: int | None, where: str) -> str:
    """The comment's first section, within `budget` characters (None: all of it): the verdict,
    every impact, then the changes in a folded table; past the budget the table, then the
    impacts, are cut, saying how many were left out and where the rest is (`where`)."""
    head = [
        f"## aksray plan: the change from `{markdown_cell(plan.old)}`",
        "",
        _verdict(plan),
    ]
    impacts = [
        f"- **{i.severity}** {markdown_cell(i.message)}" for i in (*plan.errors(), *plan.warnings())
    ]
    rows = [
        f"| {c.action} | {markdown_cell(label(c))} | {markdown_cell(why(c))} |"
        for c in plan.changes
    ]
    return "\n".join(_fit(head, impacts, rows, budget, where)) + "\n"


def _verdict(plan: ChangePlan) -> str:
    counts = counts_line(plan)
    errors = len(plan.errors())
    if errors:
        return f"**`pulumi up` would fail or stop halfway: {errors} error(s).** {counts}."
    return f"**`pulumi up` would finish.** {counts}."


def _table(rows: Sequence[str], total: int) -> list[str]:
    if not rows:
        return []
    return [
        "",
        f"<details><summary>{total} change(s)</summary>",
        "",
        "| action | resource | what changes |",
        "|---|---|---|",
        *rows,
        "",
        "</details>",
    ]


def _fit(
    head: list[str], impacts: list[str], rows: list[str], budget: int | None, where: str
) -> list[str]:
    def size(lines: Sequence[str]) -> int:
        return sum(len(line) + 1 for line in lines)

    def assemble(kept_impacts: int, kept_rows: int) -> list[str]:
        lines = [*head, *([""] if kept_impacts else []), *impacts[:kept_impacts]]
        left_out = (len(impacts) - kept_impacts) + (len(rows) - kept_rows)
        lines += _table(rows[:kept_rows], len(rows))
        if left_out:
            lines += ["", f"_{left_out} more line(s) of the change left out: {where}._"]
        return lines

    if budget is None or size(assemble(len(impacts), len(rows))) <= budget:
        return assemble(len(impacts), len(rows))
    fits_rows = _most(len(rows), lambda n: size(assemble(len(impacts), n)) <= budget)
    if fits_rows:
        return assemble(len(impacts), fits_rows)
    return assemble(_most(len(impacts), lambda n: size(assemble(n, 0)) <= budget), 0)


def _most(count: int, fits: Callable[[int], bool]) -> int:
    """The largest n in 0..count with fits(n) (fits is monotone); 0 when none fits."""
    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
