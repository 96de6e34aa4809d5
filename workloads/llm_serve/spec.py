from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="llm-serve",
    package="llm_serve",
    kind="RayService",
    default_priority="inference",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(WorkerGroup("gpu", 1, PodShape(cpu="8", memory="64Gi", gpus=1)),),
    containers=("models",),
    description="OpenAI-compatible vLLM endpoint on Ray Serve (build_openai_app)",
)
