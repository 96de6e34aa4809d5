"""Who may read and write which Blob container: the one rule the storage component, the
settings validation and the plan all read.

Each team's identity may:
- read and write its own container `<team>-data` (workloads/common/layout.py), and no other
  team's: no team can write another team's data;
- read every shared container (`storage.containers`), and write those its own enabled
  workloads stage for everyone (model-stage writes `models`);
- read another team's container only under the one prefix it needs, where one of its enabled
  workloads reads what that team writes there: vllm-batch and llm-serve with the LoRA adapter
  read `adapters/qwen-lora/` of the team that runs qwen-lora, never its datasets, checkpoints
  or results.

The stack grants all of it with one role assignment per team, whose condition
(settings/access/blob_condition.py) names exactly these containers and prefixes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from settings.model import WorkloadSettings
from workloads.catalog import WORKLOADS
from workloads.common.layout import ADAPTER_PREFIX, ADAPTER_WORKLOAD, team_container


@dataclass(frozen=True)
class PrefixRead:
    """Read access to the blobs of `container` under `prefix` only, because `reason`."""

    container: str
    prefix: str  # ends with '/': the folder, never a sibling that starts alike
    reason: str


@dataclass(frozen=True)
class TeamBlobAccess:
    """What one team's identity may do in Blob."""

    team: str
    writes: tuple[str, ...]  # containers it reads and writes, whole
    reads: tuple[str, ...]  # containers it reads, whole
    prefix_reads: tuple[PrefixRead, ...]
    reasons: tuple[tuple[str, str], ...]  # (container, why) for writes and reads

    def reason(self, container: str) -> str:
        return dict(self.reasons).get(container, "")


def adapter_team(workloads: Iterable[WorkloadSettings], reader: str) -> str:
    """The team whose container holds the LoRA adapter: the team that runs qwen-lora (enabled
    or not: its adapter stays where an earlier run wrote it), else the reader's own."""
    for workload in workloads:
        if workload.name == ADAPTER_WORKLOAD and workload.team:
            return workload.team
    return reader


def blob_access(
    teams: Sequence[str], shared: Sequence[str], workloads: Sequence[WorkloadSettings]
) -> tuple[TeamBlobAccess, ...]:
    """What each team's identity may read and write, team by team."""
    enabled = [w for w in workloads if w.enabled]
    writers = {
        (w.team, container): w.name
        for w in enabled
        for container in WORKLOADS[w.name].writes_shared
    }
    found = []
    for team in teams:
        writes = [team_container(team)]
        reasons = [(team_container(team), "the team's own")]
        reads = []
        for container in shared:
            writer = writers.get((team, container))
            if writer is not None:
                writes.append(container)
                reasons.append((container, f"{writer} writes it for all"))
            else:
                reads.append(container)
                reasons.append((container, "shared"))
        found.append(
            TeamBlobAccess(
                team=team,
                writes=tuple(writes),
                reads=tuple(reads),
                prefix_reads=tuple(_adapter_reads(team, workloads, enabled)),
                reasons=tuple(reasons),
            )
        )
    return tuple(found)


def _adapter_reads(
    team: str, workloads: Sequence[WorkloadSettings], enabled: Sequence[WorkloadSettings]
) -> list[PrefixRead]:
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
    return [PrefixRead(team_container(source), f"{ADAPTER_PREFIX}/", reason)]
