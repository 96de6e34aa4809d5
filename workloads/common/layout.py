"""The Blob layout the payloads share: container names, each team's own container and where the
LoRA adapter lives.

Two kinds of containers:

- Shared, read by every team, written by none of their jobs (`storage.containers`, default
  `datasets` and `models`): training data and prompts that people upload to `datasets`, and the
  base models model-stage copies to `models`. model-stage's team is the one team allowed to
  write `models` (it stages for everyone).
- One per team, `<team>-data`, which only that team's identity may write (and only the teams
  whose workloads read what it writes may read): everything a team's jobs produce.

Inside a team's container:

    checkpoints/<workload>/<run-id>/          aurora-finetune's LoRA weights and metrics
    adapters/<ADAPTER_WORKLOAD>/<ADAPTER_NAME>/  qwen-lora's adapter (adapter_config.json,
                                              adapter_model.safetensors, ...)
    results/<workload>/<run-id>/              vllm-batch's outputs

model-stage copies the base model's weights and tokenizer from Hugging Face to
`models/<STAGED_MODELS_PREFIX>/<model id>/<revision>/` once; vllm-batch and llm-serve stream them
from there (`modelSource: blob`). vllm-batch and llm-serve load the adapter from the container of
the team that runs qwen-lora: `adapters/<ADAPTER_WORKLOAD>` there is Ray LLM's
`dynamic_lora_loading_path` (one adapter per subfolder). The program reads the same names (the
payload specs, the Serve config, the grants of settings/blob_access.py).
"""

from __future__ import annotations

from typing import Final

DATASETS_CONTAINER: Final = "datasets"
MODELS_CONTAINER: Final = "models"
# The suffix that makes a team's name its own container's name.
TEAM_CONTAINER_SUFFIX: Final = "-data"

BASE_MODEL: Final = "Qwen/Qwen2.5-7B-Instruct"
ADAPTER_WORKLOAD: Final = "qwen-lora"
ADAPTER_PREFIX: Final = f"adapters/{ADAPTER_WORKLOAD}"
ADAPTER_NAME: Final = "aksray-sft"
# Folders of a team's container (payload defaults: the program passes only the container).
CHECKPOINTS_FOLDER: Final = "checkpoints"
RESULTS_FOLDER: Final = "results"

# Where model-stage puts a Hugging Face model in the models container: one folder per model id
# and revision, so a new revision is a new copy and a staged one is never overwritten.
STAGED_MODELS_PREFIX: Final = "hf"


def team_container(team: str) -> str:
    """The team's own container: `<team>-data`."""
    return f"{team}{TEAM_CONTAINER_SUFFIX}"


def staged_model_path(model: str, revision: str) -> str:
    """`hf/<model id>/<revision>`: the staged copy's folder in the models container."""
    return f"{STAGED_MODELS_PREFIX}/{model.strip('/')}/{revision}"
