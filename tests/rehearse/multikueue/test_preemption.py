"""The MultiKueue scenario's two priorities: which of the stack's jobs fill the workers, and the
probes of what the manager's credential may do on a worker."""

from __future__ import annotations

from aksray.offline.runner import stack_file
from aksray.rehearse.multikueue.preemption import filler, sized_to_fill
from aksray.rehearse.multikueue.reach import OUTSIDE, probe_job
from aksray.rehearse.multikueue.run import dispatched_jobs
from aksray.rehearse.multikueue.stack import manager_jobs, offline_run
from aksray.rehearse.stack import read_stack_file


def test_the_third_job_is_sized_to_fill_a_worker() -> None:
    workloads = read_stack_file(stack_file("multiregion"))["workloads"]
    # qwen-lora and aurora-finetune play first; vllm-batch (regional, elastic 1..2) is sized to
    # a fixed 4 and dispatched.
    assert filler(workloads, {"qwen-lora", "aurora-finetune"}, 4) == (
        "vllm-batch",
        {"minWorkers": 4, "maxWorkers": 4},
    )
    assert sized_to_fill("qwen-lora", workloads["qwen-lora"], 4) == {"workers": 4}
    assert sized_to_fill("aurora-finetune", workloads["aurora-finetune"], 4) is None
    assert sized_to_fill("model-stage", workloads["model-stage"], 4) is None  # no GPU
    assert filler(workloads, {"qwen-lora", "vllm-batch"}, 4) is None


def test_the_reach_probes_are_the_managers_job_as_multikueue_sends_it() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    job = manager_jobs(offline_run(stack, "multiregion", dispatched_jobs(stack)))["qwen-lora"]
    assert job["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    queued = probe_job(job, "team-a", "team-a")
    assert "managedBy" not in queued["spec"]
    assert queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    unqueued = probe_job(job, "team-a", None)
    assert "kueue.x-k8s.io/queue-name" not in unqueued["metadata"]["labels"]
    assert probe_job(job, OUTSIDE, "team-a")["metadata"]["namespace"] == "default"
    assert job["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"  # the original unchanged
