"""What a scenario may do and what it shares: the stack, the nodes, job run times, the observer.

A scenario changes the stack the way a user would (`pulumi config set`, then `pulumi up`: jobs
started by their `run` label, the endpoint enabled), or the cluster the way Azure would (GPU
nodes arriving late, or never), waits on what the controllers do, and states what the stack
says must happen. Where a stack cannot show a scenario (one team cannot borrow from another),
the scenario says so and checks nothing it cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Sample, Verdict
from aksray.rehearse.scenarios.sizing import (
    TRAINING,
    NotApplicableError,
    admissible_gpus,
    gpu_flavors,
)
from aksray.rehearse.scenarios.workload_state import (
    last_kueue_condition,
    pod_count,
)
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from settings.model import Settings, TeamSettings

# How long a job "runs" on the stand-in dashboard.
SHORT_RUN_S: Final = 8.0
LONG_RUN_S: Final = 3600.0
NODES_LATE_S: Final = 15.0


@dataclass
class Context:
    """What a scenario may do: change the stack, the nodes and job run times, and observe."""

    settings: Settings
    observer: Observer
    apply: Callable[[dict[str, dict[str, Any]], str], None]  # workloads section, step name
    set_nodes: Callable[[str, int], None]  # pool, count
    set_run_time: Callable[[str, float], None]  # workload, seconds
    stack_workloads: dict[str, dict[str, Any]]
    checks: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Set a Ray worker group's replicas as the Ray autoscaler would (workload, group, replicas);
    # None where the target cannot (aksray/rehearse/scenarios/endpoint_scales.py).
    scale_workers: Callable[[str, str, int], None] | None = None
    # Hold (True) or release (False) a team's ClusterQueue (`stopPolicy`); None where it cannot.
    hold_queue: Callable[[str, bool], None] | None = None

    def expect(self, name: str, held: bool, detail: str) -> None:
        self.checks.append(Verdict(f"scenario: {name}", held, "" if held else detail))

    def wait(self, what: str, predicate: Callable[[Sample], bool], timeout: float = 240) -> bool:
        return self.observer.wait_until(what, predicate, timeout)

    def why_waiting(self, name: str) -> str:
        """What Kueue last said about a workload a wait timed out on, whole."""
        return last_kueue_condition(self.observer.last, name)


def job(stack: dict[str, dict[str, Any]], name: str, **changes: Any) -> dict[str, Any]:
    entry = dict(stack.get(name) or {})
    entry.update(changes)
    return entry


def all_off(stack: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: job(stack, name, enabled=False) for name in WORKLOADS}


def first_gpu_team(ctx: Context) -> TeamSettings:
    """The training job's team when the stack names one, else the first team with GPU quota."""
    named = (ctx.stack_workloads.get(TRAINING) or {}).get("team")
    if named:
        return ctx.settings.scheduling.team(named)
    for team in ctx.settings.scheduling.teams:
        if gpu_flavors(ctx.settings, team):
            return team
    raise NotApplicableError("no team has GPU quota")


def training_that_fits(ctx: Context, team: TeamSettings) -> dict[str, Any]:
    """The training job in `team`, started, with the stack's worker count where its first GPU
    flavor admits that gang, else the largest gang it admits (a scenario about nodes, not quota,
    must not pick a job Kueue can never admit)."""
    entry = job(ctx.stack_workloads, TRAINING, enabled=True, team=team.name, run="rehearse-1")
    flavor = gpu_flavors(ctx.settings, team)[0]
    fits = admissible_gpus(ctx.settings, team, flavor)
    wanted = entry.get("workers", pod_count(ctx.settings, TRAINING) - 1)
    if wanted > fits:
        entry["workers"] = fits
        ctx.notes.append(
            f"{TRAINING} runs with {fits} workers, not {wanted}: team {team.name} is admitted "
            f"at most {fits} GPUs of {flavor}"
        )
    return entry
