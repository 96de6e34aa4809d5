"""Tier T5 for MultiKueue: the two-region example stack on a manager and two worker control
planes, applied through the real Pulumi engine (`aksray rehearse --config
stacks/Pulumi.multiregion.yaml --json`).

The tests assert the timeline the controllers produced: the first `pulumi up` from an empty
fleet dispatching its job, where MultiKueue sent each job, the requeue after a worker is lost,
one worker preempting for a job of higher priority, what the manager's credential may do on a
worker, and that `pulumi destroy` leaves nothing on any cluster.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT

ROOT = PROJECT_ROOT
STACK = ROOT / "stacks" / "Pulumi.multiregion.yaml"
# The rig loads KubeRay's CRDs from the upstream reference data (make reference).
pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]


@cache
def rehearsal() -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "aksray.rehearse", "rehearse", "--config", str(STACK), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    document = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, document, done.stderr


def events(document: dict[str, Any], what: str) -> list[dict[str, Any]]:
    return [e for e in document["events"] if e["what"] == what]


def test_every_invariant_holds() -> None:
    code, document, stderr = rehearsal()
    assert document, stderr
    broken = [v for v in document["invariants"] if not v["held"]]
    assert broken == [], broken
    assert code == 0, stderr
    assert document["scenario"] == "multikueue" and document["applicable"]


def test_the_jobs_go_to_different_workers_and_the_lost_ones_job_moves() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    dispatched = [(e["workload"], e["detail"]) for e in events(document, "dispatched")]
    first = [d for w, d in dispatched if w == "manager: qwen-lora"]
    second = [d for w, d in dispatched if w == "manager: aurora-finetune"]
    assert len(first) >= 2 and first[0] != first[1], dispatched
    assert second[:1] == [first[1]], dispatched  # the overflow went where the first job moved
    lost = events(document, "lost")
    assert [e["workload"] for e in lost] == [f"manager: {first[0].removeprefix('to ')}"]


def test_each_worker_admits_and_runs_what_it_is_sent() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    admitted = {(e["workload"]) for e in events(document, "admitted")}
    # The manager admits both against the summed quota; each worker's Kueue admits its own.
    assert {"manager: qwen-lora", "manager: aurora-finetune"} <= admitted
    workers = {w.split(":")[0] for w in admitted if not w.startswith("manager")}
    assert workers == {"weu", "sce"}


def test_the_first_up_dispatches_and_a_later_one_leaves_it_alone() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    names = {v["name"]: v["held"] for v in document["invariants"]}
    assert names["scenario: qwen-lora dispatched to a worker with free GPUs and running there"]
    assert names[
        "scenario: the pulumi up that submits aurora-finetune leaves the running qwen-lora alone"
    ]


def test_a_job_created_before_its_check_is_dispatched_only_when_marked() -> None:
    """The order a first `pulumi up` on AKS can take (the rig's workers exist before the up, so
    the engine there created the AdmissionCheck first): reproduced on the manager's Kueue."""
    _, document, stderr = rehearsal()
    assert document, stderr
    names = {v["name"]: v for v in document["invariants"]}
    rejected = names[
        "scenario: a manager RayJob without spec.managedBy created before its queue's "
        "AdmissionCheck is rejected by MultiKueue (the job the program built before)"
    ]
    dispatched = names[
        "scenario: the same RayJob as the program builds it (spec.managedBy) is dispatched "
        "whatever the order"
    ]
    assert rejected["held"] and dispatched["held"], (rejected, dispatched)


def test_one_worker_preempts_for_the_job_of_higher_priority() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    names = {v["name"]: v for v in document["invariants"]}
    one = names[
        "scenario: only one worker preempts for qwen-lora (MultiKueueOrchestratedPreemption)"
    ]
    there = names[
        "scenario: qwen-lora at build-preemptible runs in the worker that preempted for it"
    ]
    assert one["held"] and there["held"], (one, there)
    # The other worker held its copy at the preemption gate.
    gated = [e for e in events(document, "pending") if "it's gated" in e["detail"]]
    assert gated, [e for e in document["events"] if e["what"] == "pending"]


def test_the_managers_credential_is_held_to_its_teams_queues() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    reach = [
        v
        for v in document["invariants"]
        if v["name"].startswith(("scenario: the manager's credential", "scenario: weu refuses"))
        or v["name"].startswith("scenario: sce refuses")
    ]
    assert len(reach) == 6, [v["name"] for v in document["invariants"]]
    assert all(v["held"] for v in reach), reach


def test_memory_and_time_are_reported() -> None:
    _, document, stderr = rehearsal()
    assert document, stderr
    notes = " | ".join(document["notes"])
    assert "rig processes' peak memory: manager" in notes
    assert "bring-up: manager" in notes and "steps: dispatch" in notes
    assert "pulumi up: first" in notes
    assert "workerLostTimeout 15m" in notes
    assert any(e["detail"] == "nothing left behind on any cluster" for e in document["events"])
