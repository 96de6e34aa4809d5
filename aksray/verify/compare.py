"""Declared against live: every value the plan declares must be there, equal (quantities by
value: the API server writes `1e11` back as `100e9`); what the API server adds (defaults,
status) is not a difference. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from catalog.quantities import QuantityError, quantity_value

# An annotation the rehearsal rig puts on what it stands in for: a JSON map of the dotted paths
# (or `version`) where what runs on the rig differs from a cluster the stack deployed, to why.
# `aksray verify` reports such a difference as a note, not a drift.
RIG_DIFFERS_ANNOTATION: Final = "aksray.io/rig-differs"


def shown(value: Any) -> str:
    """A value as a line quotes it: a quantity as written (the API server keeps `24` as "24"),
    anything else as JSON, cut to 80 characters."""
    if isinstance(value, str) and not isinstance(value, bool):
        try:
            quantity_value(value)
        except QuantityError:
            pass
        else:
            return value
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _same_quantity(declared: Any, live: Any) -> bool:
    if isinstance(declared, bool) or isinstance(live, bool):
        return False
    if not isinstance(declared, (int, str)) or not isinstance(live, (int, str)):
        return False
    try:
        first: Decimal = quantity_value(declared)
        second: Decimal = quantity_value(live)
    except QuantityError:
        return False
    return first == second


def differences(declared: Any, live: Any, path: str = "") -> list[tuple[str, str]]:
    """(dotted path, what differs) for every declared value the live object lacks or holds
    otherwise; list entries by position."""
    where = path or "(the object)"
    if isinstance(declared, Mapping):
        if not isinstance(live, Mapping):
            return [(where, f"is {shown(live)}, the plan says {shown(declared)}")]
        found: list[tuple[str, str]] = []
        for key, value in declared.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in live:
                found.append((sub, f"is missing, the plan says {shown(value)}"))
            else:
                found += differences(value, live[key], sub)
        return found
    if isinstance(declared, list):
        if not isinstance(live, list) or len(live) != len(declared):
            return [(where, f"is {shown(live)}, the plan says {shown(declared)}")]
        return [
            found
            for i, item in enumerate(declared)
            for found in differences(item, live[i], f"{path}[{i}]")
        ]
    if declared == live or _same_quantity(declared, live):
        return []
    return [(where, f"is {shown(live)}, the plan says {shown(declared)}")]


def rig_differs(obj: Mapping[str, Any] | None) -> dict[str, str]:
    """What the rehearsal rig says differs on an object it stands in for (path -> why)."""
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(RIG_DIFFERS_ANNOTATION)
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}


def explained(path: str, differs: Mapping[str, str]) -> str | None:
    """The rig's reason for a difference at `path` (or under a path it names)."""
    for named, why in differs.items():
        if path == named or path.startswith(f"{named}.") or path.startswith(f"{named}["):
            return why
    return None


def inactive(live: Mapping[str, Any]) -> str | None:
    """Why an object with an `Active` condition is not active; None when it is."""
    conditions = (live.get("status") or {}).get("conditions") or []
    active = next((c for c in conditions if c.get("type") == "Active"), None)
    if active is None:
        return "has no Active condition yet"
    if active.get("status") == "True":
        return None
    return f"is not active: {active.get('reason', '')}: {active.get('message', '')}".rstrip(": ")
