"""The change plan between a project stack and a copy changed in one way, for the change-model
tests (aksray/plan/change/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aksray.offline.runner import RunResult, run_program
from aksray.plan.change.compute import change_plan
from aksray.plan.change.model import ChangePlan, ResourceChange
from tests.support.harness import P, mutated, planned, write_stack

Mutation = Callable[[dict[str, Any]], None]


def run_of(tmp_path: Path, stack: str, mutate: Mutation, name: str) -> RunResult:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    path = write_stack(folder, mutated(stack, mutate), f"Pulumi.{stack}.yaml")
    result = run_program(path, stack=stack)
    assert result.ok, result.problems
    return result


def change_of(tmp_path: Path, stack: str, new: Mutation, old: Mutation | None = None) -> ChangePlan:
    """The change from `stack` (changed by `old`) to `stack` changed by `new`."""
    before = planned(stack) if old is None else run_of(tmp_path, stack, old, "old")
    after = run_of(tmp_path, stack, new, "new")
    return change_plan(before, after, old_label="old", new_label="new")


def only(plan: ChangePlan, name: str) -> ResourceChange:
    """The change of the resource with this logical name."""
    found = [c for c in plan.changes if c.name == name]
    assert len(found) == 1, [c.name for c in plan.changes]
    return found[0]


def actions(plan: ChangePlan) -> dict[str, str]:
    """Logical name -> action, for every change."""
    return {c.name: c.action for c in plan.changes}


def gpu_pool(config: dict[str, Any], index: int = 0) -> dict[str, Any]:
    pool: dict[str, Any] = config[P + "cluster"]["gpuPools"][index]
    return pool


def teams(config: dict[str, Any], department: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = config[P + "scheduling"]["departments"][department]["teams"]
    return found
