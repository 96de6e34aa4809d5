"""The resource tree of a run, as text."""

from __future__ import annotations

from aksray.offline.runner import RecordedResource, RunResult


def _flags(resource: RecordedResource) -> str:
    flags = [
        flag
        for flag, on in (
            ("protected", resource.protect),
            ("retained on delete", resource.retain_on_delete),
        )
        if on
    ]
    return f"  [{', '.join(flags)}]" if flags else ""


def resource_tree(result: RunResult) -> list[str]:
    by_urn = result.by_urn()
    children: dict[str | None, list[RecordedResource]] = {}
    for resource in result.resources:
        parent = resource.parent if resource.parent in by_urn else None
        children.setdefault(parent, []).append(resource)

    lines: list[str] = []

    def walk(parent: str | None, prefix: str) -> None:
        items = children.get(parent, [])
        for index, resource in enumerate(items):
            last = index == len(items) - 1
            branch = "└─ " if last else "├─ "
            lines.append(f"{prefix}{branch}{resource.type}  {resource.name}{_flags(resource)}")
            walk(resource.urn, prefix + ("   " if last else "│  "))

    lines.append(f"stack {result.stack}")
    walk(None, "")
    return lines
