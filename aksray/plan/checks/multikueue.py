"""Checks of a stack with `multikueue`, across its clusters.

Errors:
- every one-cluster check, run on each worker (its findings name the worker); a dispatched
  workload is an error only when no worker can ever admit it (each worker's reason given);
- a dispatched workload whose team has quota in no worker;
- a team identity trusted by more clusters' service accounts than Azure's federated
  credentials per identity allow (one credential per service account per cluster).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from aksray.plan.checks.findings import Findings
from aksray.plan.checks.run import run_checks, run_settings_checks
from aksray.plan.model.multikueue import WorkerPlan, dispatched_workloads, multikueue_of
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


def check_workers(settings: Settings, workers: tuple[WorkerPlan, ...], findings: Findings) -> None:
    """The one-cluster checks per worker; a dispatched workload fails only if it fails in all."""
    refused: dict[str, list[str]] = defaultdict(list)
    for worker in workers:
        found = run_checks(worker.plan)
        place = WorkerPlace.of(worker)
        for problem in found.errors:
            workload = problem.path.removeprefix("workloads.").split(".")[0]
            if problem.path.startswith("workloads.") and workload in worker.dispatched:
                reason = _reworded(problem.message, place, settings)
                refused[workload].append(f"{worker.name}: {reason}")
            else:
                findings.errors.append(_in_worker(problem, place, settings))
        findings.warnings += [_in_worker(p, place, settings) for p in found.warnings]
    candidates = {
        w.name: [p.name for p in workers if w.name in p.dispatched] for w in settings.workloads
    }
    for name, reasons in refused.items():
        failed = {reason.split(":", 1)[0] for reason in reasons}
        if failed >= set(candidates[name]):
            findings.error(
                workload_path(name),
                "no worker can ever admit it, so MultiKueue never dispatches it: "
                + "; ".join(reasons),
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
    quota in. The manager adds none: no team pod runs there (its Ray objects run on workers)."""
    counts = {team.name: 0 for team in settings.scheduling.teams}
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
