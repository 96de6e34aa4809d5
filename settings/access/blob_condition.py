"""A team's Blob access (settings/access/blob.py) as the condition of its one role assignment:
Azure attribute-based access control (ABAC) for Blob Storage, condition version 2.0.

Three clauses, joined by AND, each of the documented form `(!(ActionMatches{...})) OR (...)`:
- reading a blob (`blobs/read` but not its `Blob.List` suboperation): in a container the team
  reads or writes whole, or under a prefix it reads (`@Resource[...blobs:path]`);
- listing blobs (`Blob.List`, which carries no path): the same containers, or under the prefix
  (`@Request[...blobs:prefix]`, so a listing of the whole container is refused there);
- writing, appending, deleting or renaming a blob: only in the containers it writes.

Any other action of the role is not constrained here; the role holds no other data action
(manifests/identity.py). Azure limits a condition to 8,192 characters (MAX_CONDITION_LENGTH):
settings/storage.py refuses a stack whose shared containers would make one longer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from settings.access.blob import TeamBlobAccess

CONDITION_VERSION: Final = "2.0"
MAX_CONDITION_LENGTH: Final = 8192
CONTAINERS: Final = "Microsoft.Storage/storageAccounts/blobServices/containers"
READ_ACTION: Final = f"{CONTAINERS}/blobs/read"
WRITE_ACTIONS: Final = (
    f"{CONTAINERS}/blobs/write",
    f"{CONTAINERS}/blobs/add/action",
    f"{CONTAINERS}/blobs/delete",
    f"{CONTAINERS}/blobs/move/action",
)
LIST_SUBOPERATION: Final = "Blob.List"
CONTAINER_NAME: Final = f"@Resource[{CONTAINERS}:name]"
BLOB_PATH: Final = f"@Resource[{CONTAINERS}/blobs:path]"
LIST_PREFIX: Final = f"@Request[{CONTAINERS}/blobs:prefix]"


def _named(containers: Sequence[str]) -> str:
    if len(containers) == 1:
        return f"{CONTAINER_NAME} StringEquals '{containers[0]}'"
    names = ", ".join(f"'{c}'" for c in containers)
    return f"{CONTAINER_NAME} ForAnyOfAnyValues:StringEquals {{{names}}}"


def _clause(action: str, allowed: Sequence[str]) -> str:
    return f"(\n (\n  {action}\n )\n OR\n (\n  " + "\n  OR\n  ".join(allowed) + "\n )\n)"


def blob_condition(access: TeamBlobAccess) -> str:
    """The condition of `access.team`'s role assignment on the storage account."""
    whole = [*access.writes, *access.reads]
    read = [_named(whole)] + [
        f"({CONTAINER_NAME} StringEquals '{p.container}' AND {BLOB_PATH} StringStartsWith "
        f"'{p.prefix}')"
        for p in access.prefix_reads
    ]
    listing = [_named(whole)] + [
        f"({CONTAINER_NAME} StringEquals '{p.container}' AND {LIST_PREFIX} StringStartsWith "
        f"'{p.prefix}')"
        for p in access.prefix_reads
    ]
    not_writing = " AND ".join(f"!(ActionMatches{{'{a}'}})" for a in WRITE_ACTIONS)
    clauses = [
        _clause(
            f"!(ActionMatches{{'{READ_ACTION}'}} AND NOT "
            f"SubOperationMatches{{'{LIST_SUBOPERATION}'}})",
            read,
        ),
        _clause(
            f"!(ActionMatches{{'{READ_ACTION}'}} AND SubOperationMatches{{'{LIST_SUBOPERATION}'}})",
            listing,
        ),
        _clause(not_writing, [_named(access.writes)]),
    ]
    return "\nAND\n".join(clauses)
