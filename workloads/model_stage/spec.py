from workloads.common.layout import MODELS_CONTAINER
from workloads.spec import PodShape, WorkloadSpec

SPEC = WorkloadSpec(
    name="model-stage",
    package="model_stage",
    kind="RayJob",
    default_priority="train",
    # The copy runs in the job's driver on the head (no Ray task, no GPU): one file at a time
    # from Hugging Face to the head's disk, then streamed to Blob.
    head=PodShape(cpu="1", memory="4Gi"),
    workers=(),
    # It stages the base model for every team: its team writes the shared models container.
    containers=(),
    writes_shared=(MODELS_CONTAINER,),
    options=frozenset({"revision"}),
    description="copies the base model from Hugging Face to Blob once, for streaming",
    entrypoint_module="workloads.model_stage.main",
)
