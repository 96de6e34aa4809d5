"""The MultiKueue scenario's choice of jobs, from the stack's own RayJobs."""

from __future__ import annotations

import pytest

from aksray.offline.runner import RunResult, stack_file
from aksray.rehearse.multikueue.run import dispatched_jobs, worker_gpu_quota
from aksray.rehearse.multikueue.scenario import pick_jobs, rayjob_gpus
from aksray.rehearse.multikueue.stack import manager_jobs, offline_run
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.stack import read_stack_file


@pytest.fixture(scope="module")
def ran() -> RunResult:
    stack = read_stack_file(stack_file("multiregion"))
    result: RunResult = offline_run(stack, "multiregion", dispatched_jobs(stack))
    return result


def test_gpus_of_the_stacks_jobs(ran: RunResult) -> None:
    jobs = manager_jobs(ran)
    assert {name: rayjob_gpus(job) for name, job in jobs.items()} == {
        "qwen-lora": 4,
        "aurora-finetune": 1,
        "model-stage": 0,
    }


def test_the_first_job_fills_a_worker_and_the_second_is_smaller(ran: RunResult) -> None:
    jobs = manager_jobs(ran)
    assert worker_gpu_quota(ran.settings, "team-a") == 4
    assert pick_jobs(jobs, 4) == ("qwen-lora", "aurora-finetune")


def test_a_stack_without_such_jobs_is_not_applicable(ran: RunResult) -> None:
    with pytest.raises(NotApplicableError, match="no RayJob of 8 GPUs"):
        pick_jobs(manager_jobs(ran), 8)
