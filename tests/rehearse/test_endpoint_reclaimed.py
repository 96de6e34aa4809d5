"""Tier T5: an endpoint on borrowed quota reclaimed, on the KubeRay the platform ships (v1.6.2).

The issue's stack (tests/stacks/serving-borrows.yaml: the AKS team-queues demo with team-a
serving 5 replicas on its 4 GPUs and 1 borrowed) plays `endpoint-reclaimed`. What decided the
plan's rule (a warning, aksray/plan/checks/services.py): Kueue evicts the whole endpoint, the
GPUs come back (KubeRay suspends its Ray cluster in place), team-b's job runs on them, and the
endpoint runs again once its quota fits. `endpoint-never-evicted` breaks, by design: that is
the cost the plan's warning names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Final

import pytest

from aksray.offline.runner import PROJECT_ROOT

pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]

STACK: Final = PROJECT_ROOT / "tests" / "stacks" / "serving-borrows.yaml"


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "aksray.rehearse", "rehearse", "--config", str(STACK),
         "--scenario", "endpoint-reclaimed", "--json"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]  # endpoint-never-evicted, below
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_the_reclaimed_endpoint_gives_its_gpus_back_and_runs_again(result: dict[str, Any]) -> None:
    verdicts = {v["name"]: v for v in result["invariants"]}
    scenario = {name: v["held"] for name, v in verdicts.items() if name.startswith("scenario: ")}
    assert scenario == {
        "scenario: llm-serve runs 5 replicas on team team-a's 4 GPUs of gpu and 1 borrowed "
        "from its cohort": True,
        "scenario: the reclaimed endpoint gives its GPUs back: KubeRay suspends its running Ray "
        "cluster in place and deletes its pods": True,
        "scenario: team team-b's job runs on the GPUs given back, while the whole endpoint is "
        "down (not only its borrowed replica)": True,
        "scenario: the endpoint runs again once its quota plus what the cohort lends fits it": True,
    }


def test_only_endpoint_never_evicted_breaks_and_by_reclaim(result: dict[str, Any]) -> None:
    broken = [v for v in result["invariants"] if not v["held"]]
    assert [v["name"] for v in broken] == ["endpoint-never-evicted"]
    assert "due to reclamation within the cohort" in broken[0]["detail"]
    assert "preemptor path: /ml/team-b; preemptee path: /ml/team-a" in broken[0]["detail"]
