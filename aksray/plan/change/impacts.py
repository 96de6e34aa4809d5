"""What a change does to a live platform, one line each: where `pulumi up` fails or stops
halfway (errors), and what it kills, deletes or cuts on the way (warnings).

`live_impacts` runs every concern in turn; the Kueue and workload ones are in
aksray/plan/change/live.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aksray.offline.runner import RunResult
from aksray.plan.change.classify import PROVIDER_REASON
from aksray.plan.change.describe import goes, label
from aksray.plan.change.live import access_impacts, kueue_impacts, work_impacts
from aksray.plan.change.model import Impact, ResourceChange
from aksray.plan.change.paths import value_at

STORAGE_ACCOUNT: Final = "azure-native:storage:StorageAccount"
BLOB_CONTAINER: Final = "azure-native:storage:BlobContainer"
BLOB_SERVICE: Final = "azure-native:storage:BlobServiceProperties"
RESOURCE_GROUP: Final = "azure-native:resources:ResourceGroup"
AGENT_POOL: Final = "azure-native:containerservice:AgentPool"
# Azure restores a deleted storage account for 14 days, while its resource group exists
# (Microsoft Learn: "Recover a deleted storage account").
ACCOUNT_RECOVERY_DAYS: Final = 14


def live_impacts(
    changes: Sequence[ResourceChange], old: RunResult, new: RunResult
) -> tuple[Impact, ...]:
    # Objects replaced only because their provider is (another cluster): the provider's and the
    # cluster's own lines say it once.
    changes = [c for c in changes if not _only_provider(c)]
    found: list[Impact] = []
    found += refused_impacts(changes)
    found += protected_impacts(changes)
    found += data_impacts(changes, old)
    found += work_impacts(changes)
    found += kueue_impacts(changes, new)
    found += access_impacts(changes)
    # Errors first, then in resource order (each concern already is).
    return tuple(sorted(found, key=lambda i: i.severity != "error"))


def _only_provider(change: ResourceChange) -> bool:
    return change.action == "replace" and all(
        r.path == PROVIDER_REASON for r in change.replace_reasons
    )


def refused_impacts(changes: Sequence[ResourceChange]) -> list[Impact]:
    found = []
    for change in changes:
        if change.refused:
            paths = ", ".join(r.path for r in change.refused)
            rules = "; ".join(dict.fromkeys(f"{r.rule!r} ({r.source})" for r in change.refused))
            found.append(
                Impact(
                    "error",
                    "update-refused",
                    change.urn,
                    f"{label(change)}: `pulumi up` fails here, the API refuses to change "
                    f"{paths} in place: {rules}; {_how_to_change(change)}",
                )
            )
        for reason in change.refused_while_running:
            found.append(
                Impact(
                    "warning",
                    "update-refused",
                    change.urn,
                    f"{label(change)}: the API refuses to change {reason.path} while its "
                    f"workload runs ({reason.rule!r}; {reason.source}): `pulumi up` fails here "
                    "unless the job is suspended or finished",
                )
            )
    return found


def _how_to_change(change: ResourceChange) -> str:
    if change.type == AGENT_POOL:
        return (
            "add a pool with the new setting beside this one, let the work move, then remove "
            "the old pool (docs/changing.md)"
        )
    return (
        "keep the old value, or remove the object in one `pulumi up` and add it back changed "
        "in the next (docs/changing.md)"
    )


def protected_impacts(changes: Sequence[ResourceChange]) -> list[Impact]:
    found = []
    for change in changes:
        if not change.protect:
            continue
        setting = "storage.protect" if _is_storage(change.type) else "its protect option"
        if change.action == "replace":
            why = ", ".join(sorted({r.path for r in change.replace_reasons}))
            found.append(
                Impact(
                    "error",
                    "protected",
                    change.urn,
                    f"{label(change)}: `pulumi up` stops here: the change of {why} replaces it, "
                    f"and it is protected; keep the old value, or copy its data, set {setting} "
                    "to false in one `pulumi up` and make the change in the next",
                )
            )
        else:
            found.append(
                Impact(
                    "error",
                    "protected",
                    change.urn,
                    f"{label(change)}: `pulumi up` applies every other change, then stops: it "
                    f"is protected and the new stack removes it; to remove it, copy its data, "
                    f"then `pulumi state unprotect '{change.urn}'` before this `pulumi up` (or "
                    f"set {setting} to false, which unprotects all of it, in an earlier one)",
                )
            )
    return found


def _is_storage(type_: str) -> bool:
    return (
        type_.startswith("azure-native:storage:")
        or type_ == RESOURCE_GROUP
        or type_.startswith("random:")
    )


def data_impacts(changes: Sequence[ResourceChange], old: RunResult) -> list[Impact]:
    retention = _container_retention_days(old)
    found = []
    for change in changes:
        if not goes(change):
            continue
        what = "deleted" if change.action == "delete" else "replaced by a new, empty one"
        if change.type == BLOB_CONTAINER:
            keep = (
                f"container soft delete keeps it {retention} days (restore it with `az storage "
                "container restore`)"
                if retention
                else "no container soft delete is on: nothing brings it back"
            )
            found.append(
                Impact(
                    "warning",
                    "data-deleted",
                    change.urn,
                    f"{label(change)}: {what}; every blob in it is deleted; {keep}",
                )
            )
        elif change.type == STORAGE_ACCOUNT:
            found.append(
                Impact(
                    "warning",
                    "data-deleted",
                    change.urn,
                    f"{label(change)}: {what}; every container and blob in it is deleted; Azure "
                    f"restores a deleted account for {ACCOUNT_RECOVERY_DAYS} days, only while "
                    "its resource group exists",
                )
            )
        elif change.type == RESOURCE_GROUP:
            found.append(
                Impact(
                    "warning",
                    "data-deleted",
                    change.urn,
                    f"{label(change)}: {what}; Azure deletes everything in it with it",
                )
            )
    return found


def _container_retention_days(old: RunResult) -> int | None:
    """How long the old stack's container soft delete keeps a deleted container."""
    services = old.by_type(BLOB_SERVICE)
    return _retention(services[0].inputs) if services else None


def _retention(inputs: Mapping[str, Any]) -> int | None:
    enabled = value_at(inputs, "containerDeleteRetentionPolicy.enabled")[1]
    days = value_at(inputs, "containerDeleteRetentionPolicy.days")[1]
    return days if enabled is True and isinstance(days, int) else None
