from workloads.common.layout import CHECKPOINTS_CONTAINER, DATASETS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="aurora-finetune",
    package="aurora_finetune",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(
        WorkerGroup(
            "gpu",
            1,
            PodShape(cpu="8", memory="64Gi", gpus=1),
            minimum_why="4 CPUs for the training task (its bundle: data loading) and 4 for Ray and "
            "the Blob reads; 64Gi for Aurora's checkpoint and ERA5 batches in host memory",
        ),
    ),
    containers=(DATASETS_CONTAINER, CHECKPOINTS_CONTAINER),
    description="Microsoft Aurora fine-tuned with LoRA on one GPU",
    entrypoint_module="workloads.aurora_finetune.main",
    # Aurora's fine-tuning guide: gradients of the pretrained 1.3B-parameter model fit on an
    # 80 GB A100, and only with bfloat16 autocast and activation checkpointing (train.py turns
    # both on); a smaller GPU runs out of memory in the first backward pass.
    gpu_memory_gb=80,
)
