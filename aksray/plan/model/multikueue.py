"""The plan of a stack with `multikueue`: one one-cluster plan per worker, built from the
resources recorded under that worker, plus what spans clusters (aksray/plan/checks/multikueue.py).

Each worker is planned with the workloads that may run there: those pinned to it (`regional`)
and every dispatched workload of a team with quota in it, so the one-cluster checks say for
each worker whether it could ever admit each of them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from aksray.offline.runner import RecordedResource, RunResult
from aksray.plan.model.plan import Plan, plan
from scheduling.multikueue import team_workers, worker_settings
from settings.model import MultiKueueSettings, Settings, WorkloadSettings, worker_path

WORKER_TYPE = "aksray:platform:MultiKueueWorker"


@dataclass(frozen=True)
class WorkerPlan:
    name: str
    path: str  # multikueue.workers[<i>]
    plan: Plan
    dispatched: tuple[str, ...]  # the dispatched workloads planned here


def multikueue_of(settings: Settings) -> MultiKueueSettings:
    if settings.multikueue is None:
        raise ValueError("the stack has no multikueue section")
    return settings.multikueue


def dispatched_workloads(settings: Settings) -> tuple[str, ...]:
    """Enabled workloads submitted to the manager, which MultiKueue sends to a worker."""
    regional = multikueue_of(settings).regional
    return tuple(w.name for w in settings.enabled_workloads if w.name not in regional)


def resources_under(result: RunResult, component_urn: str) -> list[RecordedResource]:
    """The resources whose parent chain reaches `component_urn`."""
    by_urn = {r.urn: r for r in result.resources}
    inside: list[RecordedResource] = []
    for resource in result.resources:
        parent = resource.parent
        while parent is not None and parent != component_urn:
            parent = by_urn[parent].parent if parent in by_urn else None
        if parent == component_urn:
            inside.append(resource)
    return inside


def worker_plans(result: RunResult) -> tuple[WorkerPlan, ...]:
    settings: Settings = result.settings
    multikueue = multikueue_of(settings)
    where = team_workers(settings)
    dispatched = dispatched_workloads(settings)
    components = {r.name: r.urn for r in result.resources if r.type == WORKER_TYPE}
    plans = []
    for index, worker in enumerate(multikueue.workers):
        own = worker_settings(settings, worker)
        here = tuple(
            name
            for name in dispatched
            if worker.name in where.get(settings_workload(settings, name).team, ())
        )
        workloads = tuple(w for w in settings.workloads if w.name in here or w in own.workloads)
        own = dataclasses.replace(own, workloads=workloads)
        recorded = resources_under(result, components.get(f"aksray-{worker.name}", ""))
        sub = dataclasses.replace(result, resources=recorded, settings=own)
        plans.append(
            WorkerPlan(name=worker.name, path=worker_path(index), plan=plan(sub), dispatched=here)
        )
    return tuple(plans)


def settings_workload(settings: Settings, name: str) -> WorkloadSettings:
    return next(w for w in settings.workloads if w.name == name)
