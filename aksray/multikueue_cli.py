"""`aksray plan` for a stack with `multikueue` (docs/multikueue.md): the resource tree, the
clusters, quotas and placements, then the checks of every worker and across clusters."""

from __future__ import annotations

import json
import sys

from aksray.checks.multikueue import run_multikueue_checks
from aksray.multikueue_plan import worker_plans
from aksray.multikueue_report import multikueue_lines, multikueue_summary
from aksray.runner import RunResult
from aksray.tree import resource_tree
from aksray.usage import EXIT_OK, EXIT_PROBLEMS


def plan_multikueue(result: RunResult, output: str) -> int:
    settings = result.settings
    workers = worker_plans(result)
    findings = run_multikueue_checks(settings, workers)
    data = multikueue_summary(settings, workers)
    if output == "json":
        document = {
            "stack": result.stack,
            "resources": [r.to_json() for r in result.resources],
            "outputs": result.outputs,
            "warnings": result.warnings,
            "multikueue": data,
            "checks": findings.to_json(),
        }
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        # Markdown is not laid out for several clusters yet: the text report serves both.
        print(f"Resources ({len(result.resources)}):")
        for line in resource_tree(result):
            print(f"  {line}")
        print()
        for line in multikueue_lines(data):
            print(line)
        print()
        print(f"Checks: {len(findings.errors)} error(s), {len(findings.warnings)} warning(s)")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for problem in findings.warnings:
        print(f"warning: {problem}", file=sys.stderr)
    for problem in findings.errors:
        print(f"error: {problem}", file=sys.stderr)
    return EXIT_PROBLEMS if findings.errors else EXIT_OK
