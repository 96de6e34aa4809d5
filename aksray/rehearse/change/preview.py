"""What the real engine would do: `pulumi preview --json` of the next stack, step by step, and
how it compares with the change `aksray plan --since` predicted.

Resources are compared by the part of their URN that names them (type chain and name): the rig's
engine stack and the offline run carry different stack names. Only custom resources count: the
engine also lists the stack, its components and its providers, which the plan models apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

# The preview's step operations, as the plan names the same actions.
OPS: Final[dict[str, str]] = {
    "create": "create",
    "update": "update",
    "replace": "replace",
    "create-replacement": "replace",
    "delete-replaced": "replace",
    "delete": "delete",
    "same": "same",
    "read": "same",
    "refresh": "same",
    "discard": "delete",
}
SKIPPED_TYPES: Final = ("pulumi:pulumi:Stack", "pulumi:providers:")


def resource_key(urn: str) -> str:
    """`urn:pulumi:STACK::PROJECT::TYPE-CHAIN::NAME` -> `TYPE-CHAIN::NAME`."""
    parts = urn.split("::", 2)
    return parts[2] if len(parts) == 3 else urn


def leaf_type(key: str) -> str:
    return key.split("::", 1)[0].rsplit("$", 1)[-1]


def counted(key: str, custom: bool = True) -> bool:
    return custom and not leaf_type(key).startswith(SKIPPED_TYPES)


def preview_actions(document: Mapping[str, Any]) -> dict[str, str]:
    """Resource key -> what `pulumi preview --json` says happens to it (`same` included)."""
    actions: dict[str, str] = {}
    for step in document.get("steps") or []:
        urn = str(step.get("urn", ""))
        op = OPS.get(str(step.get("op", "")), str(step.get("op", "")))
        state = step.get("newState") or step.get("oldState") or {}
        if not counted(resource_key(urn), bool(state.get("custom", True))):
            continue
        key = resource_key(urn)
        # A replacement shows as several steps; any of them makes the resource replaced.
        if actions.get(key) != "replace":
            actions[key] = op
    return actions


def parse_preview(text: str) -> dict[str, str]:
    """The JSON document `pulumi preview --json` prints."""
    return preview_actions(json.loads(text))


def differences(
    predicted: Mapping[str, str], previewed: Mapping[str, str], keys: Iterable[str] = ()
) -> list[str]:
    """One line per resource the plan and the preview disagree on (`same` where a side does
    not list it); `keys`: more resources both should leave alone."""
    found = []
    for key in sorted(
        set(predicted) | {k for k, op in previewed.items() if op != "same"} | set(keys)
    ):
        plan = predicted.get(key, "same")
        engine = previewed.get(key, "same")
        if plan != engine:
            found.append(f"{key}: the plan says {plan}, the engine's preview {engine}")
    return found
