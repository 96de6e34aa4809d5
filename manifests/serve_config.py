"""The Serve config of the OpenAI-compatible endpoint: one Ray LLM application whose replicas
Serve's autoscaler steers between the endpoint's minimum and maximum GPU workers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import yaml

from manifests.ray import runtime_env
from manifests.ray_pods import SERVE_PORT
from workloads.common import streaming
from workloads.common.layout import ADAPTER_PREFIX, BASE_MODEL

# Ongoing requests per replica Serve's autoscaler steers to. Ray LLM's own default (1e9) never
# scales on load; a 7B model on one GPU keeps latency near its best up to a few dozen
# concurrent sequences, well inside vLLM's batch.
TARGET_ONGOING_REQUESTS: Final = 32
SERVE_APP_NAME: Final = "llm"
SERVE_MODEL_ID: Final = "qwen2.5-7b-instruct"


def adapter_uri(storage_account: str, container: str) -> str:
    """Where Ray LLM finds adapters: one subfolder per adapter (`azure://` as Ray LLM reads it),
    in `container`, the container of the team that runs qwen-lora."""
    return f"azure://{container}@{storage_account}.blob.core.windows.net/{ADAPTER_PREFIX}"


def deployment_config(replicas: tuple[int, int]) -> dict[str, Any]:
    """Serve's deployment config: a fixed number of replicas, or autoscaling between the two."""
    low, high = replicas
    if high <= low:
        return {"num_replicas": low}
    return {
        "autoscaling_config": {
            "min_replicas": low,
            "max_replicas": high,
            "target_ongoing_requests": TARGET_ONGOING_REQUESTS,
        }
    }


def llm_config(
    *,
    lora_adapter: bool,
    storage_account: str | None,
    model_blob_path: str | None = None,
    replicas: tuple[int, int] = (1, 1),
    adapter_container: str | None = None,
) -> dict[str, Any]:
    """One `ray.serve.llm.LLMConfig`, as the dict `build_openai_app` validates."""
    engine_kwargs: dict[str, Any] = {"max_model_len": 8192, "tensor_parallel_size": 1}
    source = BASE_MODEL
    if model_blob_path is not None:
        source = streaming.model_uri(model_blob_path)
        engine_kwargs.update(streaming.engine_kwargs())
    config: dict[str, Any] = {
        "model_loading_config": {"model_id": SERVE_MODEL_ID, "model_source": source},
        # One replica per GPU worker: the workers Kueue admitted (tensor_parallel_size 1).
        "deployment_config": deployment_config(replicas),
        "engine_kwargs": engine_kwargs,
        # vLLM's request metrics (time to first token, tokens, queue) through Ray's metrics
        # agent, as ray_vllm_*: what the Endpoint dashboard reads (docs/monitoring.md).
        "log_engine_metrics": True,
    }
    if lora_adapter:
        if not storage_account or not adapter_container:
            raise ValueError(
                "the LoRA adapter is read from Blob: a storage account and the adapter's "
                "container are required"
            )
        engine_kwargs.update(enable_lora=True, max_lora_rank=64, max_loras=4)
        config["lora_config"] = {
            "dynamic_lora_loading_path": adapter_uri(storage_account, adapter_container),
            "max_num_adapters_per_replica": 4,
        }
    return config


def serve_config(
    *,
    lora_adapter: bool,
    storage_account: str | None,
    requirements: Sequence[str],
    model_blob_path: str | None = None,
    replicas: tuple[int, int] = (1, 1),
    adapter_container: str | None = None,
) -> dict[str, Any]:
    """Ray Serve's config: `ray.serve.llm:build_openai_app` with one LLM, on port 8000."""
    llm = llm_config(
        lora_adapter=lora_adapter,
        storage_account=storage_account,
        model_blob_path=model_blob_path,
        replicas=replicas,
        adapter_container=adapter_container,
    )
    application: dict[str, Any] = {
        "name": SERVE_APP_NAME,
        "route_prefix": "/",
        "import_path": "ray.serve.llm:build_openai_app",
        "args": {"llm_configs": [llm]},
    }
    if requirements:
        application["runtime_env"] = runtime_env(requirements)
    return {"http_options": {"host": "0.0.0.0", "port": SERVE_PORT}, "applications": [application]}  # noqa: S104


def serve_config_v2(**options: Any) -> str:
    """`serve_config(**options)` as the YAML string KubeRay's `serveConfigV2` takes."""
    return yaml.safe_dump(serve_config(**options), sort_keys=False)
