"""The MultiKueue rehearsal's inputs: which jobs it submits, each cluster's settings."""

from __future__ import annotations

from aksray.offline.runner import run_program, stack_file
from aksray.rehearse.multikueue.run import cluster_settings, dispatched_jobs, worker_gpu_quota
from aksray.rehearse.stack import read_stack_file


def test_every_enabled_dispatched_rayjob_gets_a_run() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    # vllm-batch is regional (elastic, pinned to weu): not dispatched.
    assert dispatched_jobs(stack) == {
        "qwen-lora": "rehearse-1",
        "aurora-finetune": "rehearse-1",
        "model-stage": "rehearse-1",
    }


def test_each_cluster_is_played_with_its_own_settings() -> None:
    settings = run_program(stack_file("multiregion"), stack="multiregion").settings
    clusters = cluster_settings(settings)
    assert list(clusters) == ["manager", "weu", "sce"]
    assert clusters["manager"].cluster.gpu_pools == settings.multikueue.gpu_pools
    assert [p.name for p in clusters["weu"].cluster.gpu_pools] == ["a100"]
    assert clusters["weu"].location == "westeurope"
    assert worker_gpu_quota(settings, "team-a") == 4
