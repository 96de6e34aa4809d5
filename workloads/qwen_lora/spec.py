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
    # Each DDP worker holds the whole 7.6B-parameter model in bf16 (15.2 GB), plus the LoRA
    # weights' gradients and Adam states (rank 16, well under 1 GB) and, with LLaMA-Factory's
    # gradient checkpointing, a 2048-token sequence's activations and fp32 logits over the
    # 152k-token vocabulary (about 3 GB): about 19 GB, more than a 16 GB T4 holds.
    gpu_memory_gb=20,
)
