"""The Blob layout the payloads share: container names and where the LoRA adapter lives.

model-stage copies the base model's weights and tokenizer from Hugging Face to
`models/<STAGED_MODELS_PREFIX>/<model id>/<revision>/` once; vllm-batch and llm-serve stream them
from there (`modelSource: blob`).

qwen-lora writes the adapter to `models/<ADAPTER_PREFIX>/<ADAPTER_NAME>/` (adapter_config.json,
adapter_model.safetensors, ...); vllm-batch and llm-serve load it from there. The folder
`models/<ADAPTER_PREFIX>` is Ray LLM's `dynamic_lora_loading_path` (one adapter per subfolder).
The program reads the same names (the payload specs, the Serve config, the default containers).
"""

from __future__ import annotations

from typing import Final

DATASETS_CONTAINER: Final = "datasets"
CHECKPOINTS_CONTAINER: Final = "checkpoints"
MODELS_CONTAINER: Final = "models"

BASE_MODEL: Final = "Qwen/Qwen2.5-7B-Instruct"
ADAPTER_CONTAINER: Final = MODELS_CONTAINER
ADAPTER_PREFIX: Final = "qwen-lora"
ADAPTER_NAME: Final = "aksray-sft"

# Where model-stage puts a Hugging Face model in the models container: one folder per model id
# and revision, so a new revision is a new copy and a staged one is never overwritten.
STAGED_MODELS_PREFIX: Final = "hf"


def staged_model_path(model: str, revision: str) -> str:
    """`hf/<model id>/<revision>`: the staged copy's folder in the models container."""
    return f"{STAGED_MODELS_PREFIX}/{model.strip('/')}/{revision}"
