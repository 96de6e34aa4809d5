"""What the stack can admit and bind, for the scenarios: read from the scheduling core.

A scenario sizes its gangs here, never larger than the team's quota plus what it may borrow (the
core's admission model) nor than the pool's nodes hold of its workers (scheduling/workers.py),
and says "not applicable" with the reason where the stack cannot show it, instead of waiting
for a gang that can never run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from catalog.quantities import GPU_RESOURCE
from scheduling.admission import admissible
from scheduling.nodes import gpu_share
from scheduling.queues import TeamQueue, team_queues
from scheduling.workers import fits_share, gpus_used_per_node, per_gpu, worker_requests
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from settings.model import Settings, TeamSettings

TRAINING: Final = "qwen-lora"
ENDPOINT: Final = "llm-serve"
SMALL_JOBS: Final = ("aurora-finetune", "vllm-batch")


class NotApplicableError(Exception):
    """The stack cannot show this scenario; the message says why."""


def queues(settings: Settings) -> dict[str, TeamQueue]:
    return team_queues(settings)


def gpu_quota(settings: Settings, team: TeamSettings, flavor: str) -> int:
    """The team's nominal GPUs of a flavor (0 where it has none)."""
    return queues(settings)[team.name].nominal(flavor)[GPU_RESOURCE]


def gpu_flavors(settings: Settings, team: TeamSettings) -> list[str]:
    """The team's GPU flavors in Kueue's order (the pools' order), where it has GPU quota."""
    return [p.name for p in settings.cluster.gpu_pools if gpu_quota(settings, team, p.name) > 0]


def pool_gpus(settings: Settings, flavor: str) -> int:
    pool = settings.cluster.gpu_pool(flavor)
    return pool.gpus_per_node * pool.max_count


def _workload_settings(settings: Settings, name: str) -> Any:
    return next((w for w in settings.workloads if w.name == name), None)


def bindable_gpus(settings: Settings, flavor: str, name: str = TRAINING) -> int:
    """GPUs of the pool the workload's GPU workers can be bound on at once: what a full node
    gives them (scheduling/workers.py), times the pool's nodes at most."""
    pool = settings.cluster.gpu_pool(flavor)
    requests = worker_requests(WORKLOADS[name], _workload_settings(settings, name))
    return gpus_used_per_node(requests, pool.vm_size) * pool.max_count


def require_fit(settings: Settings, flavor: str, name: str) -> None:
    """Not applicable where the workload's GPU workers cannot fill a node of the pool: the plan
    refuses that stack, and a rehearsal would only time out."""
    pool = settings.cluster.gpu_pool(flavor)
    asked = per_gpu(WORKLOADS[name], _workload_settings(settings, name))
    if not fits_share(asked, pool.vm_size):
        raise NotApplicableError(
            f"{name} asks {asked.describe()} per GPU, more than a GPU's share of a "
            f"{pool.vm_size} node of pool {flavor} ({gpu_share(pool.vm_size).describe()}): "
            "`aksray plan` reports this stack's error"
        )


def lendable(settings: Settings, owner: TeamSettings, flavor: str) -> int:
    """GPUs of `flavor` the owner lends its cohort at most."""
    found = queues(settings)[owner.name].flavor(flavor)
    return found.lendable[GPU_RESOURCE] if found is not None else 0


def admissible_gpus(settings: Settings, team: TeamSettings, flavor: str) -> int:
    """The largest one-flavor training gang the team can be admitted with and bound: its quota
    plus what it may borrow from the others of its cohort (the core's admission model), within
    what the pool's nodes hold of its workers."""
    room = admissible(queues(settings), team.name, flavor).get(GPU_RESOURCE, 0)
    return min(room, bindable_gpus(settings, flavor))


@dataclass(frozen=True)
class Lending:
    borrower: TeamSettings
    owner: TeamSettings
    flavor: str
    gang: int  # GPUs of the borrower's gang: all it can take in `flavor`
    reclaim_expected: bool  # the owner lends all it has: its first job must reclaim


def lending_pair(settings: Settings) -> Lending | None:
    """Two teams of one cohort where the borrower's biggest gang lands on a flavor (Kueue tries
    them in the pools' order) and borrows there from the owner."""
    found: Lending | None = None
    pools = [p.name for p in settings.cluster.gpu_pools]
    for dept in settings.scheduling.departments:
        cohort = list(dept.teams)
        for borrower in cohort:
            for owner in cohort:
                if owner is borrower:
                    continue
                for flavor in gpu_flavors(settings, owner):
                    mine = gpu_quota(settings, borrower, flavor)
                    gang = admissible_gpus(settings, borrower, flavor)
                    earlier = pools[: pools.index(flavor)]
                    if gang <= mine or lendable(settings, owner, flavor) == 0:
                        continue
                    if any(admissible_gpus(settings, borrower, f) >= gang for f in earlier):
                        continue  # the gang would land on an earlier flavor
                    kept = gpu_quota(settings, owner, flavor) - lendable(settings, owner, flavor)
                    candidate = Lending(borrower, owner, flavor, gang, reclaim_expected=kept < 1)
                    if candidate.reclaim_expected:
                        return candidate
                    found = found or candidate
    return found


def room_for_the_owner(settings: Settings, lending: Lending) -> int:
    """The borrower's gang, leaving nodes for the owner's job where no reclaim frees them: a
    gang that takes every node would leave the owner's admitted job unbound until it times
    out. Not applicable when what is left is no more than the borrower's own quota."""
    flavor = lending.flavor
    for name in (TRAINING, SMALL_JOBS[0]):
        require_fit(settings, flavor, name)
    if lending.reclaim_expected:
        return lending.gang
    small = WORKLOADS[SMALL_JOBS[0]].gpu_group
    small_gpus = small.replicas * small.pod.gpus if small is not None else 0
    gang = min(lending.gang, bindable_gpus(settings, flavor) - small_gpus)
    if gang <= gpu_quota(settings, lending.borrower, flavor):
        raise NotApplicableError(
            f"pool {flavor}'s nodes hold {bindable_gpus(settings, flavor)} GPUs of {TRAINING}: "
            f"a gang that borrows from {lending.owner.name} would leave no node for its "
            f"{SMALL_JOBS[0]}, which keeps its own GPUs (lendingLimit) and reclaims nothing"
        )
    return gang
