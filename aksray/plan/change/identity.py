"""How the engine knows a resource from one `pulumi up` to the next: its URN.

The engine's URN carries the type of every parent (`Platform$AksCluster$AgentPool`), where the
SDK's mock monitor writes only the nearest one; a resource keeps its identity across a change
of type, name or parent only through an alias. `engine_urns` rebuilds the engine's URN of every
recorded resource, `match` pairs the old run's resources with the new one's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from aksray.offline.recorded import AliasSpec, RecordedResource

STACK_TYPE: Final = "pulumi:pulumi:Stack"


def _split(urn: str) -> tuple[str, str, str]:
    """(prefix `urn:pulumi:<stack>::<project>`, qualified type, name) of a URN."""
    head, rest = urn.split("::", 1)
    project, rest = rest.split("::", 1)
    qualified, name = rest.split("::", 1)
    return f"{head}::{project}", qualified, name


def engine_urns(resources: Sequence[RecordedResource]) -> dict[str, str]:
    """Recorded URN -> the engine's URN, every parent's type in the chain."""
    by_urn = {r.urn: r for r in resources}
    found: dict[str, str] = {}

    def qualified(resource: RecordedResource) -> str:
        if resource.urn in found:
            return _split(found[resource.urn])[1]
        parent = by_urn.get(resource.parent or "")
        chain = resource.type if parent is None else f"{qualified(parent)}${resource.type}"
        prefix = _split(resource.urn)[0]
        found[resource.urn] = f"{prefix}::{chain}::{resource.name}"
        return chain

    for resource in resources:
        qualified(resource)
    return found


def alias_urns(
    resource: RecordedResource, engine: dict[str, str], parent_chain: str | None
) -> tuple[str, ...]:
    """The engine URNs a resource answers to through its aliases (same stack and project);
    `parent_chain`: the qualified type of its parent (None at the top)."""
    prefix = _split(engine[resource.urn])[0]
    return tuple(
        _alias_urn(alias, resource, prefix, engine, parent_chain) for alias in resource.aliases
    )


def _alias_urn(
    alias: AliasSpec,
    resource: RecordedResource,
    prefix: str,
    engine: dict[str, str],
    parent_chain: str | None,
) -> str:
    type_ = alias.type or resource.type
    name = alias.name or resource.name
    if alias.no_parent:
        chain = type_
    elif alias.parent is not None:
        parent = engine.get(alias.parent)
        chain = type_ if parent is None else f"{_split(parent)[1]}${type_}"
    else:
        chain = type_ if parent_chain is None else f"{parent_chain}${type_}"
    return f"{prefix}::{chain}::{name}"


@dataclass(frozen=True)
class Matched:
    """The two runs' resources by engine URN, and which old resource each new one continues."""

    old: dict[str, RecordedResource]  # engine URN -> old resource
    new: dict[str, RecordedResource]  # engine URN -> new resource
    continues: dict[str, str]  # new engine URN -> the old engine URN it continues
    new_urns: dict[str, str]  # new recorded URN -> engine URN


def match(old: Sequence[RecordedResource], new: Sequence[RecordedResource]) -> Matched:
    """A new resource continues the old one with its own URN or, failing that, one of its
    aliases' (an alias never claims a URN the new run registers itself)."""
    old_engine, new_engine = engine_urns(old), engine_urns(new)
    old_by = {old_engine[r.urn]: r for r in old}
    new_by = {new_engine[r.urn]: r for r in new}
    recorded_new = {r.urn: r for r in new}
    continues: dict[str, str] = {}
    for urn, resource in new_by.items():
        if urn in old_by:
            continues[urn] = urn
            continue
        parent = recorded_new.get(resource.parent or "")
        parent_chain = None if parent is None else _split(new_engine[parent.urn])[1]
        for candidate in alias_urns(resource, new_engine, parent_chain):
            if candidate in old_by and candidate not in new_by:
                continues[urn] = candidate
                break
    return Matched(old_by, new_by, continues, new_engine)
