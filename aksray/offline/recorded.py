"""What the offline runner records per registered resource (aksray/offline/runner.py records
it; the planner reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AliasSpec:
    """One alias of a registration, as the engine receives it: a field left empty (None) means
    the resource's own (`no_parent`: the alias had no parent at all)."""

    name: str | None
    type: str | None
    parent: str | None
    no_parent: bool


@dataclass(frozen=True)
class RecordedResource:
    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    inputs: dict[str, Any]  # secrets as "[secret]", unknowns as placeholders
    depends_on: tuple[str, ...]  # URNs the engine orders this resource after
    property_dependencies: dict[str, tuple[str, ...]]
    provider: str | None  # provider reference `urn::id`, custom resources only
    protect: bool
    retain_on_delete: bool
    delete_before_replace: bool
    ignore_changes: tuple[str, ...]
    replace_on_changes: tuple[str, ...]
    remote: bool
    # Whether the program set delete_before_replace at all (unset: the provider decides).
    delete_before_replace_defined: bool = False
    aliases: tuple[AliasSpec, ...] = ()
    delete_timeout: str | None = None  # customTimeouts.delete, as the program wrote it

    @property
    def provider_urn(self) -> str | None:
        # A provider reference is `<urn>::<id>`; URNs contain `::` themselves.
        return self.provider.rsplit("::", 1)[0] if self.provider else None

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "custom": self.custom,
            "parent": self.parent,
            "provider": self.provider_urn,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "inputs": self.inputs,
            "dependsOn": list(self.depends_on),
        }


def aliases_of(request: Any) -> tuple[AliasSpec, ...]:
    """The alias specs of a registration (aliases given as whole URNs are left out: the
    program writes none)."""
    found = []
    for alias in request.aliases:
        if alias.WhichOneof("alias") != "spec":
            continue
        spec = alias.spec
        found.append(
            AliasSpec(
                name=spec.name or None,
                type=spec.type or None,
                parent=spec.parentUrn or None,
                no_parent=bool(spec.noParent),
            )
        )
    return tuple(found)
