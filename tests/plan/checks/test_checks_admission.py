"""The plan's warning for a cluster whose operators the stack does not install: the admission
policies let KubeRay's own service account alone create GPU pods in team namespaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aksray.plan.checks.admission import check_kuberay_identity
from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import plan
from tests.support.harness import P, mutated, planned
from tests.support.minimal_stack import run


def _undeclared(config: dict[str, Any]) -> None:
    del config[P + "operators"]["kuberayServiceAccount"]


def test_a_cluster_with_its_own_operators_is_told_which_identity_kuberay_needs(
    tmp_path: Path,
) -> None:
    out = Findings()
    result = run(tmp_path, mutated("local", _undeclared))
    check_kuberay_identity(plan(result), out)
    assert [(w.path, w.message) for w in out.warnings] == [
        (
            "operators.install",
            "the admission policies let only "
            "system:serviceaccount:kuberay-system:kuberay-operator create GPU pods and "
            "RayClusters in team namespaces: run the cluster's KubeRay operator as that service "
            "account (the chart's default: release kuberay-operator in kuberay-system), or every "
            "Ray pod of the teams is refused; declare it with operators.kuberayServiceAccount "
            "(<namespace>/<name>)",
        )
    ]


def test_the_stacks_own_release_or_a_declared_one_needs_no_word() -> None:
    for stack in ("prod", "local"):  # local declares kuberay-system/kuberay-operator
        out = Findings()
        check_kuberay_identity(plan(planned(stack)), out)
        assert out.warnings == [] and out.errors == []
