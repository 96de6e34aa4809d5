"""What the tests of `aksray plan`'s checks share: running one check, the paths of its findings,
and doctored runs and stack documents."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from aksray.offline.runner import RecordedResource, RunResult
from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import HELM_RELEASE, Plan, plan
from tests.support.harness import P
from tests.support.minimal_stack import config

Check = Callable[[Plan, Findings], None]


def only(check: Check, subject: RunResult | Plan) -> Findings:
    findings = Findings()
    check(subject if isinstance(subject, Plan) else plan(subject), findings)
    return findings


def paths(problems: list[Any]) -> list[str]:
    return [problem.path for problem in problems]


def qwen_lora(document: dict[str, Any], workers: int) -> None:
    """Enable qwen-lora in team-a with this many workers."""
    config(document)[P + "workloads"]["qwen-lora"] = {
        "enabled": True,
        "team": "team-a",
        "workers": workers,
    }


def replaced(
    result: RunResult,
    match: Callable[[RecordedResource], bool],
    edit: Callable[[dict[str, Any]], dict[str, Any]],
) -> RunResult:
    """A copy of a run whose matching resources have edited (deep-copied) inputs."""
    return dataclasses.replace(
        result,
        resources=[
            dataclasses.replace(r, inputs=edit(copy.deepcopy(r.inputs))) if match(r) else r
            for r in result.resources
        ],
    )


def is_release(name: str) -> Callable[[RecordedResource], bool]:
    return lambda r: r.type == HELM_RELEASE and r.inputs.get("name") == name
