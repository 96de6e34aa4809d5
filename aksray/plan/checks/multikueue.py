"""Checks of a stack with `multikueue`, across its clusters.

Errors:
- every one-cluster check, run on each worker (its findings name the worker); a dispatched
  workload is an error only when no worker can ever admit it (each worker's reason given);
- a dispatched workload whose team has quota in no worker;
- a team identity trusted by more clusters' service accounts than Azure's federated
  credentials per identity allow (one credential per service account per cluster).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from aksray.plan.checks.findings import Findings
from aksray.plan.checks.run import run_checks, run_settings_checks
from aksray.plan.model.multikueue import WorkerPlan, dispatched_workloads, multikueue_of
from aksray.plan.model.plan import Plan
from catalog.azure import MAX_FEDERATED_CREDENTIALS_PER_IDENTITY
from manifests.identity import team_service_accounts
from scheduling.multikueue import team_workers, worker_settings
from settings.errors import Problem
from settings.model import Settings, workload_path


@dataclass(frozen=True)
class WorkerPlace:
    """A worker as its findings are reported: its name, its path in the stack file and the
    one-cluster settings it is checked as."""

    name: str
    path: str  # multikueue.workers[<i>]
    settings: Settings

    @classmethod
    def of(cls, worker: WorkerPlan) -> WorkerPlace:
        return cls(worker.name, worker.path, worker.plan.settings)


def _reworded(text: str, worker: WorkerPlace, settings: Settings) -> str:
    """A worker finding's config paths as the stack file has them: a team's quota is under the
    worker (`multikueue.workers[<i>].quota.<team>`), its other settings at the team's path in
    the whole tree (the worker's tree holds only the teams with quota there)."""
    for team in worker.settings.scheduling.teams:
        own = re.escape(worker.settings.scheduling.team_path(team.name))
        text = re.sub(own + r"\.quota(?![A-Za-z])", f"{worker.path}.quota.{team.name}", text)
        text = re.sub(own + r"(?![0-9])", settings.scheduling.team_path(team.name), text)
    return re.sub(r"(?<![.\w])cluster\.", f"{worker.path}.cluster.", text)


def _in_worker(problem: Problem, worker: WorkerPlace, settings: Settings) -> Problem:
    """A worker's finding, at the stack file's path, saying which worker."""
    return Problem(
        _reworded(problem.path, worker, settings),
        f"in worker {worker.name}: {_reworded(problem.message, worker, settings)}",
    )


def run_worker_settings_checks(settings: Settings) -> Findings:
    """The checks that need only the settings, on each worker, before the program runs: the
    manager holds no quota of its own, so its own run of them finds nothing to check."""
    findings = Findings()
    for index, worker in enumerate(multikueue_of(settings).workers):
        place = WorkerPlace(
            worker.name, f"multikueue.workers[{index}]", worker_settings(settings, worker)
        )
        found = run_settings_checks(place.settings)
        findings.errors += [_in_worker(p, place, settings) for p in found.errors]
        findings.warnings += [_in_worker(p, place, settings) for p in found.warnings]
    return findings


def _only(plan: Plan, names: Collection[str]) -> Plan:
    """A worker's plan with only the workloads `names` (in its settings too)."""
    settings = dataclasses.replace(
        plan.settings, workloads=tuple(w for w in plan.settings.workloads if w.name in names)
    )
    workloads = tuple(w for w in plan.workloads if w.workload.name in names)
    return dataclasses.replace(plan, settings=settings, workloads=workloads)


def _errors_by_dispatched(worker: WorkerPlan) -> tuple[set[Problem], dict[str, set[Problem]]]:
    """The worker's errors without any dispatched workload, and per dispatched workload the
    errors it adds alone: what a worker refuses a dispatched workload for, whatever path the
    check reports it at (the team's quota, a pool, the workload's own keys)."""
    own = {w.name for w in worker.plan.settings.workloads} - set(worker.dispatched)
    base = set(run_checks(_only(worker.plan, own)).errors)
    added = {
        name: set(run_checks(_only(worker.plan, own | {name})).errors) - base
        for name in worker.dispatched
    }
    return base, added


def check_workers(settings: Settings, workers: tuple[WorkerPlan, ...], findings: Findings) -> None:
    """The one-cluster checks per worker; a dispatched workload fails only if it fails in all."""
    refused: dict[str, list[tuple[str, Problem]]] = defaultdict(list)
    for worker in workers:
        found = run_checks(worker.plan)
        place = WorkerPlace.of(worker)
        base, added = _errors_by_dispatched(worker) if worker.dispatched else (set(), {})
        for problem in found.errors:
            owners = [name for name, errors in added.items() if problem in errors]
            if problem in base or not owners:
                findings.errors.append(_in_worker(problem, place, settings))
            for name in owners if problem not in base else ():
                reworded = Problem(
                    _reworded(problem.path, place, settings),
                    _reworded(problem.message, place, settings),
                )
                refused[name].append((worker.name, reworded))
        findings.warnings += [_in_worker(p, place, settings) for p in found.warnings]
    candidates = {
        w.name: [p.name for p in workers if w.name in p.dispatched] for w in settings.workloads
    }
    for name, reasons in refused.items():
        if {worker for worker, _ in reasons} >= set(candidates[name]):
            findings.errors.append(_admitted_nowhere(name, reasons))


def _admitted_nowhere(workload: str, reasons: list[tuple[str, Problem]]) -> Problem:
    """One line for a dispatched workload no worker can admit: at the workload's key every
    worker refuses it for, if there is one (e.g. its cpuPerGpu), else at the workload; the
    workers that give the same reason named together."""
    failed = {worker for worker, _ in reasons}
    own = f"{workload_path(workload)}."
    shared = sorted(
        path
        for path in {p.path for _, p in reasons if p.path.startswith(own)}
        if {worker for worker, p in reasons if p.path == path} == failed
    )
    path = shared[0] if shared else workload_path(workload)
    said: dict[str, list[str]] = {}
    for worker, problem in reasons:
        if not shared or problem.path == path:
            said.setdefault(problem.message, [])
            if worker not in said[problem.message]:
                said[problem.message].append(worker)
    parts = [f"{' and '.join(names)}: {message}" for message, names in said.items()]
    return Problem(
        path, "no worker can ever admit it, so MultiKueue never dispatches it: " + "; ".join(parts)
    )


def check_dispatched_have_a_worker(settings: Settings, findings: Findings) -> None:
    where = team_workers(settings)
    for name in dispatched_workloads(settings):
        team = next(w.team for w in settings.workloads if w.name == name)
        if not where.get(team):
            findings.error(
                workload_path(name),
                f"team {team} has quota in no worker, so MultiKueue can dispatch it nowhere; "
                f"give {team} quota in multikueue.workers[*].quota",
            )


def federated_credentials(settings: Settings) -> dict[str, int]:
    """Per team identity: one credential per service account of the team in each worker it has
    quota in. The manager adds none: no team pod runs there (its Ray objects run on workers).
    None at all where the stack creates no identity (no Blob, or an existing account)."""
    counts = {team.name: 0 for team in settings.scheduling.teams}
    if not settings.storage.enabled or settings.storage.existing_account:
        return counts
    for worker in multikueue_of(settings).workers:
        own = worker_settings(settings, worker)
        for team in own.scheduling.teams:
            counts[team.name] += len(team_service_accounts(team.name, own.elastic_teams))
    return counts


def check_federated_credentials(settings: Settings, findings: Findings) -> None:
    if not settings.storage.enabled or settings.storage.existing_account:
        return
    for team, count in federated_credentials(settings).items():
        if count > MAX_FEDERATED_CREDENTIALS_PER_IDENTITY:
            findings.error(
                settings.scheduling.team_path(team),
                f"its Blob identity would need {count} federated credentials (one per service "
                "account in each worker it has quota in); Azure allows "
                f"{MAX_FEDERATED_CREDENTIALS_PER_IDENTITY} per identity: give the team quota in "
                "fewer workers",
            )


def run_multikueue_checks(settings: Settings, workers: tuple[WorkerPlan, ...]) -> Findings:
    findings = Findings()
    check_dispatched_have_a_worker(settings, findings)
    check_workers(settings, workers, findings)
    check_federated_credentials(settings, findings)
    return findings
