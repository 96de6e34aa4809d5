"""The change plan of one `pulumi up`: from what the program registers for the old stack to what
it registers for the new one (`change_plan`, the entry point of this room)."""

from __future__ import annotations

import graphlib
from collections.abc import Sequence
from pathlib import Path

from aksray.offline.runner import RecordedResource, RunResult, run_program, stack_name_for
from aksray.plan.change.classify import Context, classify, created, deleted
from aksray.plan.change.identity import match
from aksray.plan.change.impacts import live_impacts
from aksray.plan.change.model import ChangePlan, ResourceChange
from settings.errors import problem_lines

PROVIDER_PREFIX = "pulumi:providers:"


def dependency_order(resources: Sequence[RecordedResource]) -> list[RecordedResource]:
    """Every resource after its parent, its provider and what it depends on (the order the
    engine steps through them), ties by URN."""
    by_urn = {r.urn: r for r in resources}
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for resource in sorted(resources, key=lambda r: r.urn):
        before = {resource.parent, resource.provider_urn, *resource.depends_on}
        for dependencies in resource.property_dependencies.values():
            before.update(dependencies)
        sorter.add(resource.urn, *sorted(u for u in before if u in by_urn and u != resource.urn))
    return [by_urn[urn] for urn in sorter.static_order()]


def change_plan(old: RunResult, new: RunResult, *, old_label: str, new_label: str) -> ChangePlan:
    """What `pulumi up` of `new` does to a stack deployed from `old`. Both runs must be of the
    same stack name (the URNs carry it) and valid."""
    matched = match(old.resources, new.resources)
    providers = {r.urn: r for r in new.resources if r.type.startswith(PROVIDER_PREFIX)}
    replaced: set[str] = set()
    ctx = Context(replaced=replaced, providers=providers)
    changes: list[ResourceChange] = []
    unchanged = 0
    for resource in dependency_order(new.resources):
        urn = matched.new_urns[resource.urn]
        old_urn = matched.continues.get(urn)
        if old_urn is None:
            changes.append(created(urn, resource))
            continue
        change = classify(urn, matched.old[old_urn], resource, ctx)
        if change is None:
            unchanged += 1
            continue
        if change.action == "replace":
            replaced.add(resource.urn)
        changes.append(change)
    continued = set(matched.continues.values())
    changes += [deleted(urn, r) for urn, r in matched.old.items() if urn not in continued]
    ordered = tuple(sorted(changes, key=lambda c: c.urn))
    return ChangePlan(
        old=old_label,
        new=new_label,
        changes=ordered,
        unchanged=unchanged,
        impacts=live_impacts(ordered, old, new),
    )


class InvalidStackError(ValueError):
    """One of the two stack files does not validate; `problems` are its one-line errors."""

    def __init__(self, which: str, problems: Sequence[str]) -> None:
        super().__init__(f"{which}: {problems[0] if problems else 'invalid'}")
        self.which = which
        self.problems = tuple(problems)


def change_between(
    old_file: Path, new_file: Path, *, stack: str | None = None
) -> tuple[ChangePlan, RunResult, RunResult]:
    """Run the program for both stack files (as the stack `stack`, by default the new file's
    name) and return the change plan with the two runs. Raises `InvalidStackError` for a file whose
    configuration does not validate."""
    name = stack or stack_name_for(new_file)
    new = run_program(new_file, stack=name)
    if new.problems:
        raise InvalidStackError(str(new_file), problem_lines(new.problems))
    old = run_program(old_file, stack=name)
    if old.problems:
        raise InvalidStackError(str(old_file), problem_lines(old.problems))
    plan = change_plan(old, new, old_label=str(old_file), new_label=str(new_file))
    return plan, old, new
