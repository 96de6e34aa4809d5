"""The order the README promises: a workload that streams the base model from Blob starts only
after `model-stage` has put it there, when one `pulumi up` submits both. Pulumi waits for the
staging RayJob to succeed (its `pulumi.com/waitFor` annotation) and creates the streaming
workloads after it (a recorded dependency edge)."""

from __future__ import annotations

from pathlib import Path

from aksray.offline.runner import RecordedResource, RunResult, run_program
from manifests.staging import STAGE_AWAIT_SECONDS, STAGE_SUCCEEDED
from tests.support.harness import P, mutated, one, planned, write_stack

RAY_JOB = "kubernetes:ray.io/v1:RayJob"
RAY_SERVICE = "kubernetes:ray.io/v1:RayService"


def _stage(result: RunResult) -> RecordedResource:
    return one(result, RAY_JOB, "aksray-workloads-model-stage")


def _annotations(resource: RecordedResource) -> dict[str, str]:
    return dict(resource.inputs["metadata"].get("annotations") or {})


def test_the_endpoint_starts_after_the_copy_it_streams_succeeded() -> None:
    """prod submits model-stage and the endpoint (modelSource blob) in the same `pulumi up`."""
    result = planned("prod")
    stage = _stage(result)
    assert _annotations(stage) == {
        "pulumi.com/waitFor": "jsonpath={.status.jobStatus}=SUCCEEDED",
        "pulumi.com/timeoutSeconds": str(STAGE_AWAIT_SECONDS),
    }
    assert STAGE_SUCCEEDED == "SUCCEEDED"
    endpoint = one(result, RAY_SERVICE, "aksray-workloads-llm-serve")
    (serve,) = (w for w in result.settings.workloads if w.name == "llm-serve")
    assert serve.model_source == "blob"
    assert stage.urn in endpoint.depends_on


def test_batch_inference_started_with_the_copy_waits_for_it_too() -> None:
    result = planned("prod+run")
    stage = _stage(result)
    batch = one(result, RAY_JOB, "aksray-workloads-vllm-batch")
    assert stage.urn in batch.depends_on
    # Nothing else waits for the copy: the fine-tunes download from Hugging Face.
    waiting = {
        r.name for r in result.resources if stage.urn in r.depends_on and r.type.startswith("k")
    }
    assert waiting == {"aksray-workloads-llm-serve", "aksray-workloads-vllm-batch"}


def test_without_a_streaming_workload_pulumi_does_not_wait_for_the_copy(tmp_path: Path) -> None:
    def from_the_hub(config: dict[str, object]) -> None:
        workloads = config[P + "workloads"]
        assert isinstance(workloads, dict)
        workloads["llm-serve"]["modelSource"] = "huggingface"

    result = run_program(write_stack(tmp_path, mutated("prod", from_the_hub), "Pulumi.prod.yaml"))
    assert result.ok, result.problems
    stage = _stage(result)
    assert _annotations(stage) == {}
    endpoint = one(result, RAY_SERVICE, "aksray-workloads-llm-serve")
    assert stage.urn not in endpoint.depends_on
