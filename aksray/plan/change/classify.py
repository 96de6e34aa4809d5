"""The engine's step for each resource: create, update, replace, delete or nothing.

As pulumi 3.260.0 decides (pkg/resource/deploy/step_generator.go): the program's
`ignoreChanges` paths are taken from the old inputs; the provider diffs old and new inputs
(aksray/plan/change/rules.py); `replaceOnChanges` turns any change under its paths into a
replacement; a resource whose provider is replaced is replaced; an input computed from a
resource being replaced is unknown until deploy, so it counts as changed (what `pulumi preview`
shows). `deleteBeforeReplace` is the program's where it sets one, else the provider's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Final

from aksray.offline.runner import RecordedResource
from aksray.plan.change.model import PathChange, Reason, ResourceChange
from aksray.plan.change.paths import covers, diff_inputs
from aksray.plan.change.rules import (
    normalize_azure,
    provider_deletes_first,
    provider_reasons,
    refused,
)

ENGINE_SOURCE: Final = "pulumi 3.260.0 step_generator.go"
PROGRAM_OPTION: Final = "the program's resource option"
PROVIDER_REASON: Final = "provider"  # the path of a replacement its provider's forces


@dataclass(frozen=True)
class Context:
    """What classifying one resource needs to know about the others (recorded URNs of the new
    run)."""

    replaced: Collection[str]  # new-run URNs of resources being replaced
    providers: Mapping[str, RecordedResource]  # new-run provider URN -> provider


def unknown_value(dependency: str) -> str:
    name = dependency.rsplit("::", 1)[-1]
    return f"<unknown until deploy: {name} is replaced>"


def changed_inputs(old: RecordedResource, new: RecordedResource, ctx: Context) -> list[PathChange]:
    """The inputs the provider sees changed: the diff, less what the program ignores, plus what
    is computed from a resource being replaced."""
    changes = [
        c
        for c in normalize_azure(diff_inputs(old.inputs, new.inputs), new.type)
        if not any(covers(ignored, c.path) for ignored in new.ignore_changes)
    ]
    seen = {c.path for c in changes}
    for key, dependencies in sorted(new.property_dependencies.items()):
        replaced = [d for d in dependencies if d in ctx.replaced]
        if not replaced or key in seen or any(c.path.startswith(f"{key}.") for c in changes):
            continue
        if any(covers(ignored, key) for ignored in new.ignore_changes):
            continue
        changes.append(
            PathChange(key, "update", old=old.inputs.get(key), new=unknown_value(replaced[0]))
        )
    return sorted(changes, key=lambda c: c.path)


def classify(
    urn: str, old: RecordedResource, new: RecordedResource, ctx: Context
) -> ResourceChange | None:
    """The step for a resource in both runs; None when `pulumi up` leaves it alone."""
    changes = changed_inputs(old, new, ctx)
    provider = ctx.providers.get(new.provider_urn or "")
    provider_replaced = provider is not None and provider.urn in ctx.replaced
    if not changes and not provider_replaced:
        return None
    reasons = provider_reasons(new, changes, old.inputs, provider)
    for path in new.replace_on_changes:
        reasons += [
            Reason(c.path, f"replaceOnChanges {path}", PROGRAM_OPTION)
            for c in changes
            if covers(path, c.path)
        ]
    if provider_replaced and provider is not None:
        reasons.append(
            Reason(PROVIDER_REASON, f"its provider {provider.name} is replaced", ENGINE_SOURCE)
        )
    base = ResourceChange(
        urn=urn,
        type=new.type,
        name=new.name,
        action="update",
        paths=tuple(changes),
        retain_on_delete=old.retain_on_delete,
        inputs=new.inputs,
        old_inputs=old.inputs,
    )
    if reasons:
        deletes_first = (
            new.delete_before_replace
            if new.delete_before_replace_defined
            else provider_deletes_first(new, old.inputs, reasons)
        )
        return replace(
            base,
            action="replace",
            replace_reasons=tuple(dict.fromkeys(reasons)),
            delete_before_replace=deletes_first,
            # The engine refuses to replace what is protected before and after.
            protect=old.protect and new.protect,
        )
    now, while_running = refused(new, changes, old.inputs)
    return replace(base, refused=tuple(now), refused_while_running=tuple(while_running))


def created(urn: str, new: RecordedResource) -> ResourceChange:
    return ResourceChange(urn=urn, type=new.type, name=new.name, action="create", inputs=new.inputs)


def deleted(urn: str, old: RecordedResource) -> ResourceChange:
    return ResourceChange(
        urn=urn,
        type=old.type,
        name=old.name,
        action="delete",
        protect=old.protect,
        retain_on_delete=old.retain_on_delete,
        old_inputs=old.inputs,
    )
