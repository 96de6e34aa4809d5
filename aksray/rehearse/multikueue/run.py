"""`aksray rehearse` of a stack with `multikueue`: the program offline, a manager and a worker
control plane per worker (aksray/rehearse/multikueue/rig.py), the MultiKueue scenario applied
through the real Pulumi engine, `pulumi destroy`, and one ScenarioResult with every cluster's
timeline and invariants.

Every cluster's objects are created by `pulumi up` of the one program, as users run it: the
stack as a fleet of existing clusters (aksray/rehearse/multikueue/stack.py), one Kubernetes
provider per cluster, each on its context of the rig's kubeconfig, from an empty fleet, with a
job's `run` set in the very first `up`; Pulumi creates in its graph's order and in parallel.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aksray.live.kube import KubeError
from aksray.rehearse.multikueue import MULTIKUEUE_SCENARIO
from aksray.rehearse.multikueue.play import play
from aksray.rehearse.multikueue.probes import token_before_account
from aksray.rehearse.multikueue.rig import MultiKueueRig, start_multikueue_rig
from aksray.rehearse.multikueue.scenario import RUN_ID, MultiKueueContext
from aksray.rehearse.multikueue.stack import (
    MANAGER,
    Submitted,
    UnplayableStackError,
    fleet_config,
    manager_jobs,
    offline_run,
)
from aksray.rehearse.multikueue.teardown import destroy
from aksray.rehearse.multikueue.watch import DESTROY, Fleet, worker_hooks
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Verdict
from aksray.rehearse.rig.controlplane import rig_run_dir
from aksray.rehearse.rig.engine import EngineStack
from aksray.rehearse.rig.prerequisites import (
    controller_versions,
    engine_missing,
    engine_toolchain,
    rig_missing,
    rig_toolchain,
)
from aksray.rehearse.rig.processes import RigError
from aksray.rehearse.rig.toolchain import ToolchainMissingError
from aksray.rehearse.run import InvalidConfigError, ScenarioResult, job_timing, quiet, sample_while
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.stack import read_stack_file
from catalog.quantities import GPU_RESOURCE
from manifests.ray_pods import TEAM_LABEL
from scheduling.multikueue import manager_settings, worker_settings
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from aksray.offline.runner import RunResult
    from settings.model import Settings


def is_multikueue(stack_file: Path) -> bool:
    return bool(read_stack_file(stack_file).get("multikueue"))


def dispatched_jobs(stack: dict[str, Any]) -> dict[str, str]:
    """A run id for every enabled RayJob the manager dispatches (not `regional`): the offline
    check registers them all, so the scenario can choose among them."""
    workloads = stack.get("workloads") or {}
    regional = (stack.get("multikueue") or {}).get("regional") or {}
    return {
        name: RUN_ID
        for name, entry in workloads.items()
        if (entry or {}).get("enabled") is True
        and WORKLOADS[name].kind == "RayJob"
        and name not in regional
    }


def worker_gpu_quota(settings: Settings, team: str) -> int:
    """The smallest GPU quota the team has in a worker where it has any."""
    assert settings.multikueue is not None
    quotas = [
        sum(r.amount(GPU_RESOURCE) or 0 for r in worker.team_quota(team).values())
        for worker in settings.multikueue.workers
    ]
    return min((q for q in quotas if q > 0), default=0)


def cluster_settings(settings: Settings) -> dict[str, Settings]:
    assert settings.multikueue is not None
    return {
        MANAGER: manager_settings(settings),
        **{w.name: worker_settings(settings, w) for w in settings.multikueue.workers},
    }


def fleet_of(rig: MultiKueueRig, namespaces: tuple[str, ...]) -> tuple[Fleet, list[Verdict]]:
    started = time.monotonic()
    observers = {MANAGER: Observer(rig.manager.kube, namespaces, started=started)}
    tokens = []
    for name, member in rig.workers.items():
        observers[name] = Observer(member.kube, namespaces, started=started)
        tokens.append((name, worker_hooks(observers[name], member, namespaces)))
    fleet = Fleet(
        observers,
        lambda name: (
            name not in rig.workers or not (rig.workers[name].lost or rig.workers[name].paused)
        ),
        MANAGER,
        lambda: [
            c
            for ns in namespaces
            if rig.manager.kube.get_or_none(f"/api/v1/namespaces/{ns}") is not None
            for c in rig.manager.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters")
        ],
        started=started,
    )
    named = [Verdict(f"{n}: {t.verdict.name}", t.verdict.held, t.verdict.detail) for n, t in tokens]
    return fleet, named


def checked_run(
    stack: dict[str, Any], stack_name: str, progress: Callable[[str], None]
) -> RunResult:
    """Everything the rehearsal needs is there, and the program's offline run on the
    rehearsal stack (every dispatched RayJob submitted, for the scenario to choose from)."""
    from aksray.reference import locate

    missing = [m for m in (rig_missing(), engine_missing()) if m]
    if locate() is None:
        missing.append(
            "the upstream reference data (the shipped KubeRay CRDs): run "
            "`make reference`, or set AKSRAY_REFERENCE"
        )
    if missing:
        raise ToolchainMissingError("\n".join(missing))
    progress(f"{stack_name}: checking the stack (the program offline)")
    try:
        ran = offline_run(stack, stack_name, dispatched_jobs(stack))
    except UnplayableStackError as why:
        raise InvalidConfigError([f"error: {why}"]) from None
    if ran.problems:
        raise InvalidConfigError([f"error: {p}" for p in ran.problems])
    return ran


def rehearse_multikueue(
    stack_file: Path, stack_name: str, progress: Callable[[str], None] = quiet
) -> ScenarioResult:
    t0 = time.monotonic()
    stack = read_stack_file(stack_file)
    ran = checked_run(stack, stack_name, progress)
    settings: Settings = ran.settings
    tools, engine = rig_toolchain(), engine_toolchain()
    result = ScenarioResult(stack_name, MULTIKUEUE_SCENARIO, controller_versions(tools))
    run_dir = rig_run_dir()
    rig = start_multikueue_rig(tools, run_dir, cluster_settings(settings), progress)
    try:
        kubeconfig = rig.write_kubeconfig(run_dir / "kubeconfig")
        stack_engine = EngineStack(
            engine, run_dir / "engine", stack_name, kubeconfig, Path(sys.executable).parent
        )
        stack_engine.init()
        bring_up = ", ".join(f"{step} {seconds:.1f}s" for step, seconds in rig.timings.items())
        result.notes += [*rig.notes, f"bring-up: {bring_up}"]
        played(
            rig, stack_engine, stack=stack, jobs=manager_jobs(ran), settings=settings,
            result=result,
        )  # fmt: skip
    finally:
        rig.stop()
    result.seconds = time.monotonic() - t0
    return result


def probe(ctx: MultiKueueContext) -> None:
    """Why the stack creates a worker's token Secret after its ServiceAccount, shown on one."""
    name, member = next(iter(ctx.rig.workers.items()))
    deleted = token_before_account(member.kube)
    ctx.fleet.note(
        name,
        "probe",
        "token Secret before its ServiceAccount",
        f"deleted by the token controller {deleted}s after its creation"
        if deleted is not None
        else "still there",
    )
    ctx.expect(
        "Kubernetes deletes a token Secret created before its ServiceAccount (the stack creates "
        "the manager's after it)",
        deleted is not None,
        f"on {name} the Secret was still there after 15s",
    )


def played(
    rig: MultiKueueRig,
    engine: EngineStack,
    *,
    stack: dict[str, Any],
    jobs: dict[str, dict[str, Any]],
    settings: Settings,
    result: ScenarioResult,
) -> None:
    """The scenario, then destroy; the timeline, verdicts, times and memory into `result`."""
    namespaces = tuple(sorted({t.namespace for t in settings.scheduling.teams}))
    fleet, tokens = fleet_of(rig, namespaces)
    run_times: dict[str, float] = {}
    for member in rig.workers.values():
        assert member.dashboard is not None
        member.dashboard.timing = job_timing(run_times)
    team = next(iter(jobs.values()), {}).get("metadata", {}).get("labels", {}).get(TEAM_LABEL)
    ups: dict[str, float] = {}

    def up(submitted: Submitted, step: str) -> None:
        config = fleet_config(stack, rig.servers(), submitted)
        seconds = sample_while(fleet.sample, lambda: engine.up(config, step))
        ups[step] = round(seconds, 1)
        fleet.note(MANAGER, "pulumi", "up", f"{step} in {seconds:.1f}s")

    ctx = MultiKueueContext(
        fleet,
        rig,
        jobs,
        run_times,
        worker_gpu_quota(settings, str(team)),
        stack.get("workloads") or {},
        (stack.get("multikueue") or {}).get("regional") or {},
        up,
    )
    try:
        probe(ctx)
        play(ctx)
    except NotApplicableError as why:
        result.applicable = False
        result.notes.append(f"not applicable to this stack: {why}")
    except (KubeError, RigError) as error:  # the rig or an `up` failed: destroy, then report it
        ctx.expect("the scenario plays to its end", False, f"{type(error).__name__}: {error}")
    left, seconds = destroy(rig, engine, namespaces)
    ctx.seconds["destroy"] = round(seconds, 1)
    fleet.note(MANAGER, "rehearsal", "destroyed",
               f"{len(left)} left" if left else "nothing left behind on any cluster")  # fmt: skip
    gone = Verdict(DESTROY, not left, ("left behind: " + ", ".join(left)) if left else "")
    result.events = fleet.timeline()
    result.invariants = [*fleet.verdict_list(), *tokens, gone, *ctx.checks]
    peaks = rig.peak_memory_mib()
    memory = ", ".join(f"{name} {mib} MiB" for name, mib in peaks.items())
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in ctx.seconds.items())
    result.notes += [
        *ctx.notes,
        f"steps: {steps}",
        "pulumi up: " + ", ".join(f"{k} {v:.1f}s" for k, v in ups.items()),
        f"rig processes' peak memory: {memory}, {sum(peaks.values())} MiB in all",
    ]
