"""The MultiKueue scenario's two priorities: which of the stack's jobs fill the workers, and the
probes of what the manager's credential may do on a worker."""

from __future__ import annotations

from typing import Any

from aksray.offline.runner import stack_file
from aksray.rehearse.multikueue.preemption import regional_filler, sized_to_fill
from aksray.rehearse.multikueue.probes import order_objects, shaped_job
from aksray.rehearse.multikueue.reach import OUTSIDE, probe_job
from aksray.rehearse.multikueue.run import dispatched_jobs
from aksray.rehearse.multikueue.stack import manager_jobs, offline_run
from aksray.rehearse.stack import read_stack_file


def test_the_regional_job_is_sized_to_fill_its_worker() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    workloads, regional = stack["workloads"], stack["multikueue"]["regional"]
    # vllm-batch (regional in weu, elastic 1..2) is sized to a fixed 4, at train.
    assert regional_filler(workloads, regional, 4) == (
        "vllm-batch",
        "weu",
        {"minWorkers": 4, "maxWorkers": 4},
    )
    assert sized_to_fill("qwen-lora", workloads["qwen-lora"], 4) == {"workers": 4}
    assert sized_to_fill("aurora-finetune", workloads["aurora-finetune"], 4) is None
    assert sized_to_fill("model-stage", workloads["model-stage"], 4) is None  # no GPU
    assert regional_filler(workloads, {}, 4) is None


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


def test_the_order_probe_copies_the_team_queue_without_its_cohort_or_limits() -> None:
    queue: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "spec": {
            "cohortName": "research",
            "admissionChecksStrategy": {"admissionChecks": [{"name": "multikueue-team-a"}]},
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 0}
                            ],
                        }
                    ],
                }
            ],
        },
    }
    objects = order_objects(queue, "multikueue-team-a", "aksray-order-probe")
    path, cq = objects["ClusterQueue"]
    assert path == "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
    assert "cohortName" not in cq["spec"]
    # the probe's own namespace, not the team's
    assert cq["spec"]["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "aksray-order-probe"}
    }
    assert cq["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "aksray-order-probe"}]
    }
    assert cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "nvidia.com/gpu", "nominalQuota": 8}
    ]
    assert queue["spec"]["cohortName"] == "research"  # the team's own untouched
    check = objects["AdmissionCheck"][1]
    assert check["spec"]["parameters"]["name"] == "multikueue-team-a"
    assert objects["LocalQueue"][1]["metadata"]["namespace"] == "aksray-order-probe"


def test_the_order_probe_jobs_differ_only_in_spec_managed_by() -> None:
    stack = read_stack_file(stack_file("multiregion"))
    job = manager_jobs(offline_run(stack, "multiregion", dispatched_jobs(stack)))["aurora-finetune"]
    marked, unmarked = shaped_job(job, "marked"), shaped_job(job, "unmarked")
    assert marked["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert "managedBy" not in unmarked["spec"]
    assert {**unmarked["spec"], "managedBy": marked["spec"]["managedBy"]} == marked["spec"]
    assert marked["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "aksray-order-probe"
    # a namespace of its own: a team namespace admits only Ray objects of the team's queue
    places = {marked["metadata"]["namespace"], unmarked["metadata"]["namespace"]}
    assert places == {"aksray-order-probe"}
