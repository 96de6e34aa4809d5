"""The plan summary's storage part: every Blob container and which team may write or read it.

Read from the role assignments the program registered: each team's one assignment on the
account, whose condition is evaluated (aksray/plan/model/abac.py) for a write, a read and a
listing in every container, so the table shows what the conditions `pulumi up` would write
allow, not what they were meant to. Where the stack registers none
(`cluster.createRoleAssignments: false`, an existing account) it shows what an admin must
grant, from the rule the program follows (settings/access/blob.py), with each team's condition
in `--json` for the admin to use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.offline.runner import RunResult
from aksray.plan.model.abac import BlobRequest, Node, parse_condition
from aksray.plan.model.plan import Plan
from aksray.plan.report.tables import Render, text_table
from manifests.identity import team_identities
from settings.access.blob import blob_access
from settings.access.blob_condition import (
    BLOB_PATH,
    CONTAINER_NAME,
    LIST_PREFIX,
    LIST_SUBOPERATION,
    READ_ACTION,
    WRITE_ACTIONS,
    blob_condition,
)
from workloads.common.layout import team_container

ROLE_ASSIGNMENT: Final = "azure-native:authorization:RoleAssignment"
IDENTITY: Final = "azure-native:managedidentity:UserAssignedIdentity"
_PREFIX = re.compile(r"StringStartsWith '([^']*)'")
# A blob path no prefix the stack grants covers: a read of it needs the whole container.
_ANY_PATH: Final = "checkpoints/any-run/any-file"


@dataclass(frozen=True)
class ContainerAccess:
    """What one condition allows in one container: write, read all, or read under prefixes."""

    write: bool
    read: bool
    prefixes: tuple[str, ...]


# A container no condition names: evaluated in place of every container a condition does not
# name, which its comparisons (equality with named containers) treat alike.
_UNNAMED: Final = "a-container-no-condition-names"
_NOTHING: Final = ContainerAccess(write=False, read=False, prefixes=())
_NAMED = re.compile(r"StringEquals (?:'([^']*)'|\{([^}]*)\})")


def condition_access(condition: str) -> dict[str, ContainerAccess]:
    """What `condition` allows in each container it names, and (under `_UNNAMED`) in any
    other: a write, a read and a listing evaluated for each."""
    node = parse_condition(condition)
    named: set[str] = set()
    for one, several in _NAMED.findall(condition):
        named.update([one] if one else (v.strip().strip("'") for v in several.split(",")))
    prefixes = tuple(dict.fromkeys(_PREFIX.findall(condition)))
    found = {}
    for container in (*sorted(named), _UNNAMED):
        at = {CONTAINER_NAME: container}
        write = all(
            node(BlobRequest(action, {**at, BLOB_PATH: _ANY_PATH})) for action in WRITE_ACTIONS
        )
        read = _reads(node, at, _ANY_PATH, None)
        under = tuple(p for p in prefixes if not read and _reads(node, at, f"{p}any-file", p))
        found[container] = ContainerAccess(write, read, under)
    return found


def container_access(access: Mapping[str, ContainerAccess], container: str) -> ContainerAccess:
    return access.get(container, access[_UNNAMED])


def _reads(node: Node, at: Mapping[str, str], path: str, prefix: str | None) -> bool:
    listing = dict(at) if prefix is None else {**at, LIST_PREFIX: prefix}
    return node(BlobRequest(READ_ACTION, {**at, BLOB_PATH: path})) and node(
        BlobRequest(READ_ACTION, listing, LIST_SUBOPERATION)
    )


def recorded_conditions(result: RunResult) -> dict[str, str]:
    """identity name -> the condition of its Blob role assignment on the account."""
    identities = {
        f"principal id of identity {i.inputs['resourceName']}": i.inputs["resourceName"]
        for i in result.by_type(IDENTITY)
    }
    found = {}
    for assignment in result.by_type(ROLE_ASSIGNMENT):
        principal = _placeholder(assignment.inputs["principalId"])
        if principal in identities and assignment.inputs.get("condition"):
            found[identities[principal]] = str(assignment.inputs["condition"])
    return found


def _placeholder(value: object) -> str:
    text = str(value)
    return text.removeprefix("<unknown until deploy: ").removesuffix(">")


def storage(plan: Plan) -> dict[str, Any]:
    settings = plan.settings
    store = settings.storage
    if not store.enabled:
        return {"enabled": False, "containers": []}
    teams = [team.name for team in settings.scheduling.teams]
    recorded = recorded_conditions(plan.result)
    identity = {
        i.team: i.identity_name
        for i in team_identities(
            settings.stack, ((t.name, t.namespace) for t in settings.scheduling.teams)
        )
    }
    planned = {
        a.team: blob_condition(a) for a in blob_access(teams, store.containers, settings.workloads)
    }
    conditions = {t: recorded.get(identity[t], planned[t]) for t in teams}
    allowed = {t: condition_access(conditions[t]) for t in teams}
    # By container, the teams whose condition names it; and teams allowed anything in every
    # container (none, unless a condition leaves an action unconstrained).
    naming: dict[str, list[str]] = {}
    for team, access in allowed.items():
        for container in access:
            naming.setdefault(container, []).append(team)
    everywhere = [t for t, a in allowed.items() if a[_UNNAMED] != _NOTHING]
    containers = []
    for name in (*store.containers, *(team_container(t) for t in teams)):
        reaching = dict.fromkeys([*naming.get(name, []), *everywhere])
        access = {team: container_access(allowed[team], name) for team in reaching}
        containers.append(
            {
                "name": name,
                "kind": "shared" if name in store.containers else "team",
                "write": [t for t, a in access.items() if a.write],
                "read": [t for t, a in access.items() if a.read and not a.write],
                "readPrefix": [
                    {"team": t, "prefix": p} for t, a in access.items() for p in a.prefixes
                ],
            }
        )
    return {
        "enabled": True,
        "grantedByStack": bool(recorded),
        "containers": containers,
        "teams": [{"team": t, "identity": identity[t], "condition": conditions[t]} for t in teams],
    }


def storage_lines(data: Mapping[str, Any], render: Render = text_table) -> list[str]:
    if not data["enabled"]:
        return ["Blob storage: off (storage.enabled: false)"]
    who = "the stack's role assignments" if data["grantedByStack"] else "for an admin to grant"
    title = (
        f"Blob containers (who may write and read, {who}: one assignment per team on the "
        "account, its condition naming the containers)"
    )
    rows = [
        (
            c["name"],
            c["kind"],
            ", ".join(c["write"]) or "-",
            ", ".join([*c["read"], *(f"{r['team']} ({r['prefix']} only)" for r in c["readPrefix"])])
            or "-",
        )
        for c in data["containers"]
    ]
    return render(title, ("container", "kind", "write", "read"), rows)
