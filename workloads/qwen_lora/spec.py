from workloads.common.layout import DATASETS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="qwen-lora",
    package="qwen_lora",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    # A gang of `workers` one-GPU pods; the count is a stack option (default 4). The payload
    # reserves {CPU: 10, GPU: 1} per training worker (launch.py), so each pod offers 12 CPUs.
    workers=(WorkerGroup("gpu", 4, PodShape(cpu="12", memory="96Gi", gpus=1)),),
    containers=(DATASETS_CONTAINER,),
    team_container_option="--adapter-container",  # it writes the adapter there
    options=frozenset({"workers"}),
    description="Qwen2.5-7B-Instruct LoRA SFT with LLaMA-Factory on Ray workers",
    entrypoint_module="workloads.qwen_lora.main",
)
