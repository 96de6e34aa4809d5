from workloads.common.layout import MODELS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="llm-serve",
    package="llm_serve",
    kind="RayService",
    default_priority="inference",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(
        WorkerGroup(
            "gpu",
            1,
            PodShape(cpu="8", memory="64Gi", gpus=1),
            minimum_why="vLLM's engine process, the Serve replica and its proxy need 8 CPUs; "
            "64Gi holds the model's weights in host memory while they load onto the GPU",
        ),
    ),
    # Without the adapter the endpoint serves the base model and needs no Blob at all.
    containers=(),
    options=frozenset({"loraAdapter", "modelSource", "minReplicas", "maxReplicas"}),
    description="OpenAI-compatible vLLM endpoint on Ray Serve (build_openai_app)",
    adapter_containers=(MODELS_CONTAINER,),
    model_containers=(MODELS_CONTAINER,),
    # Ray's own `ray.serve.llm:build_openai_app` is the application: no payload code to ship.
    shared_packages=(),
    # vLLM serves Qwen2.5-7B-Instruct in bf16 (15.2 GB) on one GPU (tensor_parallel_size 1) and
    # needs the KV cache of at least one 8192-token sequence (0.5 GB) plus activations and CUDA
    # graphs within gpu_memory_utilization 0.9 of the GPU: about 20 GB; a 16 GB T4 cannot load it.
    gpu_memory_gb=20,
)
