from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="qwen-lora",
    package="qwen_lora",
    kind="RayJob",
    default_priority="train",
    head=PodShape(cpu="2", memory="8Gi"),
    # A gang of `workers` one-GPU pods; the count is a stack option (default 4).
    workers=(WorkerGroup("gpu", 4, PodShape(cpu="8", memory="64Gi", gpus=1)),),
    containers=("datasets", "models"),
    options=frozenset({"workers"}),
    description="Qwen2.5-7B-Instruct LoRA SFT with LLaMA-Factory on Ray workers",
)
