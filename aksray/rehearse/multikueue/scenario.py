"""The MultiKueue scenario: jobs submitted once, to the manager, by `pulumi up` (a `run` set on
the workload), and what Kueue does with them.

1. dispatch: the very first `pulumi up`, on an empty fleet, creates every cluster's objects and a
   job that fills one worker's GPU quota, in the graph's own order; the job goes to a worker with
   free GPUs, whose Kueue admits it and whose KubeRay runs it; the manager's RayJob shows the
   worker's status.
2. overflow: a second `pulumi up` submits a second GPU job, too big for what that worker has
   left (and leaves the first alone): it goes to the other worker, runs and succeeds there; the
   manager's copy reflects it.
3. worker lost: the first job's worker loses its API server mid-run; after MultiKueue's
   worker-lost timeout the manager requeues the job, dispatches it to the other worker, where
   it runs and succeeds.
4. worker back: the lost worker returns; the manager removes its stale copy of the job.
Destroy and what is left behind are the rehearsal's (aksray/rehearse/multikueue/run.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final

from aksray.rehearse import objects as o
from aksray.rehearse.multikueue.rig import MultiKueueRig, stale_copy
from aksray.rehearse.multikueue.stack import Submitted
from aksray.rehearse.multikueue.watch import Fleet, by_workload, dispatched_to, job_status
from aksray.rehearse.record import Verdict
from aksray.rehearse.scenarios.sizing import NotApplicableError
from manifests.ray_pods import WORKLOAD_LABEL

LONG_RUN_S: Final = 3600.0
SHORT_RUN_S: Final = 8.0
STEP_TIMEOUT_S: Final = 180.0
STALE_COPY_TIMEOUT_S: Final = 150.0
RUN_ID: Final = "rehearse-1"


def rayjob_gpus(job: Mapping[str, Any]) -> int:
    """GPUs a RayJob's Ray cluster asks for: every worker group's replicas times its pods'."""
    spec = job["spec"]["rayClusterSpec"]
    total = 0
    for group in spec.get("workerGroupSpecs") or []:
        total += int(group.get("replicas", 1)) * o.pod_gpus({"spec": group["template"]["spec"]})
    return total


def pick_jobs(jobs: Mapping[str, Mapping[str, Any]], worker_gpus: int) -> tuple[str, str]:
    """The job that fills a worker's GPU quota (the first) and a smaller GPU job (the second,
    too big for what is left where the first runs)."""
    sized = {name: rayjob_gpus(job) for name, job in jobs.items()}
    filling = sorted(n for n, gpus in sized.items() if gpus == worker_gpus)
    smaller = sorted(n for n, gpus in sized.items() if 0 < gpus < worker_gpus)
    if not filling or not smaller:
        raise NotApplicableError(
            f"the stack dispatches no RayJob of {worker_gpus} GPUs (a worker's quota) and a "
            f"smaller GPU one (it dispatches {dict(sorted(sized.items()))})"
        )
    return filling[0], smaller[0]


@dataclass
class MultiKueueContext:
    fleet: Fleet
    rig: MultiKueueRig
    jobs: dict[str, dict[str, Any]]  # the manager's RayJobs by workload
    run_times: MutableMapping[str, float]  # the stand-in dashboards' run time per workload
    worker_gpus: int  # a worker's GPU quota for the team
    stack_workloads: Mapping[str, Any]  # the stack file's `workloads`
    regional: Mapping[str, str]  # its `multikueue.regional`
    up: Callable[[Submitted, str], None]  # `pulumi up` with what is submitted, a step name
    submitted: Submitted = field(default_factory=Submitted)
    checks: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def expect(self, name: str, held: bool, detail: str) -> None:
        self.checks.append(Verdict(f"scenario: {name}", held, "" if held else detail))

    def set_run(
        self,
        workload: str,
        run: str = RUN_ID,
        changes: Mapping[str, Any] | None = None,
        unpin: bool = False,
    ) -> None:
        """`pulumi config set --path workloads.<workload>.run <run>` (and its other keys
        `changes`; `unpin`: out of `multikueue.regional`), for the next `pulumi up`."""
        self.submitted.runs[workload] = run
        self.submitted.changes.setdefault(workload, {}).update(changes or {})
        if unpin:
            self.submitted.unpinned.add(workload)

    def submit(self, workload: str, step: str, run: str = RUN_ID) -> None:
        """`set_run` and `pulumi up`."""
        self.set_run(workload, run)
        self.up(self.submitted, step)

    def timed(self, step: str, body: Callable[[], None]) -> None:
        t0 = time.monotonic()
        body()
        self.seconds[step] = round(time.monotonic() - t0, 1)


def where(fleet: Fleet, workload: str) -> str | None:
    found = by_workload(fleet.samples[fleet.manager]).get(workload)
    return dispatched_to(found) if found else None


def manager_finished(fleet: Fleet, workload: str) -> bool:
    found = by_workload(fleet.samples[fleet.manager]).get(workload)
    return found is not None and o.condition_true(found, "Finished")


def running_in(fleet: Fleet, cluster: str, workload: str) -> bool:
    sample = fleet.samples.get(cluster)
    return sample is not None and job_status(sample, workload)[1] == "RUNNING"


def copies_in(fleet: Fleet, cluster: str, workload: str) -> bool:
    sample = fleet.samples.get(cluster)
    return sample is not None and (
        workload in by_workload(sample) or job_status(sample, workload) != ("", "")
    )


def other(rig: MultiKueueRig, worker: str) -> str:
    return next(name for name in rig.workers if name != worker)


def manager_job_uid(ctx: MultiKueueContext, workload: str) -> str:
    """The uid of the manager's RayJob of `workload` ("" if there is none): a new uid is a new
    job, i.e. a run started over."""
    namespace = ctx.jobs[workload]["metadata"]["namespace"]
    found = ctx.rig.manager.kube.items(
        f"/apis/ray.io/v1/namespaces/{namespace}/rayjobs", f"{WORKLOAD_LABEL}={workload}"
    )
    return str(found[0]["metadata"]["uid"]) if found else ""


def dispatch(ctx: MultiKueueContext, first: str) -> str:
    fleet = ctx.fleet
    ctx.run_times[first] = LONG_RUN_S
    ctx.submit(first, "first")
    fleet.note(
        fleet.manager,
        first,
        "submitted",
        f"to the manager by the first pulumi up ({rayjob_gpus(ctx.jobs[first])} GPUs)",
    )
    ran = fleet.wait_until(
        f"{first} to run in a worker",
        lambda f: (
            (w := where(f, first)) is not None
            and running_in(f, w, first)
            and job_status(f.samples[f.manager], first)[1] == "RUNNING"
        ),
        STEP_TIMEOUT_S,
    )
    worker = where(fleet, first) or "?"
    ctx.expect(
        f"{first} dispatched to a worker with free GPUs and running there",
        ran,
        f"{first}: not running in a worker (dispatched to {worker})",
    )
    ctx.expect(
        f"the manager's {first} shows the worker's status",
        ran,
        "the manager's RayJob never showed RUNNING",
    )
    gone = fleet.wait_until(
        f"no copy of {first} in the other worker",
        lambda f: not copies_in(f, other(ctx.rig, worker), first),
        60,
    )
    ctx.expect(
        f"{first} runs in {worker} alone (no copy left in the other worker)",
        gone,
        f"{other(ctx.rig, worker)} still holds a copy of {first}",
    )
    return worker


def overflow(ctx: MultiKueueContext, first: str, second: str, full: str) -> None:
    fleet = ctx.fleet
    ctx.run_times[second] = SHORT_RUN_S
    before = manager_job_uid(ctx, first)
    ctx.submit(second, "second")
    after = manager_job_uid(ctx, first)
    ctx.expect(
        f"the pulumi up that submits {second} leaves the running {first} alone",
        bool(before) and before == after,
        f"the manager's RayJob of {first} was {before or 'absent'} and is {after or 'gone'}: "
        "the up replaced it (its run started over)",
    )
    fleet.note(
        fleet.manager,
        second,
        "submitted",
        f"to the manager ({rayjob_gpus(ctx.jobs[second])} GPUs; {full} is full)",
    )
    finished = _finished(ctx, second)
    went = where(fleet, second)
    ctx.expect(
        f"{second} goes to the other worker, {other(ctx.rig, full)}",
        went == other(ctx.rig, full),
        f"{second} was dispatched to {went}",
    )
    _expect_success(ctx, second, "there", finished)


def worker_lost(ctx: MultiKueueContext, first: str, lost: str) -> None:
    fleet, rig = ctx.fleet, ctx.rig
    ctx.run_times[first] = SHORT_RUN_S  # its next run, wherever it goes
    rig.workers[lost].lose()
    t0 = time.monotonic()
    fleet.note(fleet.manager, lost, "lost", "its API server stopped mid-run")
    moved = fleet.wait_until(
        f"{first} to be dispatched again",
        lambda f: where(f, first) == other(rig, lost),
        STEP_TIMEOUT_S,
    )
    ctx.seconds["loss to redispatch"] = round(time.monotonic() - t0, 1)
    ctx.expect(
        f"{first} is requeued by the manager and dispatched to {other(rig, lost)}",
        moved,
        f"{first} still dispatched to {where(fleet, first)}",
    )
    _expect_success(ctx, first, f"in {other(rig, lost)}", _finished(ctx, first))


def worker_back(ctx: MultiKueueContext, first: str, lost: str) -> None:
    """The lost worker returns. Its copy of the first job is stale (the job ran elsewhere): the
    manager deletes its Workload, then the RayJob and its pods go. The worker is not observed
    until all of it is gone (its pods run meanwhile with no admitted Workload, which the
    one-cluster invariant would call a breach); the timeline says when each part went."""
    fleet, member = ctx.fleet, ctx.rig.workers[lost]
    job = ctx.jobs[first]["metadata"]
    member.paused = True
    member.restore()
    t0 = time.monotonic()
    fleet.note(fleet.manager, lost, "back", "its API server started again")
    reported: set[str] = set()

    def gone(f: Fleet) -> bool:
        left = stale_copy(member, job["namespace"], job["name"])
        kinds = {x.split()[0] for x in left}
        for kind in ("Workload", "RayJob", "pod"):
            if kind not in kinds and kind not in reported:
                reported.add(kind)
                after = f"{time.monotonic() - t0:.1f}s after it came back"
                f.note(f.manager, lost, f"stale {kind} gone", after)
        return not left

    cleaned = fleet.wait_until(f"the stale copy of {first} in {lost} to go", gone,
                               STALE_COPY_TIMEOUT_S)  # fmt: skip
    ctx.seconds["back to stale copy gone"] = round(time.monotonic() - t0, 1)
    member.paused = False
    ctx.expect(
        f"the manager removes {lost}'s stale copy of {first} once it is back",
        cleaned,
        f"{lost} still holds {stale_copy(member, job['namespace'], job['name'])} "
        f"{STALE_COPY_TIMEOUT_S:.0f}s after it came back",
    )


def _finished(ctx: MultiKueueContext, job: str) -> bool:
    return ctx.fleet.wait_until(
        f"{job} to finish", lambda f: manager_finished(f, job), STEP_TIMEOUT_S
    )


def _expect_success(ctx: MultiKueueContext, job: str, where_: str, finished: bool) -> None:
    """The job finished where it was dispatched and the manager's copy says it succeeded."""
    status = job_status(ctx.fleet.samples[ctx.fleet.manager], job)
    ctx.expect(
        f"{job} succeeds {where_} and the manager's copy reflects it",
        finished and status == ("Complete", "SUCCEEDED"),
        f"the manager's {job} shows {status}",
    )
