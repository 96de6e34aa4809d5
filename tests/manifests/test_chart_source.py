"""`operators.chartSource`: the projects' charts, or Microsoft's builds of KubeRay and Kueue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import RunResult, run_program
from tests.support.harness import P, assert_rejected, mutated, one, planned, write_stack

RELEASE = "kubernetes:helm.sh/v3:Release"
MCR = "oci://mcr.microsoft.com/aks/ai-runtime/helm"


def _with_source(source: str) -> Any:
    def mutate(config: dict[str, Any]) -> None:
        config.setdefault(P + "operators", {})["chartSource"] = source

    return mutate


@pytest.fixture(scope="module")
def mcr_dev(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    folder = tmp_path_factory.mktemp("mcr")
    result = run_program(write_stack(folder, mutated("dev", _with_source("mcr"))), stack="dev")
    assert not result.problems, result.problems
    return result


def _inputs(result: RunResult, name: str) -> dict[str, Any]:
    return one(result, RELEASE, f"aksray-operators-{name}").inputs


def test_mcr_installs_microsofts_kuberay_and_kueue_with_their_images(mcr_dev: RunResult) -> None:
    kuberay = _inputs(mcr_dev, "kuberay-operator")
    assert (kuberay["chart"], kuberay["version"]) == (f"{MCR}/kuberay-operator", "1.6.2")
    assert "repositoryOpts" not in kuberay or not kuberay["repositoryOpts"]
    assert kuberay["values"]["image"] == {
        "repository": "mcr.microsoft.com/oss/v2/kuberay/operator",
        "tag": "v1.6.2",
    }
    kueue = _inputs(mcr_dev, "kueue")
    assert (kueue["chart"], kueue["version"]) == (f"{MCR}/kueue", "0.19.2")
    assert kueue["values"]["controllerManager"]["manager"]["image"] == {
        "repository": "mcr.microsoft.com/oss/v2/kueue/kueue",
        "tag": "v0.19.2",
        "pullPolicy": "IfNotPresent",
    }
    # Same releases in the same namespaces: switching sources upgrades them in place.
    assert (kuberay["name"], kuberay["namespace"]) == ("kuberay-operator", "kuberay-system")
    assert (kueue["name"], kueue["namespace"]) == ("kueue", "kueue-system")


@pytest.mark.parametrize("name", ["kuberay-operator", "kueue"])
def test_both_sources_install_the_same_pair(mcr_dev: RunResult, name: str) -> None:
    """The one Kueue/KubeRay pair the conformance tests and the rehearsal check, from either
    registry: only where it comes from and its image differ."""
    ours, upstream = _inputs(mcr_dev, name), _inputs(planned("dev"), name)
    assert ours["version"] == upstream["version"]
    assert ours["chart"] != upstream["chart"]


@pytest.mark.parametrize("name", ["gpu-operator", "kai-scheduler"])
def test_mcr_keeps_the_upstream_gpu_operator_and_kai(mcr_dev: RunResult, name: str) -> None:
    assert _inputs(mcr_dev, name) == _inputs(planned("dev"), name)


@pytest.mark.parametrize("name", ["kuberay-operator", "kueue"])
def test_only_the_images_differ_in_the_values(mcr_dev: RunResult, name: str) -> None:
    def without_images(values: dict[str, Any]) -> dict[str, Any]:
        copy = {k: v for k, v in values.items() if k != "image"}
        if "controllerManager" in copy:
            manager = {**copy["controllerManager"]["manager"]}
            manager.pop("image")
            copy["controllerManager"] = {**copy["controllerManager"], "manager": manager}
        return copy

    ours, upstream = _inputs(mcr_dev, name)["values"], _inputs(planned("dev"), name)["values"]
    assert ours != upstream
    assert without_images(ours) == without_images(upstream)


def test_the_default_is_upstream() -> None:
    kueue = _inputs(planned("dev"), "kueue")
    assert (kueue["chart"], kueue["version"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue",
        "0.19.2",
    )


def test_an_unknown_source_is_refused(tmp_path: Path) -> None:
    run = assert_rejected(
        tmp_path, mutated("dev", _with_source("microsoft")), "operators.chartSource"
    )
    assert "must be one of upstream, mcr" in run.stderr


def test_a_source_without_install_is_refused(tmp_path: Path) -> None:
    run = assert_rejected(tmp_path, mutated("local", _with_source("mcr")), "operators.chartSource")
    assert "only for operators.install: true" in run.stderr
