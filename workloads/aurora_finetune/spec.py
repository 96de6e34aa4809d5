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
)
