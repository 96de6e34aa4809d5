from workloads.common.layout import DATASETS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="aurora-finetune",
    package="aurora_finetune",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(WorkerGroup("gpu", 1, PodShape(cpu="8", memory="64Gi", gpus=1)),),
    containers=(DATASETS_CONTAINER,),
    team_container_option="--checkpoint-container",
    description="Microsoft Aurora fine-tuned with LoRA on one GPU",
    entrypoint_module="workloads.aurora_finetune.main",
)
