"""`aksray plan`'s checks that Kueue and KAI share priority classes and integrations."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from aksray.plan.checks.schedulers import check_kueue_integrations, check_priority_classes
from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import plan, registered
from aksray.plan.report.summary import summary
from tests.support.checks import is_release, only, paths, replaced
from tests.support.harness import planned
from tests.support.minimal_stack import minimal, run


def test_a_priority_class_missing_in_kueue(tmp_path: Path) -> None:
    result = run(tmp_path, minimal())
    without = dataclasses.replace(
        result,
        resources=[
            r
            for r in result.resources
            if not (r.type.endswith(":WorkloadPriorityClass") and r.name.endswith("-inference"))
        ],
    )
    findings = only(check_priority_classes, without)
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert "has no Kueue WorkloadPriorityClass" in findings.errors[0].message


def test_a_priority_class_missing_in_kai(tmp_path: Path) -> None:
    def no_default_classes(inputs: dict[str, Any]) -> dict[str, Any]:
        inputs["values"]["defaultPriorityClasses"]["enabled"] = False
        return inputs

    result = run(tmp_path, minimal())
    doctored = replaced(result, is_release("kai-scheduler"), no_default_classes)
    assert registered(doctored).kai_priority_classes == frozenset()
    findings = only(check_priority_classes, doctored)
    assert paths(findings.errors) == ["workloads.llm-serve.priority"]
    assert findings.errors[0].message.startswith(
        "priority 'inference' has no KAI PriorityClass: KAI would place it as train, out of "
        "Kueue's order; both schedulers need the class"
    )


def test_a_workload_kind_whose_kueue_integration_is_off() -> None:
    def without_rayservice(inputs: dict[str, Any]) -> dict[str, Any]:
        manager = inputs["values"]["managerConfig"]
        config = yaml.safe_load(manager["controllerManagerConfigYaml"])
        config["integrations"]["frameworks"].remove("ray.io/rayservice")
        manager["controllerManagerConfigYaml"] = yaml.safe_dump(config)
        return inputs

    doctored = replaced(planned("dev+run"), is_release("kueue"), without_rayservice)
    assert registered(doctored).kueue_frameworks == ("ray.io/rayjob",)
    findings = only(check_kueue_integrations, doctored)
    assert paths(findings.errors) == ["workloads.llm-serve.enabled"]  # the one RayService
    assert "does not enable ray.io/rayservice" in findings.errors[0].message


def test_without_installed_operators_the_documented_ones_are_assumed() -> None:
    reg = registered(planned("local"))  # operators.install: false
    assert (reg.installed_kueue, reg.installed_kai) == (False, False)
    assert reg.kueue_frameworks == ("ray.io/rayjob", "ray.io/rayservice")
    assert reg.kai_priority_classes == {"train", "build-preemptible", "build", "inference"}
    data = summary(plan(planned("local")), critical_path(planned("local")))
    assert data["schedulers"]["installedByStack"] is False
    # Kueue's WorkloadPriorityClasses are the stack's own even then
    assert reg.kueue_priority_classes == {"train", "build-preemptible", "build", "inference"}
