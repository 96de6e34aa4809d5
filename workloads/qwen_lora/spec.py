from workloads.common.layout import DATASETS_CONTAINER, MODELS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="qwen-lora",
    package="qwen_lora",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    # A gang of `workers` one-GPU pods; the count is a stack option (default 4). The payload
    # reserves all but one of a worker's CPUs per training worker (launch.py).
    workers=(
        WorkerGroup(
            "gpu",
            4,
            PodShape(cpu="11", memory="96Gi", gpus=1),
            minimum_why="10 CPUs for LLaMA-Factory's worker (its launcher's reservation: "
            "tokenizer and data-loader processes) and 1 for the staging and upload tasks; 96Gi "
            "because every rank loads the 7B model's bf16 weights (15 GB) into host memory "
            "before the GPU, beside the tokenized dataset and pinned optimizer buffers",
        ),
    ),
    containers=(DATASETS_CONTAINER, MODELS_CONTAINER),
    options=frozenset({"workers"}),
    description="Qwen2.5-7B-Instruct LoRA SFT with LLaMA-Factory on Ray workers",
    entrypoint_module="workloads.qwen_lora.main",
)
