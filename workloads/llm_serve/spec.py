from workloads.common.layout import MODELS_CONTAINER
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

SPEC = WorkloadSpec(
    name="llm-serve",
    package="llm_serve",
    kind="RayService",
    default_priority="inference",
    head=PodShape(cpu="2", memory="8Gi"),
    workers=(WorkerGroup("gpu", 1, PodShape(cpu="8", memory="64Gi", gpus=1)),),
    # Without the adapter the endpoint serves the base model and needs no Blob at all.
    containers=(),
    options=frozenset({"loraAdapter", "modelSource", "minReplicas", "maxReplicas"}),
    description="OpenAI-compatible vLLM endpoint on Ray Serve (build_openai_app)",
    reads_adapter=True,
    model_containers=(MODELS_CONTAINER,),
    # Ray's own `ray.serve.llm:build_openai_app` is the application: no payload code to ship.
    shared_packages=(),
)
