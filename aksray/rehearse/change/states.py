"""The stacks a change rehearsal goes through, and what `aksray plan --since` says of each step.

Each state is a stack file: the old one (`--since`, oldest first) and at last the new one. Each
is checked offline twice: as the rig applies it (an existing cluster, operators and storage
stood in for) and as written. The first plan is the one the rig's `pulumi preview` must match
(the Kubernetes half of the prediction); the second is what the change does on AKS, whose pool
changes the rig then plays on its nodes (pools.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from aksray.offline.runner import RunResult, run_program
from aksray.plan.change.compute import change_plan
from aksray.plan.change.model import ChangePlan
from aksray.rehearse.change.preview import resource_key
from aksray.rehearse.run import InvalidConfigError, validate
from aksray.rehearse.stack import read_stack_file, stack_workloads
from aksray.stackfile.bounded_yaml import load_stack_yaml
from catalog.project import PROJECT
from settings.errors import problem_lines
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from settings.model import Settings

# The run label a rehearsal gives every job a stack enables and does not start itself: the same
# in every state, so a change leaves a running job alone unless it changes the job.
RUN_LABEL: Final = "day2"


def running_workloads(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The stack's workloads section with every enabled job started (its own run label, or
    RUN_LABEL)."""
    section = stack_workloads(stack)
    for name, entry in section.items():
        if entry.get("enabled") is True and WORKLOADS[name].kind == "RayJob":
            entry.setdefault("run", RUN_LABEL)
    return section


@dataclass(frozen=True)
class State:
    label: str  # the file, or REF:PATH, as the user named it
    stack: dict[str, Any]  # its config, project prefix removed
    rig: RunResult  # the program offline on the stack as the rig applies it, jobs started
    real: RunResult  # the program offline on the stack as written, jobs started

    @property
    def settings(self) -> Settings:
        settings: Settings = self.rig.settings
        return settings

    def workloads(self) -> dict[str, dict[str, Any]]:
        return running_workloads(self.stack)


@dataclass(frozen=True)
class Step:
    """One change: from `old` to `new`, as the plan predicts it on the rig and on AKS."""

    number: int
    old: State
    new: State
    rig_plan: ChangePlan
    real_plan: ChangePlan

    @property
    def title(self) -> str:
        return f"change {self.number}: {self.old.label} -> {self.new.label}"

    def predicted(self) -> dict[str, str]:
        """Resource key -> what the plan says `pulumi up` does to it on the rig (custom
        resources only, as the preview lists them)."""
        components = {r.type for r in (*self.old.rig.resources, *self.new.rig.resources)}
        components = {t for t in components if not _is_custom(t, self.old.rig, self.new.rig)}
        return {
            resource_key(c.urn): c.action
            for c in self.rig_plan.changes
            if c.type not in components and not c.type.startswith("pulumi:providers:")
        }


def _is_custom(type_token: str, *runs: RunResult) -> bool:
    return any(r.custom for run in runs for r in run.resources if r.type == type_token)


def load_state(label: str, path: Path, name: str, run_dir: Path, where: str = "") -> State:
    """One stack file, checked as the rig applies it and as written (the same stack name, so
    the URNs of every state agree). `where`: how its problems are prefixed (`--since OLD`)."""

    def refused(lines: list[str]) -> InvalidConfigError:
        prefix = f"error: {where}: " if where else "error: "
        return InvalidConfigError([prefix + line.removeprefix("error: ") for line in lines])

    stack = read_stack_file(path)
    started = running_workloads(stack)
    try:
        rig = validate(stack, run_dir, name, monitoring=True, workloads=started)
    except InvalidConfigError as invalid:
        raise refused(invalid.lines) from None
    real = run_program(with_workloads(path, started, run_dir), stack=name)
    if real.problems:
        raise refused(problem_lines(real.problems))
    return State(label, stack, rig, real)


def with_workloads(path: Path, section: dict[str, dict[str, Any]], run_dir: Path) -> Path:
    """A copy of the stack file `path` whose workloads section is `section`."""
    document = load_stack_yaml(path.read_bytes(), str(path)) or {}
    config = dict(document.get("config") or {})
    config[f"{PROJECT}:workloads"] = section
    written = run_dir / f"as-written-{path.name}"
    written.write_text(yaml.safe_dump({**document, "config": config}), encoding="utf-8")
    return written


def steps(states: list[State]) -> list[Step]:
    """Each state after the first, as the change from the one before it."""
    found = []
    for number, (old, new) in enumerate(itertools.pairwise(states), start=1):
        rig = change_plan(old.rig, new.rig, old_label=old.label, new_label=new.label)
        real = change_plan(old.real, new.real, old_label=old.label, new_label=new.label)
        found.append(Step(number, old, new, rig, real))
    return found
