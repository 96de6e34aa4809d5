"""The scenarios a rehearsal plays, each over the stack's own teams, quotas and pools.

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

from aksray.rehearse import scenario_names as n
from aksray.rehearse.observe import Observer, Sample, Verdict
from aksray.rehearse.sizing import (
    ENDPOINT,
    SMALL_JOBS,
    TRAINING,
    NotApplicableError,
    admissible_gpus,
    bindable_gpus,
    gpu_flavors,
    gpu_quota,
    lending_pair,
    queues,
    require_fit,
    room_for_the_owner,
)
from aksray.rehearse.workload_state import (
    admitted,
    bound_pods,
    ever_evicted,
    finished,
    last_kueue_condition,
    pod_count,
    requeues,
    running,
    workloads_of,
)
from catalog.quantities import GPU_RESOURCE
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
    # None where the target cannot (aksray/rehearse/scaling.py).
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


# -- scenarios ---------------------------------------------------------------------------------
def submit_all(ctx: Context) -> None:
    """Every workload the stack enables, jobs started: each is admitted in turn and finishes."""
    section = {}
    enabled = []
    for name in WORKLOADS:
        entry = dict(ctx.stack_workloads.get(name) or {})
        if entry.get("enabled", False) is True:
            enabled.append(name)
            if WORKLOADS[name].kind == "RayJob":
                entry["run"] = "rehearse-1"
                ctx.set_run_time(name, SHORT_RUN_S)
        section[name] = entry
    if not enabled:
        raise NotApplicableError("the stack enables no workload")
    ctx.apply(section, "submit-all")
    jobs = [n for n in enabled if WORKLOADS[n].kind == "RayJob"]
    services = [n for n in enabled if WORKLOADS[n].kind == "RayService"]
    done = ctx.wait(
        "every job to finish and the endpoint to run",
        lambda s: (
            all(finished(n)(s) for n in jobs)
            and all(running(n, pod_count(ctx.settings, n))(s) for n in services)
        ),
        timeout=420,
    )
    sample = ctx.observer.last
    for name in jobs:
        ctx.expect(
            f"{name} finished", bool(sample and finished(name)(sample)), "not finished in time"
        )
    for name in services:
        ctx.expect(
            f"{name} running",
            bool(sample and running(name, pod_count(ctx.settings, name))(sample)),
            "endpoint not running",
        )
    if not done:
        ctx.notes.append("not every workload reached its end state in time")


def inference_preempts_training(ctx: Context) -> None:
    """A training gang holds the endpoint's team's GPUs; the endpoint arrives at `inference`."""
    serve = ctx.stack_workloads.get(ENDPOINT) or {}
    team_name = serve.get("team") or (ctx.stack_workloads.get(TRAINING) or {}).get("team")
    if not team_name:
        team_name = ctx.settings.scheduling.teams[0].name
    team = ctx.settings.scheduling.team(team_name)
    flavors = gpu_flavors(ctx.settings, team)
    if not flavors:
        raise NotApplicableError(f"team {team_name} has no GPU quota")
    flavor = flavors[0]
    require_fit(ctx.settings, flavor, TRAINING)
    require_fit(ctx.settings, flavor, ENDPOINT)
    quota = gpu_quota(ctx.settings, team, flavor)
    found = queues(ctx.settings)[team_name].flavor(flavor)
    gpu = found.quota(GPU_RESOURCE) if found is not None else None
    borrow = gpu.borrowing_limit if gpu is not None else None
    workers = min(bindable_gpus(ctx.settings, flavor), quota + (borrow or 0))
    workers = min(workers, quota) if borrow is None else workers
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=team_name, priority="train",
        workers=workers, run="rehearse-1",
    )  # fmt: skip
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    ctx.apply(section, "training")
    gang = pod_count(ctx.settings, TRAINING, workers)
    if not ctx.wait(f"{TRAINING} to run ({workers} GPUs on {flavor})", running(TRAINING, gang)):
        ctx.expect(
            "training runs first",
            False,
            f"{TRAINING} never ran with {workers} workers; {ctx.why_waiting(TRAINING)}",
        )
        return
    section[ENDPOINT] = job(
        ctx.stack_workloads, ENDPOINT, enabled=True, team=team_name, priority="inference"
    )
    ctx.apply(section, "endpoint")
    endpoint_pods = pod_count(ctx.settings, ENDPOINT)
    got = ctx.wait(f"{ENDPOINT} to run", running(ENDPOINT, endpoint_pods))
    ctx.expect(
        "the endpoint gets its GPUs", got, f"{ENDPOINT} never ran; {ctx.why_waiting(ENDPOINT)}"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    free_elsewhere = len(flavors) > 1 or (borrow is not None and workers < quota + borrow)
    if evictions:
        sample = ctx.observer.last
        gone = sample is not None and not bound_pods(sample, TRAINING)
        ctx.expect(
            "training stopped as a whole by Kueue",
            gone,
            f"{TRAINING} pods still bound after eviction",
        )
        ctx.expect(
            "training evicted for priority",
            any("Preempted" in e for e in evictions),
            "; ".join(evictions),
        )
        requeued = ctx.wait(
            f"{TRAINING} to wait in its queue again", lambda s: not admitted(TRAINING)(s), 60
        )
        ctx.expect("training requeues", requeued, f"{TRAINING} still admitted")
    elif free_elsewhere:
        ctx.notes.append(
            f"{ENDPOINT} found GPUs without preempting {TRAINING}: team {team_name} has quota "
            "beyond what the training gang holds (another flavor or borrowing)"
        )
    else:
        ctx.expect("training preempted", False, f"{ENDPOINT} ran but {TRAINING} was never evicted")
    section[ENDPOINT] = job(ctx.stack_workloads, ENDPOINT, enabled=False)
    ctx.set_run_time(TRAINING, SHORT_RUN_S)
    ctx.apply(section, "endpoint-off")
    if evictions:
        back = ctx.wait(f"{TRAINING} to run again", running(TRAINING, gang), 240)
        ctx.expect(
            "training runs again once the endpoint is gone", back, f"{TRAINING} not re-admitted"
        )


def borrow_and_reclaim(ctx: Context) -> None:
    """One team borrows an idle team's GPUs; the owner submits; Kueue gives the owner its quota
    back, reclaiming from the borrower when the owner lent all it had."""
    lending = lending_pair(ctx.settings)
    if lending is None:
        raise NotApplicableError("no two teams of one cohort where one can borrow the other's GPUs")
    borrower, owner, flavor = lending.borrower, lending.owner, lending.flavor
    gang = room_for_the_owner(ctx.settings, lending)
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=borrower.name, priority="train",
        workers=gang, run="rehearse-1",
    )  # fmt: skip
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    ctx.apply(section, "borrow")
    pods = pod_count(ctx.settings, TRAINING, gang)
    borrowed = ctx.wait(
        f"{TRAINING} of {borrower.name} to run on {gang} GPUs of {flavor}", running(TRAINING, pods)
    )
    ctx.expect(
        f"{borrower.name} borrows {owner.name}'s idle GPUs",
        borrowed,
        f"{TRAINING} never ran; {ctx.why_waiting(TRAINING)}",
    )
    if not borrowed:
        return
    small = SMALL_JOBS[0]
    section[small] = job(
        ctx.stack_workloads,
        small,
        enabled=True,
        team=owner.name,
        priority="train",
        run="rehearse-1",
    )
    ctx.set_run_time(small, SHORT_RUN_S)
    ctx.apply(section, "owner-submits")
    got = ctx.wait(
        f"{small} of {owner.name} to run", running(small, pod_count(ctx.settings, small))
    )
    ctx.expect(
        f"{owner.name} gets its quota back", got, f"{small} never ran; {ctx.why_waiting(small)}"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    if lending.reclaim_expected:
        ctx.expect(
            "the borrower is reclaimed by Kueue",
            any("Preempted" in e for e in evictions),
            f"{TRAINING} evictions: {evictions or 'none'}",
        )
    else:
        ctx.notes.append(
            f"{owner.name} keeps GPUs of {flavor} it never lends (lendingLimit): its job ran "
            "there without reclaiming from the borrower"
        )
        ctx.expect("the borrower keeps running", not evictions, f"{TRAINING} evicted: {evictions}")


def nodes_arrive_late(ctx: Context) -> None:
    """GPU pools start empty and their nodes arrive one by one, as the autoscaler brings them."""
    for pool in ctx.settings.cluster.gpu_pools:
        ctx.set_nodes(pool.name, 0)
    section = {}
    for name in WORKLOADS:
        entry = dict(ctx.stack_workloads.get(name) or {})
        if entry.get("enabled") is True and WORKLOADS[name].kind == "RayJob":
            entry["run"] = "rehearse-1"
            ctx.set_run_time(name, SHORT_RUN_S)
        section[name] = entry
    jobs = [n for n, e in section.items() if e.get("run")]
    if not jobs:  # a stack that enables no job: its first GPU team trains
        section[TRAINING] = training_that_fits(ctx, first_gpu_team(ctx))
        ctx.set_run_time(TRAINING, SHORT_RUN_S)
        jobs = [TRAINING]
    ctx.apply(section, "submit")
    ctx.observer.hold(NODES_LATE_S)
    for pool in ctx.settings.cluster.gpu_pools:
        for count in range(1, pool.max_count + 1):
            ctx.set_nodes(pool.name, count)
            ctx.observer.hold(0.5)
    ctx.wait("every started job to finish", lambda s: all(finished(n)(s) for n in jobs), 420)
    evicted = [e.line() for e in ctx.observer.events if e.what == "evicted"]
    ctx.expect("nothing admitted is evicted while nodes come", not evicted, "; ".join(evicted))
    for name in jobs:
        ctx.expect(
            f"{name} finished",
            bool(ctx.observer.last and finished(name)(ctx.observer.last)),
            "not finished",
        )


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


def no_capacity(ctx: Context) -> None:
    """A GPU pool whose nodes never come (no Azure VM quota): the job must not hold quota."""
    team = first_gpu_team(ctx)
    team_name = team.name
    if not gpu_flavors(ctx.settings, team):
        raise NotApplicableError(f"team {team_name} has no GPU quota")
    for pool in ctx.settings.cluster.gpu_pools:
        ctx.set_nodes(pool.name, 0)
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = training_that_fits(ctx, team)
    ctx.apply(section, "submit")
    ctx.wait(f"{TRAINING} to be admitted", admitted(TRAINING), 120)
    released = ctx.wait(
        f"Kueue to take {TRAINING}'s quota back",
        lambda s: bool(workloads_of(s, TRAINING)) and not admitted(TRAINING)(s),
        timeout=300,
    )
    ctx.expect(
        "a job on nodes that never come does not hold quota", released, f"{TRAINING} kept its quota"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    ctx.expect(
        "Kueue's pod-readiness timeout evicted it",
        any("PodsReadyTimeout" in e for e in evictions),
        f"evictions of {TRAINING}: {evictions or 'none'}",
    )
    requeued = ctx.wait(
        f"{TRAINING} to be requeued after its backoff and admitted again",
        lambda s: admitted(TRAINING)(s) and requeues(s, TRAINING) >= 1,
        timeout=300,
    )
    ctx.expect("it is requeued with backoff", requeued, f"{TRAINING} was not admitted again")
    ctx.notes.append(
        f"after {ctx.settings.scheduling.pods_ready.requeue_limit} requeues Kueue deactivates "
        "the job (not waited for: each attempt takes a full timeout)"
    )


SCENARIOS: Final[dict[str, Callable[[Context], None]]] = {
    n.SUBMIT_ALL: submit_all,
    n.INFERENCE_PREEMPTS_TRAINING: inference_preempts_training,
    n.BORROW_AND_RECLAIM: borrow_and_reclaim,
    n.NODES_ARRIVE_LATE: nodes_arrive_late,
    n.NO_CAPACITY: no_capacity,
}
