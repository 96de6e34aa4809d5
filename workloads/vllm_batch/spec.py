from workloads.common.layout import DATASETS_CONTAINER, MODELS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="vllm-batch",
    package="vllm_batch",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(
        WorkerGroup(
            "gpu",
            1,
            PodShape(cpu="8", memory="64Gi", gpus=1),
            minimum_why="vLLM's engine, its tokenizer and Ray Data's CPU stages need 8 CPUs; "
            "64Gi holds the model's weights in host memory while they load onto the GPU",
        ),
    ),
    # Prompts are read from and results written to `datasets`.
    containers=(DATASETS_CONTAINER,),
    options=frozenset({"loraAdapter", "modelSource", "minWorkers", "maxWorkers"}),
    description="ray.data.llm batch inference with the LoRA adapter from Blob",
    entrypoint_module="workloads.vllm_batch.main",
    adapter_containers=(MODELS_CONTAINER,),
    model_containers=(MODELS_CONTAINER,),
)
