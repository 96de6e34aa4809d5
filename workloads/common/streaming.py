"""Loading the base model from Blob with the Run:ai Model Streamer: the engine settings both
vllm-batch and llm-serve pass to vLLM, in one place.

vLLM 0.26 (the Ray image's) reads `az://<container>/<path>` through the streamer: it pulls the
config and tokenizer files to a local folder, then streams the `*.safetensors` weights straight
to the GPU, with the account from `AZURE_STORAGE_ACCOUNT_NAME` and `DefaultAzureCredential` (the
pod's workload identity). Ray LLM 2.58 passes an `az://` model source to vLLM unchanged and,
for a streaming load format, downloads nothing itself. (It would treat an `azure://` source as
a mirror and, streaming, download nothing and hand vLLM the bare model id: so `az://` it is.)
"""

from __future__ import annotations

from typing import Any, Final

from workloads.common import blob
from workloads.common.layout import MODELS_CONTAINER

LOAD_FORMAT: Final = "runai_streamer"
# The streamer's CPU staging buffer, capped well below the GPU worker's memory limit (its
# default is unlimited: a 15 GB model would be buffered whole).
MEMORY_LIMIT_BYTES: Final = 8 * 2**30


def engine_kwargs() -> dict[str, Any]:
    """What vLLM's engine needs besides the `az://` model to stream it from Blob."""
    return {
        "load_format": LOAD_FORMAT,
        "model_loader_extra_config": {"memory_limit": MEMORY_LIMIT_BYTES},
    }


def model_uri(path: str) -> str:
    """The staged model for the streamer: `az://models/<path>`."""
    return blob.streamer_uri(MODELS_CONTAINER, path)


def tokenizer_uri(account: str, path: str) -> str:
    """The same folder as Ray LLM's own Blob reader names it, for the CPU-side tokenizer stages
    of ray.data.llm, which load with transformers and cannot read `az://`."""
    return blob.blob_uri(account, MODELS_CONTAINER, path)
