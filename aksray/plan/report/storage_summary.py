"""The plan summary's storage part: every Blob container and which team may write or read it.

Read from the role assignments the program registered (each one's scope and role definition,
per principal), so the table shows what `pulumi up` would grant. Where the stack registers none
(`cluster.createRoleAssignments: false`, an existing account) it shows what an admin must
grant, from the same rule the program follows (settings/blob_access.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.offline.runner import RunResult
from aksray.plan.model.plan import Plan
from aksray.plan.report.tables import Render, text_table
from manifests.identity import BLOB_ROLE_IDS, team_identities
from settings.blob_access import blob_grants
from workloads.common.layout import team_container

ROLE_ASSIGNMENT: Final = "azure-native:authorization:RoleAssignment"
CONTAINER: Final = "azure-native:storage:BlobContainer"
IDENTITY: Final = "azure-native:managedidentity:UserAssignedIdentity"
_ROLES_BY_ID: Final = {role_id: role for role, role_id in BLOB_ROLE_IDS.items()}


@dataclass(frozen=True)
class RecordedGrant:
    """A registered role assignment on a Blob container: principal (identity name), container
    name, and the role (`reader` / `contributor`, or the role definition id if neither)."""

    identity: str
    container: str
    role: str


def recorded_blob_grants(result: RunResult) -> list[RecordedGrant]:
    """Every registered role assignment whose scope is one of the stack's Blob containers, or
    the account itself (container "*account*")."""
    by_id = {
        f"id of BlobContainer {c.name}": c.inputs["containerName"]
        for c in result.by_type(CONTAINER)
    }
    by_id.update(
        {
            f"id of StorageAccount {a.name}": "*account*"
            for a in result.by_type("azure-native:storage:StorageAccount")
        }
    )
    identities = {
        f"principal id of identity {i.inputs['resourceName']}": i.inputs["resourceName"]
        for i in result.by_type(IDENTITY)
    }
    grants = []
    for assignment in result.by_type(ROLE_ASSIGNMENT):
        scope = _placeholder(assignment.inputs["scope"])
        if scope not in by_id:
            continue
        role_id = str(assignment.inputs["roleDefinitionId"]).rsplit("/", 1)[-1]
        principal = _placeholder(assignment.inputs["principalId"])
        grants.append(
            RecordedGrant(
                identities.get(principal, principal),
                by_id[scope],
                _ROLES_BY_ID.get(role_id, role_id),
            )
        )
    return grants


def _placeholder(value: object) -> str:
    text = str(value)
    return text.removeprefix("<unknown until deploy: ").removesuffix(">")


def storage(plan: Plan) -> dict[str, Any]:
    settings = plan.settings
    store = settings.storage
    if not store.enabled:
        return {"enabled": False, "containers": []}
    teams = [team.name for team in settings.scheduling.teams]
    recorded = recorded_blob_grants(plan.result)
    if recorded:
        team_of = {
            i.identity_name: i.team
            for i in team_identities(
                settings.stack, ((t.name, t.namespace) for t in settings.scheduling.teams)
            )
        }
        pairs = [(team_of.get(g.identity, g.identity), g.container, g.role) for g in recorded]
    else:
        pairs = [
            (g.team, g.container, g.role)
            for g in blob_grants(teams, store.containers, settings.workloads)
        ]
    containers = []
    for name in (*store.containers, *(team_container(t) for t in teams)):
        containers.append(
            {
                "name": name,
                "kind": "shared" if name in store.containers else "team",
                "write": [t for t, c, role in pairs if c == name and role == "contributor"],
                "read": [t for t, c, role in pairs if c == name and role == "reader"],
            }
        )
    return {"enabled": True, "grantedByStack": bool(recorded), "containers": containers}


def storage_lines(data: Mapping[str, Any], render: Render = text_table) -> list[str]:
    if not data["enabled"]:
        return ["Blob storage: off (storage.enabled: false)"]
    who = "the stack's role assignments" if data["grantedByStack"] else "for an admin to grant"
    title = f"Blob containers (who may write and read, {who}; each grant scoped to its container)"
    rows = [
        (c["name"], c["kind"], ", ".join(c["write"]) or "-", ", ".join(c["read"]) or "-")
        for c in data["containers"]
    ]
    return render(title, ("container", "kind", "write", "read"), rows)
