"""One `aksray rehearse`: validate, bring the rig up, play each scenario, tear down, report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from aksray.live.kube import Discovery, Kube
from aksray.rehearse import scenarios
from aksray.rehearse.invariants.destroy_leaves_nothing import judge as judge_destroy
from aksray.rehearse.invariants.ray_token_required import TokenWatch, keep_heads_reachable
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import TimelineEvent, Verdict
from aksray.rehearse.rig.controlplane import KUBECONFIG_CONTEXT, rig_run_dir
from aksray.rehearse.rig.engine import EngineStack
from aksray.rehearse.rig.footprint import Nodes, leftovers
from aksray.rehearse.rig.prerequisites import engine_toolchain, missing_prerequisites
from aksray.rehearse.rig.toolchain import EngineToolchain, ToolchainMissingError
from aksray.rehearse.scenarios.context import Context
from aksray.rehearse.scenarios.endpoint_scales import scale_ray_cluster
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.stack import read_stack_file, rehearsal_config, stack_workloads
from aksray.rehearse.target import KAI, Progress, Target, target

# Re-exported: the MultiKueue rehearsal imports it from here.
from aksray.rehearse.target import quiet as quiet  # noqa: PLC0414
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from aksray.offline.runner import RunResult
    from settings.model import Settings

DEFAULT_RUN_S = 8.0


class InvalidConfigError(Exception):
    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass
class ScenarioResult:
    stack: str
    scenario: str
    controllers: dict[str, str]
    events: list[TimelineEvent] = field(default_factory=list)
    invariants: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    applicable: bool = True

    @property
    def held(self) -> bool:
        return all(v.held for v in self.invariants)

    def as_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "scenario": self.scenario,
            "controllers": self.controllers,
            "events": [e.as_json() for e in self.events],
            "invariants": [v.as_json() for v in self.invariants],
            "notes": self.notes,
            "applicable": self.applicable,
            "seconds": round(self.seconds, 1),
        }


def validate(
    stack: dict[str, Any],
    run_dir: Path,
    name: str,
    *,
    monitoring: bool = False,
    workloads: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run the program offline on the rehearsal stack: what it registers, or every problem
    (`monitoring`, `workloads`: as rehearsal_config takes them)."""
    from aksray.offline.runner import run_program

    if stack.get("multikueue"):
        # This rig is one cluster; played as one, a manager has no pools and no quota
        # (aksray/rehearse/multikueue/run.py plays the manager and its workers).
        raise InvalidConfigError(
            [
                "error: multikueue: the one-cluster rehearsal cannot play a MultiKueue manager "
                "with its workers; `aksray rehearse` plays such a stack with the `multikueue` "
                "scenario (docs/multikueue.md)"
            ]
        )
    path = run_dir / f"Pulumi.{name}.yaml"
    config = {
        "config": rehearsal_config(stack, KUBECONFIG_CONTEXT, workloads, monitoring=monitoring)
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = run_program(path, stack=name)
    if result.problems:
        raise InvalidConfigError([f"error: {p}" for p in result.problems])
    return result


def kubernetes_objects(result: RunResult) -> list[tuple[str, str, str, str | None]]:
    """(apiVersion, kind, name, namespace) of every Kubernetes object the stack registers."""
    found = []
    for resource in result.resources:
        if not resource.type.startswith("kubernetes:") or resource.type.startswith(
            ("kubernetes:helm.sh/", "pulumi:providers:")
        ):
            continue
        meta = resource.inputs.get("metadata") or {}
        api_version, kind = resource.inputs.get("apiVersion"), resource.inputs.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str) and meta.get("name"):
            found.append((api_version, kind, str(meta["name"]), meta.get("namespace")))
    return found


def already_there(kube: Kube, result: RunResult) -> list[str]:
    """Objects of the stack a cluster already has: a rehearsal must never adopt (and then
    destroy) what it did not create."""
    discovery = Discovery(kube)
    taken = []
    for api_version, kind, name, namespace in kubernetes_objects(result):
        path = discovery.path(api_version, kind, name, namespace)
        if path is not None and kube.get_or_none(path) is not None:
            taken.append(f"{kind} {namespace + '/' if namespace else ''}{name}")
    return taken


def sample_while(
    sample: Callable[[], object], work: Callable[[], float], interval: float = 1.0
) -> float:
    """Run `work` (a `pulumi up`) in a thread and keep sampling until it returns: the cluster
    goes on while Pulumi waits, so a RayJob it awaits (`pulumi.com/waitFor`) can finish (the
    rig's hosts file and tokens stay current, as a real cluster's DNS would), and what happens
    during the up lands in the timeline and the invariants."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(work)
        while True:
            try:
                return future.result(timeout=interval)
            except TimeoutError:
                sample()


def job_timing(run_times: dict[str, float]) -> Any:
    """The stand-in dashboard's run time per job: by the workload its submission id names."""
    names = sorted(WORKLOADS, key=len, reverse=True)

    def timing(_namespace: str, submission_id: str) -> tuple[float, bool]:
        for name in names:
            if submission_id.startswith(f"{name}-"):
                return run_times.get(name, DEFAULT_RUN_S), False
        return DEFAULT_RUN_S, False

    return timing


@dataclass
class Rehearsal:
    """One stack on one target: scenarios played one after another, each destroyed after."""

    name: str
    stack: dict[str, Any]
    settings: Settings
    target: Target
    engine: EngineToolchain
    run_dir: Path
    run_times: dict[str, float] = field(default_factory=dict)
    progress: Progress = quiet
    tokens: TokenWatch | None = None  # the rig's: its verdict joins each scenario's

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(sorted({t.namespace for t in self.settings.scheduling.teams}))

    def observer(self, namespaces: tuple[str, ...] | None = None) -> Observer:
        """An observer of `namespaces` (default: the stack's teams')."""
        watched = self.namespaces if namespaces is None else namespaces
        observer = Observer(self.target.kube, watched)
        observer.on_event.append(lambda event: self.progress(f"  {event.line(120)}"))
        if self.target.hosts is not None:
            self.tokens = keep_heads_reachable(
                observer.before_sample, observer.note, kube=self.target.kube,
                namespaces=watched, hosts=self.target.hosts,
                dashboard=self.target.dashboard,
            )  # fmt: skip
        return observer

    def play(self, scenario: str, nodes: Nodes) -> ScenarioResult:
        result = ScenarioResult(self.name, scenario, dict(self.target.controllers))
        result.notes += self.target.notes
        self.progress(f"{self.name}: playing {scenario}")
        t0 = time.monotonic()
        nodes.all_at_max()
        self.run_times.clear()
        observer = self.observer()
        stack_name = f"{self.name}-{scenario}"
        engine_stack = EngineStack(
            self.engine, self.run_dir / stack_name, stack_name, self.target.kubeconfig,
            Path(sys.executable).parent,
        )  # fmt: skip
        engine_stack.init()

        def apply(section: dict[str, dict[str, Any]], step: str) -> None:
            config = rehearsal_config(self.stack, self.target.context, section)
            seconds = sample_while(observer.sample, lambda: engine_stack.up(config, step))
            observer.note("pulumi", "up", f"{step} in {seconds:.1f}s")

        def scale(workload: str, group: str, replicas: int) -> None:
            done = scale_ray_cluster(self.target.kube, self.namespaces, workload, group, replicas)
            observer.note(workload, "autoscaler", done)

        def hold(team: str, held: bool) -> None:
            self.target.kube.merge_patch(
                f"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/{team}",
                {"spec": {"stopPolicy": "Hold" if held else "None"}},
            )
            observer.note(team, "ClusterQueue", "held (stopPolicy Hold)" if held else "released")

        ctx = Context(
            self.settings, observer, apply, nodes.set, self.run_times.__setitem__,
            stack_workloads(self.stack), scale_workers=scale, hold_queue=hold,
        )  # fmt: skip
        try:
            scenarios.play(scenario, ctx)
        except NotApplicableError as why:
            result.applicable = False
            result.notes.append(f"not applicable to this stack: {why}")
        finally:
            self.tear_down(engine_stack, observer)
        self.finish(result, observer, ctx.checks, ctx.notes, t0)
        verdict = "held" if result.held else "BROKEN"
        self.progress(f"{self.name}: {scenario} {verdict} in {result.seconds:.0f}s")
        if self.target.supervisor is not None:
            peak = self.target.supervisor.peak_memory_mib()
            result.notes.append(f"rig processes' peak memory so far: {peak} MiB")
        return result

    def finish(
        self,
        result: ScenarioResult,
        observer: Observer,
        checks: list[Verdict],
        notes: list[str],
        t0: float,
    ) -> ScenarioResult:
        """`result` with what was observed since `t0`: the timeline, every verdict (the sampled
        invariants, the token's where the rig stood in the dashboard, `checks`) and `notes`."""
        result.events = observer.events
        tokens = [self.tokens.verdict] if self.tokens is not None else []
        result.invariants = observer.verdict_list() + tokens + checks
        result.notes += notes
        result.seconds = time.monotonic() - t0
        return result

    def tear_down(self, engine_stack: EngineStack, observer: Observer) -> None:
        observer.note("pulumi", "destroy", f"in {engine_stack.destroy():.1f}s")
        left = leftovers(self.target.kube, self.namespaces) + engine_stack.resources_left()
        judge_destroy(observer.verdicts["destroy-leaves-nothing"], left)
        observer.note(
            "rehearsal", "destroyed", f"{len(left)} left" if left else "nothing left behind"
        )


def rehearse(
    stack_file: Path,
    stack_name: str,
    scenarios: list[str],
    kubeconfig: Path | None,
    *,
    scheduler: str = KAI,
    progress: Progress = quiet,
) -> list[ScenarioResult]:
    missing = missing_prerequisites(rig=kubeconfig is None)
    if missing:
        raise ToolchainMissingError("\n".join(missing))
    engine = engine_toolchain()
    stack = read_stack_file(stack_file)
    run_dir = rig_run_dir()
    progress(f"{stack_name}: checking the stack (the program offline)")
    planned = validate(stack, run_dir, f"rehearse-{stack_name}")
    settings: Settings = planned.settings
    with target(kubeconfig, run_dir, settings, scheduler, progress) as where:
        taken = already_there(where.kube, planned)
        if taken:
            shown = ", ".join(taken[:3]) + (", ..." if len(taken) > 3 else "")
            raise InvalidConfigError(
                [
                    f"error: --kubeconfig {kubeconfig}: the cluster already has {len(taken)} "
                    f"object(s) of this stack ({shown}); rehearse on a cluster without them "
                    "(a rehearsal deletes what it applied)"
                ]
            )
        rehearsal = Rehearsal(
            stack_name, stack, settings, where, engine, run_dir, progress=progress
        )
        if where.dashboard is not None:
            where.dashboard.timing = job_timing(rehearsal.run_times)
        nodes = Nodes(where.kube, settings, run_dir.name)
        try:
            return [rehearsal.play(scenario, nodes) for scenario in scenarios]
        finally:
            if kubeconfig is not None:
                nodes.remove_all()
