"""The operator releases of a planned stack: each release and its Helm values, Kueue's manager
config (ours and the pinned chart's), and a stack run with changed settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from aksray.offline.runner import RecordedResource, RunResult, run_program
from tests.support.harness import P, mutated, one, write_stack
from tests.support.reference import chart as reference_chart

RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
CHART_BY_RELEASE = {
    "aksray-operators-gpu-operator": "gpu-operator",
    "aksray-operators-kuberay-operator": "kuberay-operator",
    "aksray-operators-kueue": "kueue",
    "aksray-operators-kai-scheduler": "kai-scheduler",
}


def release(result: RunResult, name: str) -> RecordedResource:
    return one(result, RELEASE, name)


def values(result: RunResult, name: str) -> dict[str, Any]:
    found = release(result, name).inputs["values"]
    assert isinstance(found, dict)
    return found


def kueue_config(result: RunResult) -> dict[str, Any]:
    text = values(result, "aksray-operators-kueue")["managerConfig"]["controllerManagerConfigYaml"]
    config = yaml.safe_load(text)
    assert isinstance(config, dict)
    return config


def upstream_kueue_config() -> dict[str, Any]:
    chart = yaml.safe_load((reference_chart("kueue") / "values.yaml").read_text())
    config = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    assert isinstance(config, dict)
    return config


def run_mutated(tmp_path: Path, stack: str, change: dict[str, Any]) -> RunResult:
    def apply(config: dict[str, Any]) -> None:
        for key, patch in change.items():
            config[P + key] = {**(config.get(P + key) or {}), **patch}

    result = run_program(write_stack(tmp_path, mutated(stack, apply)))
    assert result.ok, result.problems
    return result
