"""What one `pulumi up` from an old stack to a new one does: the types of the change plan.

A `ChangePlan` holds one `ResourceChange` per resource that `pulumi up` touches, keyed by the
engine's URN (type chain, name), and the `Impact` lines: what the change does to a platform with
work running and data stored. `ChangePlan.to_json()` is the shape `aksray plan --since --json`
prints under `change`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

Action = Literal["create", "update", "replace", "delete"]
ACTIONS: Final[tuple[Action, ...]] = ("create", "update", "replace", "delete")
PathKind = Literal["add", "update", "delete"]
Severity = Literal["error", "warning"]
ImpactKind = Literal[
    "update-refused",  # the API refuses the update: pulumi up fails there
    "protected",  # a protected resource would be replaced or deleted: pulumi up stops there
    "data-deleted",  # a storage account, container or data group goes, with its data
    "work-killed",  # a pool, RayJob, RayService or namespace goes: what runs there stops
    "quota-cut",  # a team's quota falls below what it may hold now
    "access-lost",  # pods lose their identity or Blob access
    "finalizer-wait",  # a deletion waits on a finalizer; pulumi up waits with it
    "operator-removed",  # an operator is uninstalled or reinstalled
]


@dataclass(frozen=True)
class PathChange:
    """One changed input, at an engine property path (`spec.resourceGroups[0].flavors`)."""

    path: str
    kind: PathKind
    old: Any = None  # absent for an add
    new: Any = None  # absent for a delete

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind != "add":
            shown["old"] = self.old
        if self.kind != "delete":
            shown["new"] = self.new
        return shown


@dataclass(frozen=True)
class Reason:
    """Why a resource is replaced (or why its update is refused): the input path that forces
    it, the rule, and where the rule comes from."""

    path: str
    rule: str
    source: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "source": self.source}


@dataclass(frozen=True)
class ResourceChange:
    """What `pulumi up` does to one resource."""

    urn: str  # the engine's URN: every parent's type in the type chain
    type: str
    name: str  # the resource's logical name
    action: Action
    paths: tuple[PathChange, ...] = ()  # changed inputs (update, replace)
    replace_reasons: tuple[Reason, ...] = ()  # replace: every input that forces it
    refused: tuple[Reason, ...] = ()  # update: changes the API refuses in place
    refused_while_running: tuple[Reason, ...] = ()  # ... refuses while the workload runs
    delete_before_replace: bool = False  # replace: the old one goes before the new one comes
    protect: bool = False  # protect stops `pulumi up` at this replace or delete
    retain_on_delete: bool = False  # the old one is left in place, only forgotten
    inputs: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    old_inputs: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "action": self.action,
        }
        if self.paths:
            shown["paths"] = [p.to_json() for p in self.paths]
        if self.action == "replace":
            shown["replaceReasons"] = [r.to_json() for r in self.replace_reasons]
            shown["deleteBeforeReplace"] = self.delete_before_replace
        if self.refused:
            shown["refused"] = [r.to_json() for r in self.refused]
        if self.refused_while_running:
            shown["refusedWhileRunning"] = [r.to_json() for r in self.refused_while_running]
        if self.protect:
            shown["protect"] = True
        if self.retain_on_delete:
            shown["retainOnDelete"] = True
        return shown


@dataclass(frozen=True)
class Impact:
    """One line of what the change does to a live platform; errors make `pulumi up` fail or
    stop halfway, warnings do not."""

    severity: Severity
    kind: ImpactKind
    urn: str
    message: str  # one line: what happens, and how to proceed

    def to_json(self) -> dict[str, str]:
        return {
            "severity": self.severity,
            "kind": self.kind,
            "urn": self.urn,
            "message": self.message,
        }


@dataclass(frozen=True)
class ChangePlan:
    """Every resource `pulumi up` touches going from `old` to `new`, and what it does live."""

    old: str  # where the old stack came from (a file, or REF:PATH)
    new: str
    changes: tuple[ResourceChange, ...]  # in URN order; unchanged resources are left out
    unchanged: int
    impacts: tuple[Impact, ...]

    @property
    def fails_halfway(self) -> bool:
        """`pulumi up` would fail or stop partway: the plan exits 1."""
        return any(i.severity == "error" for i in self.impacts)

    def counts(self) -> dict[str, int]:
        found = {action: 0 for action in ACTIONS}
        for change in self.changes:
            found[change.action] += 1
        return found | {"same": self.unchanged}

    def by_action(self, action: Action) -> tuple[ResourceChange, ...]:
        return tuple(c for c in self.changes if c.action == action)

    def errors(self) -> tuple[Impact, ...]:
        return tuple(i for i in self.impacts if i.severity == "error")

    def warnings(self) -> tuple[Impact, ...]:
        return tuple(i for i in self.impacts if i.severity == "warning")

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "counts": self.counts(),
            "failsHalfway": self.fails_halfway,
            "changes": [c.to_json() for c in self.changes],
            "impacts": [i.to_json() for i in self.impacts],
        }
