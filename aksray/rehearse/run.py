"""One `aksray rehearse`: validate, bring the rig up, play each scenario, tear down, report."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from aksray.rehearse import objects as o
from aksray.rehearse.bringup import start_rig
from aksray.rehearse.controlplane import (
    CLUSTER_DOMAIN,
    DASHBOARD_ADDRESS,
    KUBECONFIG_CONTEXT,
    NODE_ADDRESS,
    rig_run_dir,
    remove_run_data,
)
from aksray.rehearse.dashboard import DashboardState, HeadHosts, StandInDashboard
from aksray.rehearse.engine import EngineStack
from aksray.rehearse.kube import Kube, KubeError, credentials_from_kubeconfig
from aksray.rehearse.nodes import REHEARSAL_LABEL, cluster_pools, node_name, node_object
from aksray.rehearse.observe import Observer, TimelineEvent, Verdict
from aksray.rehearse.scenarios import SCENARIOS, Context, NotApplicable
from aksray.rehearse.stack import read_stack_file, rehearsal_config, stack_workloads
from aksray.rehearse.toolchain import engine_toolchain, rig_toolchain
from workloads.catalog import WORKLOADS

KAI_NOTE = (
    "no KAI on this rig (its source is not served here): kube-scheduler binds the Ray pods "
    "without gang semantics; KAI's part is covered by `aksray plan`'s static checks"
)


class ConfigInvalid(Exception):
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


def validate(stack: dict[str, Any], run_dir: Path, name: str) -> Any:
    """Run the program offline on the rehearsal stack: Settings, or every problem."""
    from aksray.runner import run_program

    path = run_dir / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": rehearsal_config(stack, KUBECONFIG_CONTEXT)}), encoding="utf-8")
    result = run_program(path, stack=name)
    if result.problems:
        raise ConfigInvalid([f"error: {p}" for p in result.problems])
    return result.settings


@dataclass
class Nodes:
    kube: Kube
    settings: Any
    rehearsal: str

    def set(self, pool_name: str, count: int) -> None:
        pool = next(p for p in cluster_pools(self.settings.cluster) if p.pool == pool_name)
        for index in range(max(pool.count, count) + 1):
            path = f"/api/v1/nodes/{node_name(pool.pool, index)}"
            exists = self.kube.get_or_none(path) is not None
            if index < count and not exists:
                self.kube.create("/api/v1/nodes", node_object(pool, index, self.rehearsal))
            elif index >= count and exists:
                self.kube.delete(path)

    def all_at_max(self) -> None:
        for pool in cluster_pools(self.settings.cluster):
            self.set(pool.pool, pool.count)

    def remove_all(self) -> None:
        for node in self.kube.items("/api/v1/nodes", f"{REHEARSAL_LABEL}={self.rehearsal}"):
            self.kube.delete(f"/api/v1/nodes/{node['metadata']['name']}")


def job_timing(run_times: dict[str, float]) -> Any:
    names = sorted(WORKLOADS, key=len, reverse=True)

    def timing(_namespace: str, submission_id: str) -> tuple[float, bool]:
        for name in names:
            if submission_id.startswith(f"{name}-"):
                return run_times.get(name, 8.0), False
        return 8.0, False

    return timing


def leftovers(kube: Kube, namespaces: tuple[str, ...], timeout: float = 90) -> list[str]:
    """What is still there after `pulumi destroy` (waiting for finalizers to finish)."""
    deadline = time.monotonic() + timeout
    while True:
        left = [f"namespace {ns}" for ns in namespaces if kube.get_or_none(f"/api/v1/namespaces/{ns}")]
        for plural in ("clusterqueues", "resourceflavors", "cohorts", "workloadpriorityclasses"):
            left += [f"{plural} {x['metadata']['name']}" for x in kube.items(f"/apis/kueue.x-k8s.io/v1beta2/{plural}")]
        left += [f"queues {x['metadata']['name']}" for x in kube.items("/apis/scheduling.run.ai/v2/queues")]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


@contextlib.contextmanager
def rig_or_cluster(kubeconfig: Path | None, run_dir: Path) -> Iterator[tuple[Kube, Path, Any, dict[str, str]]]:
    if kubeconfig is not None:
        kube = Kube(credentials_from_kubeconfig(kubeconfig))
        yield kube, kubeconfig, None, {"cluster": f"the cluster of {kubeconfig}"}
        return
    tools = rig_toolchain()
    plane = start_rig(tools, run_dir)
    try:
        yield plane.kube, plane.kubeconfig, plane, tools.controller_versions()
    finally:
        plane.stop()
        remove_run_data(run_dir)


def rehearse(
    stack_file: Path, stack_name: str, scenarios: list[str], kubeconfig: Path | None
) -> list[ScenarioResult]:
    engine = engine_toolchain()
    stack = read_stack_file(stack_file)
    run_dir = rig_run_dir()
    settings = validate(stack, run_dir, f"rehearse-{stack_name}")
    namespaces = tuple(sorted({t.namespace for t in settings.scheduling.teams}))
    results: list[ScenarioResult] = []
    state = DashboardState()
    run_times: dict[str, float] = {}
    state.timing = job_timing(run_times)
    with rig_or_cluster(kubeconfig, run_dir) as (kube, kubecfg, plane, controllers):
        dashboard = StandInDashboard(DASHBOARD_ADDRESS, NODE_ADDRESS, state) if plane else None
        hosts = HeadHosts(plane.kuberay_etc, DASHBOARD_ADDRESS, CLUSTER_DOMAIN) if plane else None
        nodes = Nodes(kube, settings, run_dir.name)
        python_bin = Path(sys.executable).parent
        context = KUBECONFIG_CONTEXT if plane else None
        try:
            for scenario in scenarios:
                result = ScenarioResult(stack_name, scenario, dict(controllers))
                if plane:
                    result.notes.append(KAI_NOTE)
                    result.notes.append(f"rig bring-up {plane.timings.get('total', 0):.1f}s")
                results.append(result)
                run_scenario(result, stack, settings, kube, kubecfg, engine, run_dir, nodes, run_times, hosts, namespaces, python_bin, context)
        finally:
            if dashboard:
                dashboard.close()
            if plane is None:
                nodes.remove_all()
    return results


def run_scenario(result, stack, settings, kube, kubeconfig, engine, run_dir, nodes, run_times, hosts, namespaces, python_bin, context) -> None:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    nodes.all_at_max()
    run_times.clear()
    observer = Observer(kube, namespaces)
    if hosts is not None:
        original = observer.sample

        def sample_and_resolve():  # type: ignore[no-untyped-def]
            services = []
            for ns in namespaces:
                for svc in kube.items(f"/api/v1/namespaces/{ns}/services", "ray.io/node-type=head"):
                    services.append((ns, svc["metadata"]["name"]))
            hosts.update(services)
            return original()

        observer.sample = sample_and_resolve  # type: ignore[method-assign]
    stack_name = f"{result.stack}-{result.scenario}"
    engine_stack = EngineStack(engine, run_dir / stack_name, stack_name, kubeconfig, python_bin)
    engine_stack.init()

    def apply(section: dict[str, dict[str, Any]], step: str) -> None:
        seconds = engine_stack.up(rehearsal_config(stack, context or "", section), step)
        observer.note("pulumi", "up", f"{step} in {seconds:.1f}s")

    ctx = Context(settings, observer, apply, nodes.set, run_times.__setitem__, stack_workloads(stack))
    try:
        SCENARIOS[result.scenario](ctx)
    except NotApplicable as why:
        result.applicable = False
        result.notes.append(f"not applicable to this stack: {why}")
    finally:
        seconds = engine_stack.destroy()
        observer.note("pulumi", "destroy", f"in {seconds:.1f}s")
        left = leftovers(kube, namespaces) + engine_stack.resources_left()
        if left:
            observer.verdicts["destroy-leaves-nothing"].breach("left behind: " + ", ".join(left))
        observer.note("rehearsal", "destroyed", "nothing left behind" if not left else f"{len(left)} left")
    result.events = observer.events
    result.invariants = observer.verdict_list() + ctx.checks
    result.notes += ctx.notes
    result.seconds = time.monotonic() - t0
