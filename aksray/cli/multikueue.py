"""`aksray plan` for a stack with `multikueue` (docs/multikueue.md): the resource tree, the
clusters, quotas and placements, then the checks of every worker and across clusters."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from aksray.cli.since import change_diagnostics, plan_json
from aksray.cli.usage import EXIT_OK, EXIT_PROBLEMS
from aksray.offline.runner import RunResult
from aksray.offline.tree import resource_tree
from aksray.plan.change.model import ChangePlan
from aksray.plan.checks.findings import Findings
from aksray.plan.checks.multikueue import run_multikueue_checks
from aksray.plan.model.graph import critical_path
from aksray.plan.model.multikueue import worker_plans
from aksray.plan.report.change import change_lines
from aksray.plan.report.critical_path import critical_path_lines
from aksray.plan.report.multikueue import multikueue_lines, multikueue_summary
from settings.errors import problem_lines


def plan_multikueue(
    result: RunResult,
    output: str,
    *,
    write_full_plan: Callable[[str], bool] | None = None,
    change: ChangePlan | None = None,
) -> int:
    """`write_full_plan`: with `--full-plan FILE`, writes the whole plan there (False when it
    could not). `change`: with --since, shown first."""
    settings = result.settings
    workers = worker_plans(result)
    findings = run_multikueue_checks(settings, workers)
    # The summary: the clusters, quotas and placements, and the whole stack's critical path
    # (the manager and the workers are one `pulumi up`).
    data = {
        **multikueue_summary(settings, workers),
        "criticalPath": critical_path(result).to_json(),
    }
    if output == "json":
        print(plan_json(result, {"summary": data}, findings.to_json(), change))
    else:
        lines = [*change_lines(change), ""] if change is not None else []
        text = "\n".join(lines + _text_report(result, data, findings)) + "\n"
        if output == "markdown":
            # Markdown is not laid out for several clusters yet: the text report, kept as
            # written, is the comment and the whole plan.
            text = f"```text\n{text}```\n"
            if write_full_plan is not None and not write_full_plan(text):
                return EXIT_PROBLEMS
        print(text, end="")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for line in problem_lines(findings.warnings):
        print(f"warning: {line}", file=sys.stderr)
    for line in problem_lines(findings.errors):
        print(f"error: {line}", file=sys.stderr)
    halfway = change_diagnostics(change)
    return EXIT_PROBLEMS if findings.errors or halfway else EXIT_OK


def _text_report(result: RunResult, data: dict[str, Any], findings: Findings) -> list[str]:
    lines = [f"Resources ({len(result.resources)}):"]
    lines += [f"  {line}" for line in resource_tree(result)]
    lines += ["", *multikueue_lines(data), "", *critical_path_lines(data["criticalPath"]), ""]
    lines.append(f"Checks: {len(findings.errors)} error(s), {len(findings.warnings)} warning(s)")
    return lines
