"""Who may read and write which Blob container: the one rule the storage component, the
settings validation and the plan all read.

Each team's identity gets:
- Storage Blob Data Contributor on its own container `<team>-data` (workloads/common/layout.py),
  and on nothing else of the teams': no team can write another team's data;
- Storage Blob Data Reader on every shared container (`storage.containers`), except the shared
  containers its own enabled workloads stage for everyone (model-stage writes `models`), where
  it is Contributor;
- Storage Blob Data Reader on another team's container only where one of its enabled
  workloads reads what that team writes there: vllm-batch and llm-serve with the LoRA adapter
  read it from the container of the team that runs qwen-lora.

Every grant is scoped to one container, never to the account.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from settings.model import WorkloadSettings
from workloads.catalog import WORKLOADS
from workloads.common.layout import ADAPTER_WORKLOAD, team_container

BlobRole = Literal["reader", "contributor"]
BLOB_ROLES: Final[tuple[BlobRole, ...]] = ("reader", "contributor")


@dataclass(frozen=True)
class BlobGrant:
    """One role assignment: `team`'s identity holds `role` on `container`, because `reason`."""

    team: str
    container: str
    role: BlobRole
    reason: str


def adapter_team(workloads: Iterable[WorkloadSettings], reader: str) -> str:
    """The team whose container holds the LoRA adapter: the team that runs qwen-lora (enabled
    or not: its adapter stays where an earlier run wrote it), else the reader's own."""
    for workload in workloads:
        if workload.name == ADAPTER_WORKLOAD and workload.team:
            return workload.team
    return reader


def blob_grants(
    teams: Sequence[str], shared: Sequence[str], workloads: Sequence[WorkloadSettings]
) -> tuple[BlobGrant, ...]:
    """Every Blob role assignment of the stack's team identities, team by team."""
    enabled = [w for w in workloads if w.enabled]
    writers = {
        (w.team, container): w.name
        for w in enabled
        for container in WORKLOADS[w.name].writes_shared
    }
    grants: list[BlobGrant] = []
    for team in teams:
        grants.append(BlobGrant(team, team_container(team), "contributor", "the team's own"))
        for container in shared:
            writer = writers.get((team, container))
            if writer is not None:
                grants.append(
                    BlobGrant(team, container, "contributor", f"{writer} writes it for all")
                )
            else:
                grants.append(BlobGrant(team, container, "reader", "shared"))
        grants += _adapter_reads(team, workloads, enabled)
    return tuple(grants)


def _adapter_reads(
    team: str, workloads: Sequence[WorkloadSettings], enabled: Sequence[WorkloadSettings]
) -> list[BlobGrant]:
    readers = [
        w.name
        for w in enabled
        if w.team == team and WORKLOADS[w.name].reads_adapter and w.lora_adapter
    ]
    source = adapter_team(workloads, team)
    if not readers or source == team:
        return []
    verb = "reads" if len(readers) == 1 else "read"
    reason = f"{', '.join(readers)} {verb} the {ADAPTER_WORKLOAD} adapter there"
    return [BlobGrant(team, team_container(source), "reader", reason)]
