"""The fleet as a whole (settings/multikueue_fleet.py): what `pulumi up` would fail on in a
worker, refused once at its path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import P, assert_rejected, stack_document


def _multiregion() -> dict[str, Any]:
    return stack_document("multiregion")


def test_operators_left_out_are_refused_once_for_the_manager_and_every_worker(
    tmp_path: Path,
) -> None:
    """Every worker is a new cluster: without operators `pulumi up` fails on its first queue."""
    document = _multiregion()
    document["config"][P + "operators"] = {"install": False}
    run = assert_rejected(tmp_path, document, "operators.install")
    assert [x for x in run.error_lines if x.startswith("error: operators.install: ")] == [
        "error: operators.install: is false, but mode: aks creates a new cluster, which has no "
        "GPU Operator, KubeRay, Kueue or KAI Scheduler: `pulumi up` would fail on the first "
        "queue after creating the cluster; set operators.install: true (or mode: existing for a "
        "cluster that runs them)"
    ]


def test_a_worker_in_a_region_without_its_gpu_size_is_the_one_problem() -> None:
    config = _multiregion()["config"]
    # northcentralus is in the region table and offers no A100 PCIe size.
    config[P + "multikueue"]["workers"][0]["location"] = "northcentralus"
    raw = {key.removeprefix(P): value for key, value in config.items()}
    with pytest.raises(SettingsError) as refused:
        parse_settings(raw, stack="multiregion")
    [problem] = refused.value.problems
    assert problem.path == "multikueue.workers[0].cluster.gpuPools[0].vmSize"
    assert problem.message.startswith("northcentralus does not offer Standard_NC24ads_A100_v4 ")
