"""The MultiKueue rig's Kueue on the manager: the stack's Configuration, one timer shortened."""

from __future__ import annotations

from aksray.offline.runner import run_program, stack_file
from aksray.rehearse.multikueue.rig import (
    RIG_WORKER_LOST_TIMEOUT,
    manager_kueue_config,
    worker_lost_note,
)
from manifests.helm_values import kueue_manager_config


def test_the_manager_runs_the_stacks_kueue_with_a_short_worker_lost_timeout() -> None:
    settings = run_program(stack_file("multiregion"), stack="multiregion").settings
    config = manager_kueue_config(settings)
    assert config.pop("multiKueue") == {"workerLostTimeout": RIG_WORKER_LOST_TIMEOUT}
    assert config == kueue_manager_config(metrics=False, pods_ready=settings.scheduling.pods_ready)


def test_every_report_says_what_the_rig_changed() -> None:
    assert worker_lost_note() == (
        "Kueue MultiKueue workerLostTimeout 15m (upstream's default, which the platform keeps) "
        "runs as 30s on the rig"
    )
