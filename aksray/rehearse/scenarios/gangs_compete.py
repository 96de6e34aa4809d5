"""gangs-compete: two gangs Kueue admits together compete for GPUs only one of them fits on.

Kueue admits against quota, not against nodes: a team whose quota holds both gangs gets both
admitted while its pool has, for now, the nodes of one (the autoscaler has not brought the rest).
Each gang is more than half of those GPUs. KAI places a gang whole or not at all: one runs, the
other waits with no pod bound and runs whole once the first is done. A scheduler that binds pod
by pod (kube-scheduler) binds part of each, and neither can start (`--scheduler
kube-scheduler` shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aksray.rehearse.scenarios.context import (
    Context,
    all_off,
    job,
)
from aksray.rehearse.scenarios.sizing import (
    TRAINING,
    NotApplicableError,
    admissible_gpus,
    gpu_flavors,
)
from aksray.rehearse.scenarios.workload_state import (
    admitted,
    bound_pods,
    finished,
)

if TYPE_CHECKING:
    from settings.model import Settings

BATCH: Final = "vllm-batch"  # the second gang: its workers fixed at minWorkers = maxWorkers
RUN_S: Final = 30.0  # each job's run: long enough to look at, short enough for the second's turn
LOOK_S: Final = 10.0


@dataclass(frozen=True)
class CompetePlan:
    team: str
    flavor: str
    nodes: int  # nodes of the flavor's pool kept
    gang: int  # GPU workers of each gang: more than half the GPUs of those nodes

    @property
    def pods(self) -> int:
        return 1 + self.gang  # the head and the workers


def compete_plan(settings: Settings) -> CompetePlan:
    """The first team whose first GPU flavor admits two gangs of more than half of one node's
    GPUs (three nodes' where a node has one GPU)."""
    for dept in settings.scheduling.departments:
        for team in dept.teams:
            flavors = gpu_flavors(settings, team)
            if not flavors:
                continue
            pool = settings.cluster.gpu_pool(flavors[0])
            nodes = 1 if pool.gpus_per_node >= 2 else 3
            gang = nodes * pool.gpus_per_node // 2 + 1
            fits = admissible_gpus(settings, team, flavors[0])
            if nodes <= pool.max_count and 2 * gang <= fits:
                return CompetePlan(team.name, flavors[0], nodes, gang)
    raise NotApplicableError("no team's quota admits two gangs bigger than half the GPUs of a node")


def _bound(ctx: Context, name: str) -> int:
    last = ctx.observer.last
    return len(bound_pods(last, name)) if last is not None else 0


def play(ctx: Context) -> None:
    """Two gangs admitted together onto the GPUs of one of them: one whole, the other nothing."""
    plan = compete_plan(ctx.settings)
    for pool in ctx.settings.cluster.gpu_pools:
        ctx.set_nodes(pool.name, plan.nodes if pool.name == plan.flavor else 0)
    section: dict[str, dict[str, Any]] = all_off(ctx.stack_workloads)
    common = {"enabled": True, "team": plan.team, "priority": "train", "run": "rehearse-1"}
    section[TRAINING] = job(ctx.stack_workloads, TRAINING, **common, workers=plan.gang)
    section[BATCH] = job(
        ctx.stack_workloads, BATCH, **common, minWorkers=plan.gang, maxWorkers=plan.gang
    )
    for name in (TRAINING, BATCH):
        ctx.set_run_time(name, RUN_S)
    ctx.notes.append(
        f"two gangs of {plan.gang} GPU workers each in team {plan.team}, on {plan.nodes} node(s) "
        f"of {plan.flavor} ({plan.nodes * ctx.settings.cluster.gpu_pool(plan.flavor).gpus_per_node}"
        " GPUs)"
    )
    ctx.apply(section, "two-gangs")
    both = ctx.wait(
        "Kueue to admit both gangs and one to be bound",
        lambda s: (
            admitted(TRAINING)(s)
            and admitted(BATCH)(s)
            and max(len(bound_pods(s, TRAINING)), len(bound_pods(s, BATCH))) >= 1
        ),
    )
    ctx.expect("Kueue admits both gangs (quota, not nodes)", both, "not both admitted")
    if not both:
        return
    ctx.observer.hold(LOOK_S)
    counts = {name: _bound(ctx, name) for name in (TRAINING, BATCH)}
    whole = sorted(counts.values()) == [0, plan.pods]
    ctx.expect(
        "one gang bound whole, none of the other",
        whole,
        ", ".join(f"{name} {n}/{plan.pods} pods bound" for name, n in counts.items()),
    )
    done = ctx.wait(
        "both gangs to finish, one after the other",
        lambda s: finished(TRAINING)(s) and finished(BATCH)(s),
        300,
    )
    ctx.expect("the waiting gang runs whole once the first is done", done, "not both finished")
