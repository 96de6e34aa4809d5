"""Every payload the platform knows, by its config key."""

from __future__ import annotations

from typing import Final

from workloads.aurora_finetune.spec import SPEC as AURORA_FINETUNE
from workloads.llm_serve.spec import SPEC as LLM_SERVE
from workloads.qwen_lora.spec import SPEC as QWEN_LORA
from workloads.spec import WorkloadSpec
from workloads.vllm_batch.spec import SPEC as VLLM_BATCH

WORKLOADS: Final[dict[str, WorkloadSpec]] = {
    spec.name: spec for spec in (AURORA_FINETUNE, QWEN_LORA, VLLM_BATCH, LLM_SERVE)
}
