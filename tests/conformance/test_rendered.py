"""T3: every custom resource the program registers, for every stack, passes its upstream CRD —
schema, unknown fields and every CEL rule (tests/support/crd/conformance.py)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from aksray.offline.render import is_kubernetes_object
from aksray.offline.runner import PROJECT_ROOT, RunResult, run_program
from tests.support.crd.conformance import is_custom_resource, validate_object
from tests.support.harness import STACKS, planned

SCENARIOS = sorted((PROJECT_ROOT / "tests" / "stacks").glob("*.yaml"))
# What the scheduling tree alone must produce in every stack (other kinds may join them).
SCHEDULING_KINDS = {
    "ResourceFlavor",
    "WorkloadPriorityClass",
    "Cohort",
    "ClusterQueue",
    "LocalQueue",
    "Queue",
}


# Scrape objects: the reference holds no CRD for them (neither the Prometheus Operator's nor
# AKS's metrics add-on's); tests/components/test_observability.py checks their fields and targets.
WITHOUT_REFERENCE_CRD = frozenset({"azmonitoring.coreos.com", "monitoring.coreos.com"})


def custom_resources(result: RunResult) -> list[dict[str, Any]]:
    return [
        r.inputs
        for r in result.resources
        if is_kubernetes_object(r)
        and is_custom_resource(r.inputs)
        and str(r.inputs["apiVersion"]).rpartition("/")[0] not in WITHOUT_REFERENCE_CRD
    ]


@pytest.mark.reference
def test_every_custom_resource_of_every_stack_passes_its_crd() -> None:
    results = [planned(stack) for stack in (*STACKS, "dev+run", "prod+run")]
    results += [run_program(path) for path in SCENARIOS]
    assert len(results) >= 5
    assert [r.stack for r in results if not r.ok] == []
    objects = [(result.stack, o) for result in results for o in custom_resources(result)]
    started = time.perf_counter()
    errors = [error for _, manifest in objects for error in validate_object(manifest)]
    elapsed = time.perf_counter() - started
    assert errors == []
    print(f"validated {len(objects)} custom resources in {elapsed:.2f} s")
    assert elapsed < 10
    for result in results:
        kinds = Counter(o["kind"] for o in custom_resources(result))
        assert set(kinds) >= SCHEDULING_KINDS, (result.stack, kinds)
        assert kinds["WorkloadPriorityClass"] == 4


@pytest.mark.reference
@pytest.mark.parametrize("stack", STACKS)
def test_a_broken_object_in_a_stack_would_be_caught(stack: str) -> None:
    """The check above can fail: the same objects, each with one unknown field, all fail."""
    for manifest in custom_resources(planned(stack)):
        broken = {**manifest, "spec": {**manifest.get("spec", {}), "unknownField": 1}}
        if "spec" not in manifest:  # e.g. WorkloadPriorityClass: a top-level field
            broken = {**manifest, "unknownField": 1}
        errors = validate_object(broken)
        assert any("unknownField: unknown field" in error for error in errors), errors
