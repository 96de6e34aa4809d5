"""Input paths as the Pulumi engine writes them, and the difference between two sets of inputs.

A path is `spec.resourceGroups[0].flavors`, with a key that is not a plain name quoted:
`metadata.labels["kueue.x-k8s.io/queue-name"]` (the engine's PropertyPath). `covers` is the
engine's prefix match for `replaceOnChanges` and `ignoreChanges`, `*` matching any one segment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from aksray.plan.change.model import PathChange

Segment = str | int
_PLAIN: Final = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_TOKEN: Final = re.compile(r'\.?([A-Za-z_$*][A-Za-z0-9_$\-]*)|\[(\d+|\*)\]|\["((?:[^"\\]|\\.)*)"\]')


def format_path(segments: Sequence[Segment]) -> str:
    text = ""
    for segment in segments:
        if isinstance(segment, int):
            text += f"[{segment}]"
        elif _PLAIN.match(segment) or segment == "*":
            text += f".{segment}" if text else segment
        else:
            text += f"[{json.dumps(segment)}]"
    return text


def parse_path(path: str) -> tuple[Segment, ...]:
    """`a.b[0]["c.d"]` -> ("a", "b", 0, "c.d"); `*` stays a wildcard segment."""
    segments: list[Segment] = []
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if match is None or match.end() == position:
            raise ValueError(f"not a property path: {path!r} (at {position})")
        name, index, quoted = match.groups()
        if name is not None:
            segments.append(name)
        elif index is not None:
            segments.append("*" if index == "*" else int(index))
        else:
            segments.append(json.loads(f'"{quoted}"'))
        position = match.end()
    return tuple(segments)


def covers(prefix: str, path: str) -> bool:
    """Whether `path` is `prefix` or lies under it (`*` matches any one segment)."""
    outer, inner = parse_path(prefix), parse_path(path)
    if len(outer) > len(inner):
        return False
    return all(o in ("*", i) for o, i in zip(outer, inner, strict=False))


def value_at(value: Any, path: str) -> tuple[bool, Any]:
    """(found, value) at a path of plain data."""
    current = value
    for segment in parse_path(path):
        if isinstance(current, list) and isinstance(segment, int) and segment < len(current):
            current = current[segment]
            continue
        if not isinstance(current, Mapping) or not isinstance(segment, str):
            return False, None
        if segment not in current:
            return False, None
        current = current[segment]
    return True, current


def diff_inputs(old: Any, new: Any) -> list[PathChange]:
    """Every changed leaf between two sets of inputs, in path order. Objects are compared key by
    key and lists index by index, as both providers' detailed diffs report them; a key or an
    element that appears or goes is one add or delete of its whole value."""
    return list(_diff((), old, new))


def _diff(at: tuple[Segment, ...], old: Any, new: Any) -> Iterator[PathChange]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            here = (*at, key)
            if key not in new:
                yield PathChange(format_path(here), "delete", old=old[key])
            elif key not in old:
                yield PathChange(format_path(here), "add", new=new[key])
            else:
                yield from _diff(here, old[key], new[key])
    elif isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            here = (*at, index)
            if index >= len(new):
                yield PathChange(format_path(here), "delete", old=old[index])
            elif index >= len(old):
                yield PathChange(format_path(here), "add", new=new[index])
            else:
                yield from _diff(here, old[index], new[index])
    elif old != new or type(old) is not type(new):
        yield PathChange(format_path(at), "update", old=old, new=new)


def top_level(path: str) -> str:
    first = parse_path(path)[0]
    return str(first)
