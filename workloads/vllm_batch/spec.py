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
    # vLLM loads Qwen2.5-7B-Instruct in bf16 (15.2 GB) on one GPU and needs the KV cache of at
    # least one max_model_len (8192-token) sequence (0.5 GB) plus activations and CUDA graphs
    # within gpu_memory_utilization 0.9 of the GPU: about 20 GB; a 16 GB T4 cannot load it.
    gpu_memory_gb=20,
    adapter_containers=(MODELS_CONTAINER,),
    model_containers=(MODELS_CONTAINER,),
)
