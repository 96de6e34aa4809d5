"""The order between `model-stage` and the workloads that stream the copy it makes.

`vllm-batch` and `llm-serve` with `modelSource: blob` read the base model from
`models/hf/<model>/<revision>/` in Blob (manifests/ray.py `model_path`), which only
`model-stage` writes. When one `pulumi up`
submits both, the staging RayJob carries Pulumi's wait annotations (the Kubernetes provider
then reports it created only once KubeRay says the job succeeded) and the streaming workloads
are created after it. A copy that fails, or is still queued when the wait runs out, fails the
`pulumi up` at the staging job and nothing that streams is created.
"""

from __future__ import annotations

from typing import Any, Final

# KubeRay's RayJob `status.jobStatus` once the Ray job itself succeeded (a failed one is FAILED,
# and its jobDeploymentStatus Failed, so the wait never ends early on a failure).
STAGE_SUCCEEDED: Final = "SUCCEEDED"
# How long `pulumi up` waits for the copy: Kueue's admission on the CPU pool, a node scale-up,
# and about 15 GB from the Hugging Face Hub to Blob.
STAGE_AWAIT_SECONDS: Final = 3600


def awaited_until_staged(job: dict[str, Any]) -> dict[str, Any]:
    """The staging RayJob, with the annotations that make Pulumi wait for its success."""
    metadata = dict(job["metadata"])
    metadata["annotations"] = {
        **metadata.get("annotations", {}),
        "pulumi.com/waitFor": f"jsonpath={{.status.jobStatus}}={STAGE_SUCCEEDED}",
        "pulumi.com/timeoutSeconds": str(STAGE_AWAIT_SECONDS),
    }
    return {**job, "metadata": metadata}
