from workloads.common.layout import DATASETS_CONTAINER, MODELS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="vllm-batch",
    package="vllm_batch",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(WorkerGroup("gpu", 1, PodShape(cpu="8", memory="64Gi", gpus=1)),),
    # Prompts are read from `datasets`, results written to the team's own container.
    containers=(DATASETS_CONTAINER,),
    team_container_option="--output-container",
    options=frozenset({"loraAdapter", "modelSource", "minWorkers", "maxWorkers"}),
    description="ray.data.llm batch inference with the LoRA adapter from Blob",
    entrypoint_module="workloads.vllm_batch.main",
    reads_adapter=True,
    model_containers=(MODELS_CONTAINER,),
)
