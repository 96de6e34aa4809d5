"""The MultiKueue rig's Kueues: each the Configuration the stack's release of that cluster gets,
one timer on the manager shortened."""

from __future__ import annotations

import pytest
import yaml

from aksray.offline.runner import RunResult, run_program, stack_file
from aksray.rehearse.multikueue.rig import (
    RIG_WORKER_LOST_TIMEOUT,
    manager_kueue_config,
    worker_kueue_config,
    worker_lost_note,
)
from aksray.rehearse.multikueue.run import cluster_settings
from tests.support.harness import one


@pytest.fixture(scope="module")
def result() -> RunResult:
    return run_program(stack_file("multiregion"), stack="multiregion")


def _release_config(result: RunResult, cluster: str) -> object:
    release = one(result, "kubernetes:helm.sh/v3:Release", f"{cluster}-operators-kueue")
    return yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])


def test_the_manager_runs_the_stacks_kueue_with_a_short_worker_lost_timeout(
    result: RunResult,
) -> None:
    config = manager_kueue_config(result.settings)
    assert config.pop("multiKueue") == {"workerLostTimeout": RIG_WORKER_LOST_TIMEOUT}
    assert config == _release_config(result, "aksray")


def test_each_worker_runs_its_releases_kueue(result: RunResult) -> None:
    for worker, settings in cluster_settings(result.settings).items():
        if worker != "manager":
            assert worker_kueue_config(settings) == _release_config(result, f"aksray-{worker}")


def test_every_report_says_what_the_rig_changed() -> None:
    assert worker_lost_note() == (
        "Kueue MultiKueue workerLostTimeout 15m (upstream's default, which the platform keeps) "
        "runs as 30s on the rig"
    )
