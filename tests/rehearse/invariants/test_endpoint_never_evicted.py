"""The `endpoint-never-evicted` invariant judges endpoints only: a run without one says so (n/a)
instead of reporting it held."""

from __future__ import annotations

from typing import Any

from aksray.rehearse.invariants.endpoint_never_evicted import NO_ENDPOINT, watch
from aksray.rehearse.record import Sample, Verdict
from aksray.rehearse.report import text_lines
from aksray.rehearse.run import ScenarioResult


def _workload(kind: str, name: str, *, evicted: bool = False) -> dict[str, Any]:
    conditions = [{"type": "Evicted", "status": "True", "reason": "Preempted", "message": "m"}]
    return {
        "metadata": {
            "name": f"{kind.lower()}-{name}",
            "namespace": "team-a",
            "ownerReferences": [{"kind": kind, "name": name}],
        },
        "status": {"conditions": conditions if evicted else []},
    }


def _sample(t: float, *workloads: dict[str, Any]) -> Sample:
    return Sample(t, list(workloads), [], {}, {}, {}, {}, {})


def _judged(*samples: Sample) -> Verdict:
    verdict, check = Verdict("endpoint-never-evicted"), watch()
    for sample in samples:
        check(sample, verdict)
    return verdict


def test_a_run_without_an_endpoint_is_not_applicable() -> None:
    verdict = _judged(_sample(1.0, _workload("RayJob", "qwen-lora", evicted=True)))
    assert (verdict.held, verdict.applicable, verdict.mark) == (True, False, "n/a")
    assert verdict.as_json() == {
        "name": "endpoint-never-evicted", "held": True, "detail": NO_ENDPOINT, "applicable": False
    }  # fmt: skip
    result = ScenarioResult("dev", "submit-all", {}, invariants=[verdict])
    assert f"    n/a    endpoint-never-evicted: {NO_ENDPOINT}" in text_lines([result])


def test_an_endpoint_seen_once_is_judged_for_the_whole_run() -> None:
    held = _judged(_sample(1.0, _workload("RayService", "llm-serve")), _sample(2.0))
    assert (held.held, held.applicable, held.mark) == (True, True, "held")
    broken = _judged(_sample(1.0), _sample(3.5, _workload("RayService", "llm-serve", evicted=True)))
    assert (broken.held, broken.mark) == (False, "BROKEN")
    assert broken.detail.startswith("t=+3.5s ")
